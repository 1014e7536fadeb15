/**
 * THE PRICING ORACLE: the decimal.js pricing as it stood before issue 17 (this file, ./amortization.ts,
 * ./apr.ts, ./decimal.ts, and the messages of ./refusal.ts and ./rateSheetRules.ts). It is the
 * only decimal implementation left: production prices in integers (src/domain/pricing/), and every
 * figure, schedule row and message it states must equal this oracle's, bit for bit
 * (test/unit/domain/pricing/). Frozen: do not optimise it.
 *
 * Prices a loan from a rate sheet: the rate (base by term, adjusted by LTV and credit-score band),
 * the payment and schedule totals, the fees, the amount financed and the APR. Pure: the caller
 * supplies the sheet; refusals come back as values for the service to turn into 400/422 problems.
 */
import { amortizationSummary, monthlyPayment } from './amortization.ts';
import { solveApr, type PaymentRun } from './apr.ts';
import { Dec, HUNDRED, ZERO, toPercentPlaces, type Decimal } from './decimal.ts';
import { ORIGINATION_FEE_NAME, type RateSheet } from '../../../src/domain/pricing/rateSheet.ts';

/** True when a JSON number has at most `places` decimals (checked on its exact decimal form). */
export function hasAtMostDecimals(value: number, places: number): boolean {
  return Number.isFinite(value) && new Dec(value).decimalPlaces() <= places;
}

/** The origination fee of a loan amount: the sheet's percentage, rounded half-up to the cent. */
export function originationFee(sheet: RateSheet, amount: Decimal): Decimal {
  return amount.times(sheet.originationFeePercent).div(100).toDecimalPlaces(2, Dec.ROUND_HALF_UP);
}

export interface LoanRequest {
  /** Major units, at most two decimals. */
  amount: number;
  /** Whole years. */
  term: number;
  propertyValue?: number | null;
  creditScore?: number | null;
}

interface PricedFee {
  name: string;
  amount: Decimal;
  prepaidFinanceCharge: boolean;
}

/** Every figure of a priced loan, exact decimals (money to the cent, percentages to 0.001). */
interface PricedLoan {
  amount: Decimal;
  term: number;
  propertyValue: Decimal | null;
  creditScore: number | null;
  interestRate: Decimal;
  apr: Decimal;
  monthlyPayment: Decimal;
  numberOfPayments: number;
  finalPayment: Decimal;
  totalInterest: Decimal;
  totalOfPayments: Decimal;
  fees: PricedFee[];
  amountFinanced: Decimal;
  financeCharge: Decimal;
  ltv: Decimal | null;
  lockPeriodDays: number;
  quoteValidityDays: number;
}

/** Why a request cannot be priced. `form` refusals are 400s (with a pointer); the others 422s. */
export type PricingRefusal =
  | { kind: 'form'; pointer: string; message: string }
  | { kind: 'amount_out_of_bounds'; amount: Decimal; min: Decimal; max: Decimal }
  | { kind: 'term_not_priced'; term: number; pricedTerms: string }
  | { kind: 'ltv_above_maximum'; ltv: Decimal; maxLtv: Decimal };

export type PricingOutcome = { ok: true; loan: PricedLoan } | { ok: false; refusal: PricingRefusal };

