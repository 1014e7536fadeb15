/** The quote calculator: the account's real pricing (payment, APR, fees, schedule), without storing a quote. */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { calculateLoan } from '../../services/pricing.ts';
import { decodeForm } from '../forms.ts';
import { accountOf, formErrors, requireSession } from '../page.ts';
import { render } from '../render.ts';
import { checkContract, requestSchema } from '../validation.ts';

const FIELDS = ['amount', 'term', 'propertyValue', 'creditScore'] as const;

export function quoteRoutes(router: Router, ctx: AppContext): void {
  // A GET form: nothing is stored, and the URL of a result can be kept or shared.
  router.get('quotes', '/quotes', async (koa) => {
    const session = requireSession(koa);
    const form = new URLSearchParams();
    const values: Record<string, string> = {};
    for (const field of FIELDS) {
      const value = koa.query[field];
      if (typeof value === 'string') {
        form.set(`/${field}`, value);
        values[`/${field}`] = value;
      }
    }
    const data = { title: 'Quote calculator', nav: 'quotes' as const, values, errors: {}, message: null, result: null as unknown };
    if (form.size === 0) return render(koa, 'quotes', { ...data, values: { '/amount': '350000', '/term': '30' } });
    try {
      const { body } = decodeForm<{ amount: number; term: number; propertyValue?: number; creditScore?: number }>(form, requestSchema('createQuote'));
      checkContract('createQuote', body);
      data.result = await calculateLoan(ctx, accountOf(session), body);
      render(koa, 'quotes', data);
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      render(koa, 'quotes', { ...data, errors: shown.fields, message: shown.message }, 400);
    }
  });
}
