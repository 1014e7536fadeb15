/**
 * Prices a loan from a rate sheet: the rate (base by term, adjusted by LTV and credit-score band),
 * the payment and schedule totals, the fees, the amount financed and the APR. Pure: the caller
 * supplies the sheet; refusals come back as values for the service to turn into 400/422 problems.
 *
 * Every figure is computed in scaled integers (money in cents, percentages in thousandths of a
 * point: units.ts), the APR in binary floating point with the same search in integer fixed point
 * deciding near a rounding boundary (apr.ts, aprFixedPoint.ts). Each published figure equals the
 * decimal.js pricing this replaced, bit for bit: a property test over the whole input space
 * compares them (test/unit/domain/pricing/oracle.test.ts against the oracle, test/reference/pricing/).
 */
import type { components } from '../../../generated/api.d.ts';
import { scheduleTotals, monthlyPaymentCents } from './amortization.ts';
import { aprThousandths } from './apr.ts';
import { ORIGINATION_FEE_NAME, type RateSheet } from './rateSheet.ts';
import { hasAtMostDecimals, multiplyDivideHalfUp, toScaled } from './units.ts';

/** What a loan is priced from: amount (major units, at most two decimals), term (whole years), and the optional facts. */
export type LoanRequest = components['schemas']['QuoteRequest'];

interface PricedFee {
  name: string;
  amountCents: number;
  prepaidFinanceCharge: boolean;
}

/** Every figure of a priced loan, exact: money in integer cents, percentages in thousandths of a point. */
export interface PricedLoan {
  amountCents: number;
  term: number;
  propertyValueCents: number | null;
  creditScore: number | null;
  interestRateThousandths: number;
  aprThousandths: number;
  monthlyPaymentCents: number;
  numberOfPayments: number;
  finalPaymentCents: number;
  totalInterestCents: number;
  totalOfPaymentsCents: number;
  fees: PricedFee[];
  amountFinancedCents: number;
  financeChargeCents: number;
  ltvThousandths: number | null;
  lockPeriodDays: number;
  quoteValidityDays: number;
}

/**
 * Why a request cannot be priced. `form` refusals are 400s (with a pointer); the others 422s.
 * Amounts and the maximum LTV are the JSON numbers as sent or as the sheet holds them (each the
 * decimal of its shortest form: decimalText.ts writes them); the LTV is in thousandths of a point.
 */
export type PricingRefusal =
  | { kind: 'form'; pointer: string; message: string }
  | { kind: 'amount_out_of_bounds'; amount: number; min: number; max: number }
  | { kind: 'term_not_priced'; term: number; pricedTerms: string }
  | { kind: 'ltv_above_maximum'; ltvThousandths: number; maxLtv: number };

export type PricingOutcome = { ok: true; loan: PricedLoan } | { ok: false; refusal: PricingRefusal };

/** The validated request and the rate the sheet gives it: everything before the payment figures. */
interface NoteRate {
  amountCents: number;
  term: number;
  propertyValueCents: number | null;
  creditScore: number | null;
  /** Thousandths of a point: the sum of the base rate and its adjustments (never below 0). */
  rateThousandths: number;
  ltvThousandths: number | null;
}

type NoteRateOutcome = { ok: true; note: NoteRate } | { ok: false; refusal: PricingRefusal };

const refuse = (refusal: PricingRefusal): { ok: false; refusal: PricingRefusal } => ({ ok: false, refusal });

/** The term bands as a caller reads them: "1–10, 11–15 years". */
function describeTerms(sheet: RateSheet): string {
  return [...sheet.baseRates]
    .sort((a, b) => a.minTermYears - b.minTermYears)
    .map((b) => (b.minTermYears === b.maxTermYears ? `${b.minTermYears}` : `${b.minTermYears}–${b.maxTermYears}`))
    .join(', ') + ' years';
}

/**
 * Loan-to-value in thousandths of a point, half-up: amount / propertyValue × 100 to three decimals,
 * i.e. ⌊amount·10^5 / propertyValue + ½⌋ in cents. (The 28-digit decimal quotient this replaced
 * rounds the same: a non-tie lies at least 1 / (2·propertyValue cents) from a half, far beyond its error.)
 */
function loanToValueThousandths(amountCents: number, propertyValueCents: number): number {
  return multiplyDivideHalfUp(amountCents, 100_000, propertyValueCents);
}

/** The origination fee in cents: the sheet's percentage of the amount, rounded half-up to the cent. */
function originationFeeCents(sheet: RateSheet, amountCents: number): number {
  return multiplyDivideHalfUp(amountCents, toScaled(sheet.originationFeePercent, 3), 100_000);
}

