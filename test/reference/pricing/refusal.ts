/**
 * THE PRICING ORACLE (one of its files; see ./quote.ts): the messages a pricing refusal gave, as
 * src/services/pricing.ts wrote them from the oracle's decimals before issue 26. Only tests import
 * it. Frozen: do not optimise it.
 */
import type { Decimal } from './decimal.ts';
import type { PricingRefusal } from './quote.ts';

export interface RefusalProblem {
  code: string;
  detail: string;
  errors: Array<{ pointer: string; message: string }>;
}

function formatMoney(value: Decimal): string {
  const [whole = '0', cents = '00'] = value.toFixed(2).split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}

/** The code, detail and pointers of the problem a refusal became. */
export function refusalProblem(refusal: PricingRefusal): RefusalProblem {
  switch (refusal.kind) {
    case 'form':
      return { code: 'validation_failed', detail: `${refusal.pointer} ${refusal.message}`, errors: [{ pointer: refusal.pointer, message: refusal.message }] };
    case 'amount_out_of_bounds':
      return {
        code: 'amount_out_of_bounds',
        detail: `amount must be from ${formatMoney(refusal.min)} to ${formatMoney(refusal.max)}; got ${formatMoney(refusal.amount)}.`,
        errors: [{ pointer: '/amount', message: `must be from ${refusal.min.toFixed(2)} to ${refusal.max.toFixed(2)}` }],
      };
    case 'term_not_priced':
      return {
        code: 'term_not_priced',
        detail: `A term of ${refusal.term} years is not priced by this account's rate sheet; priced terms: ${refusal.pricedTerms}.`,
        errors: [{ pointer: '/term', message: `is not priced (years); priced terms: ${refusal.pricedTerms}` }],
      };
    case 'ltv_above_maximum':
      return {
        code: 'ltv_above_maximum',
        detail: `The loan-to-value ratio ${refusal.ltv.toString()} % is above this account's maximum of ${refusal.maxLtv.toString()} %.`,
        errors: [{ pointer: '/propertyValue', message: `gives an LTV of ${refusal.ltv.toString()} %, above the maximum ${refusal.maxLtv.toString()} %` }],
      };
  }
}
