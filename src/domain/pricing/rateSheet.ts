/**
 * The rate sheet: what an account prices from. The shape is the contract's RateSheet schema;
 * this module holds the documented default and the rules a sheet must keep beyond its shape.
 */
import type { components } from '../../../generated/api.d.ts';
import { centsText, thousandthsText } from './decimalText.ts';
import { hasAtMostDecimals, multiplyDivideHalfUp, toScaled } from './units.ts';

export type RateSheet = components['schemas']['RateSheet'];

export interface SheetIssue {
  pointer: string;
  message: string;
}

/** The name the origination fee carries in a quote; flat fees may not take it. */
export const ORIGINATION_FEE_NAME = 'origination';
const MIN_CREDIT_SCORE = 300;
const MAX_CREDIT_SCORE = 850;

/**
 * The sheet of an account that has not set its own (documented in the spec's /v1/pricing and in
 * docs/partners/quotes-and-pricing.md). Prices every whole term from 1 to 40 years.
 */
export const DEFAULT_RATE_SHEET: RateSheet = Object.freeze({
  baseRates: [
    { minTermYears: 1, maxTermYears: 10, rate: 5.75 },
    { minTermYears: 11, maxTermYears: 15, rate: 5.875 },
    { minTermYears: 16, maxTermYears: 20, rate: 6.125 },
    { minTermYears: 21, maxTermYears: 30, rate: 6.5 },
    { minTermYears: 31, maxTermYears: 40, rate: 6.875 },
  ],
  ltvAdjustments: [
    { aboveLtv: 0, upToLtv: 60, adjustment: -0.25 },
    { aboveLtv: 60, upToLtv: 80, adjustment: 0 },
    { aboveLtv: 80, upToLtv: 90, adjustment: 0.25 },
    { aboveLtv: 90, upToLtv: 97, adjustment: 0.5 },
  ],
  creditScoreAdjustments: [
    { minScore: 300, maxScore: 619, adjustment: 1.5 },
    { minScore: 620, maxScore: 679, adjustment: 0.75 },
    { minScore: 680, maxScore: 739, adjustment: 0.25 },
    { minScore: 740, maxScore: 850, adjustment: 0 },
  ],
  maxLtv: 97,
  minAmount: 1000,
  maxAmount: 50000000,
  originationFeePercent: 1,
  flatFees: [
    { name: 'appraisal', amount: 650, prepaidFinanceCharge: false },
    { name: 'underwriting', amount: 495, prepaidFinanceCharge: true },
  ],
  quoteValidityDays: 30,
  lockPeriodDays: 30,
  lockPeriods: [
    { days: 30, rateAdjustment: 0 },
    { days: 45, rateAdjustment: 0.125 },
    { days: 60, rateAdjustment: 0.25 },
  ],
  lockExtensionFeePerDay: 25,
}) as RateSheet;

export { hasAtMostDecimals } from './units.ts';

/**
 * Form problems the schema cannot state reliably: decimal places (JSON Schema's multipleOf is
 * computed in binary floating point, so 0.29 is "not a multiple of 0.01" for Ajv). These are 400s.
 */