/** Checks the request against the sheet and finds its note rate (base by term, LTV and score adjustments). */
function noteRateFromSheet(sheet: RateSheet, request: LoanRequest): NoteRateOutcome {
  if (!Number.isFinite(request.amount) || request.amount <= 0 || !hasAtMostDecimals(request.amount, 2)) {
    return refuse({ kind: 'form', pointer: '/amount', message: 'must be a positive amount with at most two decimals (major units)' });
  }
  if (!Number.isInteger(request.term) || request.term < 1 || request.term > 40) {
    return refuse({ kind: 'form', pointer: '/term', message: 'must be a whole number of years from 1 to 40 (years)' });
  }
  const hasProperty = request.propertyValue !== undefined && request.propertyValue !== null;
  if (hasProperty && (!(request.propertyValue! > 0) || !hasAtMostDecimals(request.propertyValue!, 2))) {
    return refuse({ kind: 'form', pointer: '/propertyValue', message: 'must be a positive amount with at most two decimals (major units)' });
  }
  const hasScore = request.creditScore !== undefined && request.creditScore !== null;
  if (hasScore && (!Number.isInteger(request.creditScore) || request.creditScore! < 300 || request.creditScore! > 850)) {
    return refuse({ kind: 'form', pointer: '/creditScore', message: 'must be a whole number from 300 to 850' });
  }

  // Above 10^10 an amount is beyond any sheet's maxAmount (the schema caps it at 999,999,999.99).
  const amountCents = request.amount < 1e10 ? toScaled(request.amount, 2) : Infinity;
  if (amountCents < toScaled(sheet.minAmount, 2) || amountCents > toScaled(sheet.maxAmount, 2)) {
    return refuse({ kind: 'amount_out_of_bounds', amount: request.amount, min: sheet.minAmount, max: sheet.maxAmount });
  }

  const termBand = sheet.baseRates.find((b) => b.minTermYears <= request.term && request.term <= b.maxTermYears);
  if (!termBand) return refuse({ kind: 'term_not_priced', term: request.term, pricedTerms: describeTerms(sheet) });

  let rate = toScaled(termBand.rate, 3);
  let ltv: number | null = null;
  // Exact cents up to 10^13 (toScaled refuses beyond; the schemas cap a property value at 10^9).
  const propertyValueCents = hasProperty ? toScaled(request.propertyValue!, 2) : null;
  if (propertyValueCents !== null) {
    ltv = loanToValueThousandths(amountCents, propertyValueCents);
    if (ltv > toScaled(sheet.maxLtv, 3)) {
      return refuse({ kind: 'ltv_above_maximum', ltvThousandths: ltv, maxLtv: sheet.maxLtv });
    }
    const current = ltv;
    // Bands are contiguous from 0 (checked when the sheet was saved); the first also takes 0.
    const band = sheet.ltvAdjustments.find((b) => current <= toScaled(b.upToLtv, 3));
    if (band) rate += toScaled(band.adjustment, 3);
  }
  const creditScore = hasScore ? request.creditScore! : null;
  if (creditScore !== null) {
    const band = sheet.creditScoreAdjustments.find((b) => b.minScore <= creditScore && creditScore <= b.maxScore);
    if (band) rate += toScaled(band.adjustment, 3);
  }
  if (rate < 0) rate = 0; // unreachable for a sheet that passed its rules; never quote below 0
  return { ok: true, note: { amountCents, term: request.term, propertyValueCents, creditScore, rateThousandths: rate, ltvThousandths: ltv } };
}

/** The monthly payment alone (what underwriting needs for debt-to-income), without fees, schedule or APR. */
export function monthlyPaymentFromSheet(
  sheet: RateSheet,
  request: LoanRequest,
): { ok: true; monthlyPaymentCents: number } | { ok: false; refusal: PricingRefusal } {
  const outcome = noteRateFromSheet(sheet, request);
  if (!outcome.ok) return outcome;
  const { amountCents, rateThousandths, term } = outcome.note;
  return { ok: true, monthlyPaymentCents: monthlyPaymentCents(amountCents, rateThousandths, term) };
}

export function priceLoanFromSheet(sheet: RateSheet, request: LoanRequest): PricingOutcome {
  const outcome = noteRateFromSheet(sheet, request);
  if (!outcome.ok) return outcome;
  const { amountCents, rateThousandths, ltvThousandths, propertyValueCents, creditScore } = outcome.note;

  const totals = scheduleTotals(amountCents, rateThousandths, request.term);
  const fees: PricedFee[] = [{ name: ORIGINATION_FEE_NAME, amountCents: originationFeeCents(sheet, amountCents), prepaidFinanceCharge: true }];
  for (const fee of sheet.flatFees) fees.push({ name: fee.name, amountCents: toScaled(fee.amount, 2), prepaidFinanceCharge: fee.prepaidFinanceCharge });
  let prepaid = 0;
  for (const fee of fees) if (fee.prepaidFinanceCharge) prepaid += fee.amountCents;
  const amountFinancedCents = amountCents - prepaid;

  // The note rate is a lower bound of the APR here (prepaid finance charges are never negative).
  const apr = aprThousandths(
    {
      amountFinancedCents,
      levelPaymentCents: totals.monthlyPaymentCents,
      levelCount: totals.numberOfPayments - 1,
      lastPaymentCents: totals.lastPaymentCents,
    },
    rateThousandths,
  );

  return {
    ok: true,
    loan: {
      amountCents,
      term: request.term,
      propertyValueCents,
      creditScore,
      interestRateThousandths: rateThousandths,
      aprThousandths: apr,
      monthlyPaymentCents: totals.monthlyPaymentCents,
      numberOfPayments: totals.numberOfPayments,
      finalPaymentCents: totals.lastPaymentCents,
      totalInterestCents: totals.totalInterestCents,
      totalOfPaymentsCents: totals.totalOfPaymentsCents,
      fees,
      amountFinancedCents,
      financeChargeCents: totals.totalInterestCents + prepaid,
      ltvThousandths,
      lockPeriodDays: sheet.lockPeriodDays,
      quoteValidityDays: sheet.quoteValidityDays,
    },
  };
}