/** The validated request and the rate the sheet gives it: everything before the payment figures. */
interface NoteRate {
  amount: Decimal;
  term: number;
  propertyValue: Decimal | null;
  creditScore: number | null;
  /** Percent, unrounded sum of the base rate and its adjustments. */
  rate: Decimal;
  ltv: Decimal | null;
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

/** Loan-to-value in percent, half-up to three decimals. */
function loanToValue(amount: Decimal, propertyValue: Decimal): Decimal {
  return toPercentPlaces(amount.div(propertyValue).times(HUNDRED));
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

  const amount = new Dec(request.amount);
  const min = new Dec(sheet.minAmount);
  const max = new Dec(sheet.maxAmount);
  if (amount.lessThan(min) || amount.greaterThan(max)) return refuse({ kind: 'amount_out_of_bounds', amount, min, max });

  const termBand = sheet.baseRates.find((b) => b.minTermYears <= request.term && request.term <= b.maxTermYears);
  if (!termBand) return refuse({ kind: 'term_not_priced', term: request.term, pricedTerms: describeTerms(sheet) });

  let rate = new Dec(termBand.rate);
  let ltv: Decimal | null = null;
  const propertyValue = hasProperty ? new Dec(request.propertyValue!) : null;
  if (propertyValue) {
    ltv = loanToValue(amount, propertyValue);
    const maxLtv = new Dec(sheet.maxLtv);
    if (ltv.greaterThan(maxLtv)) return refuse({ kind: 'ltv_above_maximum', ltv, maxLtv });
    const current = ltv;
    // Bands are contiguous from 0 (checked when the sheet was saved); the first also takes 0.
    const band = sheet.ltvAdjustments.find((b) => current.lessThanOrEqualTo(b.upToLtv));
    if (band) rate = rate.plus(band.adjustment);
  }
  const creditScore = hasScore ? request.creditScore! : null;
  if (creditScore !== null) {
    const band = sheet.creditScoreAdjustments.find((b) => b.minScore <= creditScore && creditScore <= b.maxScore);
    if (band) rate = rate.plus(band.adjustment);
  }
  if (rate.isNegative()) rate = ZERO; // unreachable for a sheet that passed its rules; never quote below 0
  return { ok: true, note: { amount, term: request.term, propertyValue, creditScore, rate, ltv } };
}

/** The monthly payment alone (what underwriting needs for debt-to-income), without fees, schedule or APR. */
export function monthlyPaymentFromSheet(sheet: RateSheet, request: LoanRequest): { ok: true; monthlyPayment: Decimal } | { ok: false; refusal: PricingRefusal } {
  const outcome = noteRateFromSheet(sheet, request);
  if (!outcome.ok) return outcome;
  return { ok: true, monthlyPayment: monthlyPayment(outcome.note.amount, outcome.note.rate, outcome.note.term) };
}

export function priceLoanFromSheet(sheet: RateSheet, request: LoanRequest): PricingOutcome {
  const outcome = noteRateFromSheet(sheet, request);
  if (!outcome.ok) return outcome;
  const { amount, rate, ltv, propertyValue, creditScore } = outcome.note;

  const summary = amortizationSummary(amount, rate, request.term);
  const fees: PricedFee[] = [
    { name: ORIGINATION_FEE_NAME, amount: originationFee(sheet, amount), prepaidFinanceCharge: true },
    ...sheet.flatFees.map((fee) => ({ name: fee.name, amount: new Dec(fee.amount), prepaidFinanceCharge: fee.prepaidFinanceCharge })),
  ];
  const prepaid = fees.filter((f) => f.prepaidFinanceCharge).reduce((sum, f) => sum.plus(f.amount), ZERO);
  const amountFinanced = amount.minus(prepaid);

  const runs: PaymentRun[] = [
    { amount: summary.monthlyPayment, count: summary.numberOfPayments - 1 },
    { amount: summary.lastPayment, count: 1 },
  ];
  // The note rate is a lower bound of the APR here (prepaid finance charges are never negative).
  const { apr } = solveApr(amountFinanced, runs, rate.div(1200));

  return {
    ok: true,
    loan: {
      amount,
      term: request.term,
      propertyValue,
      creditScore,
      interestRate: toPercentPlaces(rate),
      apr,
      monthlyPayment: summary.monthlyPayment,
      numberOfPayments: summary.numberOfPayments,
      finalPayment: summary.lastPayment,
      totalInterest: summary.totalInterest,
      totalOfPayments: summary.totalOfPayments,
      fees,
      amountFinanced,
      financeCharge: summary.totalInterest.plus(prepaid),
      ltv,
      lockPeriodDays: sheet.lockPeriodDays,
      quoteValidityDays: sheet.quoteValidityDays,
    },
  };
}