export function rateSheetFormIssues(sheet: RateSheet): SheetIssue[] {
  const issues: SheetIssue[] = [];
  const percent = (pointer: string, value: number) => {
    if (!hasAtMostDecimals(value, 3)) issues.push({ pointer, message: 'must have at most three decimals (percent)' });
  };
  const money = (pointer: string, value: number) => {
    if (!hasAtMostDecimals(value, 2)) issues.push({ pointer, message: 'must have at most two decimals (major units)' });
  };
  sheet.baseRates.forEach((band, k) => percent(`/baseRates/${k}/rate`, band.rate));
  sheet.ltvAdjustments.forEach((band, k) => {
    percent(`/ltvAdjustments/${k}/aboveLtv`, band.aboveLtv);
    percent(`/ltvAdjustments/${k}/upToLtv`, band.upToLtv);
    percent(`/ltvAdjustments/${k}/adjustment`, band.adjustment);
  });
  sheet.creditScoreAdjustments.forEach((band, k) => percent(`/creditScoreAdjustments/${k}/adjustment`, band.adjustment));
  percent('/maxLtv', sheet.maxLtv);
  percent('/originationFeePercent', sheet.originationFeePercent);
  money('/minAmount', sheet.minAmount);
  money('/maxAmount', sheet.maxAmount);
  sheet.flatFees.forEach((fee, k) => money(`/flatFees/${k}/amount`, fee.amount));
  sheet.lockPeriods?.forEach((period, k) => percent(`/lockPeriods/${k}/rateAdjustment`, period.rateAdjustment));
  if (sheet.lockExtensionFeePerDay !== undefined) money('/lockExtensionFeePerDay', sheet.lockExtensionFeePerDay);
  return issues;
}

