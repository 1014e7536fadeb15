/**
 * THE PRICING ORACLE (one of its files; see ./quote.ts): the two rate-sheet rules that computed in
 * decimal.js before issue 26, as src/domain/pricing/rateSheet.ts had them (the issues they add,
 * in order). Only tests import it. Frozen: do not optimise it.
 */
import type { RateSheet, SheetIssue } from '../../../src/domain/pricing/rateSheet.ts';
import { Dec, type Decimal } from './decimal.ts';
import { originationFee } from './quote.ts';

/** No rate a quote can get is negative: the lowest base rate plus the lowest adjustments. */
export function negativeRateIssues(sheet: RateSheet): SheetIssue[] {
  const issues: SheetIssue[] = [];
  const lowest = (values: number[]) => values.reduce((min, v) => Dec.min(min, new Dec(v)), new Dec(0));
  const lowestLtv = lowest(sheet.ltvAdjustments.map((b) => b.adjustment));
  const lowestScore = lowest(sheet.creditScoreAdjustments.map((b) => b.adjustment));
  sheet.baseRates.forEach((band, k) => {
    const worst = new Dec(band.rate).plus(lowestLtv).plus(lowestScore);
    if (worst.isNegative()) {
      issues.push({
        pointer: `/baseRates/${k}/rate`,
        message: `with the lowest LTV and credit-score adjustments gives a negative rate (${worst.toString()} %)`,
      });
    }
  });
  return issues;
}

/** The prepaid finance charges must leave something financed on the smallest loan. */
export function prepaidChargeIssues(sheet: RateSheet): SheetIssue[] {
  const smallest = new Dec(sheet.minAmount);
  const prepaid: Decimal = sheet.flatFees
    .filter((fee) => fee.prepaidFinanceCharge)
    .reduce((sum, fee) => sum.plus(fee.amount), originationFee(sheet, smallest));
  if (!prepaid.greaterThanOrEqualTo(smallest)) return [];
  return [
    {
      pointer: '/flatFees',
      message: `the prepaid finance charges (${prepaid.toFixed(2)}) consume the whole of a minAmount loan (${smallest.toFixed(2)})`,
    },
  ];
}