/** Business rules of a well-formed sheet (422 when any is broken). Assumes rateSheetFormIssues found nothing. */
export function rateSheetRuleIssues(sheet: RateSheet): SheetIssue[] {
  const issues: SheetIssue[] = [];

  // Term bands: each well ordered, none overlapping. Gaps are allowed: a lender may not offer some terms.
  const terms = sheet.baseRates.map((band, index) => ({ ...band, index }));
  for (const band of terms) {
    if (band.minTermYears > band.maxTermYears) {
      issues.push({ pointer: `/baseRates/${band.index}`, message: `minTermYears ${band.minTermYears} is above maxTermYears ${band.maxTermYears}` });
    }
  }
  const sortedTerms = [...terms].sort((x, y) => x.minTermYears - y.minTermYears);
  for (let k = 1; k < sortedTerms.length; k++) {
    const prev = sortedTerms[k - 1]!;
    const band = sortedTerms[k]!;
    if (band.minTermYears <= prev.maxTermYears) {
      issues.push({
        pointer: `/baseRates/${band.index}`,
        message: `overlaps /baseRates/${prev.index} (${prev.minTermYears}–${prev.maxTermYears} years)`,
      });
    }
  }

  // LTV bands: in order, from 0, contiguous, up to at least maxLtv.
  sheet.ltvAdjustments.forEach((band, k) => {
    const pointer = `/ltvAdjustments/${k}`;
    if (!(band.upToLtv > band.aboveLtv)) issues.push({ pointer, message: `upToLtv ${band.upToLtv} must be above aboveLtv ${band.aboveLtv}` });
    if (k === 0) {
      if (band.aboveLtv !== 0) issues.push({ pointer: `${pointer}/aboveLtv`, message: 'the first LTV band must start at 0' });
      return;
    }
    const prev = sheet.ltvAdjustments[k - 1]!;
    if (band.aboveLtv > prev.upToLtv) {
      issues.push({ pointer: `${pointer}/aboveLtv`, message: `leaves a gap after ${prev.upToLtv} (the previous band's upToLtv)` });
    } else if (band.aboveLtv < prev.upToLtv) {
      issues.push({ pointer: `${pointer}/aboveLtv`, message: `overlaps the previous band, which goes up to ${prev.upToLtv}` });
    }
  });
  const lastLtv = sheet.ltvAdjustments.at(-1);
  if (lastLtv && lastLtv.upToLtv < sheet.maxLtv) {
    issues.push({
      pointer: `/ltvAdjustments/${sheet.ltvAdjustments.length - 1}/upToLtv`,
      message: `the LTV bands must reach maxLtv (${sheet.maxLtv}); they stop at ${lastLtv.upToLtv}`,
    });
  }

  // Credit-score bands: in order, 300 to 850, contiguous.
  sheet.creditScoreAdjustments.forEach((band, k) => {
    const pointer = `/creditScoreAdjustments/${k}`;
    if (band.minScore > band.maxScore) issues.push({ pointer, message: `minScore ${band.minScore} is above maxScore ${band.maxScore}` });
    const expectedMin = k === 0 ? MIN_CREDIT_SCORE : sheet.creditScoreAdjustments[k - 1]!.maxScore + 1;
    if (band.minScore > expectedMin) {
      issues.push({ pointer: `${pointer}/minScore`, message: `leaves scores ${expectedMin}–${band.minScore - 1} without a band` });
    } else if (band.minScore < expectedMin) {
      issues.push({ pointer: `${pointer}/minScore`, message: `overlaps the previous band; this band must start at ${expectedMin}` });
    }
  });
  const lastScore = sheet.creditScoreAdjustments.at(-1);
  if (lastScore && lastScore.maxScore < MAX_CREDIT_SCORE) {
    issues.push({
      pointer: `/creditScoreAdjustments/${sheet.creditScoreAdjustments.length - 1}/maxScore`,
      message: `leaves scores ${lastScore.maxScore + 1}–${MAX_CREDIT_SCORE} without a band`,
    });
  }

  // No rate a quote can get is negative: the lowest base rate plus the lowest adjustments, in
  // thousandths of a point (exact: the form check allowed at most three decimals).
  const lowest = (values: number[]) => values.reduce((min, v) => Math.min(min, toScaled(v, 3)), 0);
  const lowestLtv = lowest(sheet.ltvAdjustments.map((b) => b.adjustment));
  const lowestScore = lowest(sheet.creditScoreAdjustments.map((b) => b.adjustment));
  sheet.baseRates.forEach((band, k) => {
    const worst = toScaled(band.rate, 3) + lowestLtv + lowestScore;
    if (worst < 0) {
      issues.push({
        pointer: `/baseRates/${k}/rate`,
        message: `with the lowest LTV and credit-score adjustments gives a negative rate (${thousandthsText(worst)} %)`,
      });
    }
  });

  if (sheet.minAmount > sheet.maxAmount) {
    issues.push({ pointer: '/minAmount', message: `is above maxAmount (${sheet.maxAmount})` });
  }

  const seen = new Set<string>();
  sheet.flatFees.forEach((fee, k) => {
    if (fee.name === ORIGINATION_FEE_NAME) {
      issues.push({ pointer: `/flatFees/${k}/name`, message: `"${ORIGINATION_FEE_NAME}" is reserved for the origination fee` });
    } else if (seen.has(fee.name)) {
      issues.push({ pointer: `/flatFees/${k}/name`, message: `repeats the fee name "${fee.name}"` });
    }
    seen.add(fee.name);
  });

  const lockDays = new Set<number>();
  sheet.lockPeriods?.forEach((period, k) => {
    if (lockDays.has(period.days)) issues.push({ pointer: `/lockPeriods/${k}/days`, message: `repeats the lock period of ${period.days} days` });
    lockDays.add(period.days);
  });

  // The prepaid finance charges must leave something financed on the smallest loan.
  const smallest = toScaled(sheet.minAmount, 2);
  const prepaid = prepaidFinanceChargesCents(sheet, smallest);
  if (prepaid >= smallest) {
    issues.push({
      pointer: '/flatFees',
      message: `the prepaid finance charges (${centsText(prepaid)}) consume the whole of a minAmount loan (${centsText(smallest)})`,
    });
  }
  return issues;
}

/** The prepaid finance charges of a loan in cents: the origination fee (half-up to the cent) and the prepaid flat fees. */
function prepaidFinanceChargesCents(sheet: RateSheet, amountCents: number): number {
  let prepaid = multiplyDivideHalfUp(amountCents, toScaled(sheet.originationFeePercent, 3), 100_000);
  for (const fee of sheet.flatFees) if (fee.prepaidFinanceCharge) prepaid += toScaled(fee.amount, 2);
  return prepaid;
}
