/**
 * The figures of a Loan Estimate (form H-24, 12 CFR 1026.37) that follow from a fixed-rate loan's
 * terms and a few closing figures: Loan Terms (1026.37(b)), Projected Payments (37(c)), and the
 * Comparisons of page 3 (37(l)): "In 5 Years", the APR and the Total Interest Percentage.
 *
 * Amounts come in as integer cents; the figures go out rounded as 1026.37(o)(4) prescribes:
 * - the loan amount and the monthly principal and interest are not rounded (37(o)(4)(i)(B));
 * - mortgage insurance, escrow and the estimated total monthly payment of the projected payments,
 *   and the In 5 Years amounts, are rounded to the nearest whole dollar (37(o)(4)(i)(A));
 * - the APR and the TIP are rounded to three decimals, trailing zeros dropped (37(o)(4)(ii)): a
 *   JSON number of thousandths carries that without the zeros.
 *
 * "Interest" includes the prepaid interest paid at closing, in In 5 Years (37(l)(1)(i)) and in the
 * TIP (37(l)(3)). The APR is the house's Appendix J search (src/domain/pricing/apr.ts, the same
 * that states a quote's APR) on the amount financed (the loan amount less the prepaid finance
 * charges) and the payments that carry finance charges: principal and interest, and mortgage
 * insurance while it lasts.
 */
import { scheduleRows } from '../pricing/amortization.ts';
import { aprThousandths } from '../pricing/apr.ts';
import { REGULAR_FIRST_PERIOD, solveAprFixedPoint, type FirstPeriod } from '../pricing/aprFixedPoint.ts';
import { multiplyDivideHalfUp } from '../pricing/units.ts';

interface MortgageInsurance {
  /** The monthly premium in cents. */
  monthlyCents: number;
  /** How many of the first payments carry it (until it is scheduled to end). */
  months: number;
}

export interface LoanEstimateInputs {
  amountCents: number;
  /** The note rate in thousandths of a percentage point (3875 for 3.875 %). */
  rateThousandths: number;
  termYears: number;
  /** Total Loan Costs (section D = A + B + C of page 2), in cents. */
  loanCostsCents: number;
  /** The finance charges paid before or at closing (prepaid interest among them), in cents. */
  prepaidFinanceChargesCents: number;
  /** Prepaid interest (section F), in cents; 0 when not known. */
  prepaidInterestCents: number;
  mortgageInsurance: MortgageInsurance | null;
  /** The estimated monthly escrow payment in cents, or null when there is no escrow account (or none is known). */
  escrowMonthlyCents: number | null;
  /**
   * Consummation to the first payment (firstPeriod.ts), when the closing date is known; one
   * month, a regular first period, when it is not.
   */
  firstPeriod?: FirstPeriod;
}

/** One column of Projected Payments: whole dollars but for principal and interest. */
interface ProjectedPaymentColumn {
  fromYear: number;
  toYear: number;
  principalAndInterestCents: number;
  /** Whole dollars; null for "—" (none in these years, or not known). */
  mortgageInsuranceDollars: number | null;
  estimatedEscrowDollars: number | null;
  estimatedTotalMonthlyPaymentDollars: number;
}

export interface LoanEstimateFigures {
  loanAmountCents: number;
  interestRateThousandths: number;
  monthlyPrincipalAndInterestCents: number;
  projectedPayments: ProjectedPaymentColumn[];
  /** In 5 Years: principal, interest, mortgage insurance and loan costs paid through the 60th payment, whole dollars. */
  inFiveYearsTotalPaidDollars: number;
  /** In 5 Years: principal paid off through the 60th payment, whole dollars. */
  inFiveYearsPrincipalPaidOffDollars: number;
  aprThousandths: number;
  totalInterestPercentageThousandths: number;
  /** Exact intermediates, for a reader who checks the rounding. */
  totalInterestCents: number;
  amountFinancedCents: number;
}

const FIVE_YEARS = 60;
const MONTHS_PER_YEAR = 12;

/** Cents to the nearest whole dollar, half-up (every figure here is ≥ 0). */
function wholeDollars(cents: number): number {
  return multiplyDivideHalfUp(cents, 1, 100);
}

function checkWholeCents(name: string, value: number, min = 0): void {
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be whole cents ≥ ${min}, got ${value}`);
}

function checkInputs(inputs: LoanEstimateInputs): void {
  checkWholeCents('amountCents', inputs.amountCents, 1);
  checkWholeCents('rateThousandths', inputs.rateThousandths);
  checkWholeCents('loanCostsCents', inputs.loanCostsCents);
  checkWholeCents('prepaidFinanceChargesCents', inputs.prepaidFinanceChargesCents);
  checkWholeCents('prepaidInterestCents', inputs.prepaidInterestCents);
  if (inputs.prepaidFinanceChargesCents >= inputs.amountCents) throw new RangeError('the prepaid finance charges must be less than the loan amount');
  if (inputs.escrowMonthlyCents !== null) checkWholeCents('escrowMonthlyCents', inputs.escrowMonthlyCents);
  if (inputs.mortgageInsurance) {
    checkWholeCents('mortgageInsurance.monthlyCents', inputs.mortgageInsurance.monthlyCents);
    checkWholeCents('mortgageInsurance.months', inputs.mortgageInsurance.months);
  }
}

/** The mortgage insurance that adds to any payment: none when absent, free or for no month. */
function insuranceCharged(inputs: LoanEstimateInputs): MortgageInsurance | null {
  const mi = inputs.mortgageInsurance;
  return mi && mi.monthlyCents > 0 && mi.months > 0 ? mi : null;
}

/** Columns of Projected Payments for a fixed rate: one while mortgage insurance lasts (through the year of its last payment), one after. */
function projectedPayments(inputs: LoanEstimateInputs, paymentCents: number, numberOfPayments: number): ProjectedPaymentColumn[] {
  const years = Math.ceil(numberOfPayments / MONTHS_PER_YEAR);
  const mi = insuranceCharged(inputs);
  const escrow = inputs.escrowMonthlyCents;
  const column = (fromYear: number, toYear: number, miCents: number | null): ProjectedPaymentColumn => ({
    fromYear,
    toYear,
    principalAndInterestCents: paymentCents,
    mortgageInsuranceDollars: miCents === null ? null : wholeDollars(miCents),
    estimatedEscrowDollars: escrow === null ? null : wholeDollars(escrow),
    // The total is the exact sum rounded once, as the sample's $1,050 (761.78 + 82.35 + 206.13) is.
    estimatedTotalMonthlyPaymentDollars: wholeDollars(paymentCents + (miCents ?? 0) + (escrow ?? 0)),
  });
  if (!mi) return [column(1, years, null)];
  const lastYearWithMi = Math.min(years, Math.ceil(mi.months / MONTHS_PER_YEAR));
  if (lastYearWithMi >= years) return [column(1, years, mi.monthlyCents)];
  return [column(1, lastYearWithMi, mi.monthlyCents), column(lastYearWithMi + 1, years, null)];
}

/**
 * The APR of the payment stream: the quote's own search when the first period is regular and no
 * mortgage insurance changes the payments, else the same search in fixed point over the runs.
 */
function aprOf(inputs: LoanEstimateInputs, amountFinancedCents: number, levelCents: number, count: number, lastCents: number): number {
  const firstPeriod = inputs.firstPeriod ?? REGULAR_FIRST_PERIOD;
  const regular = firstPeriod.fullMonths === 1 && firstPeriod.oddDays === 0;
  const mi = insuranceCharged(inputs);
  if (!mi && regular) {
    return aprThousandths({ amountFinancedCents, levelPaymentCents: levelCents, levelCount: count - 1, lastPaymentCents: lastCents }, inputs.rateThousandths);
  }
  const withMi = mi ? Math.min(mi.months, count) : 0;
  const miCents = mi ? mi.monthlyCents : 0;
  const runs =
    withMi === count
      ? [
          { amountCents: levelCents + miCents, count: count - 1 },
          { amountCents: lastCents + miCents, count: 1 },
        ]
      : [
          { amountCents: levelCents + miCents, count: withMi },
          { amountCents: levelCents, count: count - 1 - withMi },
          { amountCents: lastCents, count: 1 },
        ];
  return solveAprFixedPoint(amountFinancedCents, runs, inputs.rateThousandths, firstPeriod);
}

export function loanEstimateFigures(inputs: LoanEstimateInputs): LoanEstimateFigures {
  checkInputs(inputs);
  const rows = scheduleRows(inputs.amountCents, inputs.rateThousandths, inputs.termYears);
  const payment = rows[0]!.paymentCents;
  const last = rows[rows.length - 1]!.paymentCents;

  let paidFiveYears = 0;
  let principalFiveYears = 0;
  let totalInterest = 0;
  for (const row of rows) {
    totalInterest += row.interestCents;
    if (row.number <= FIVE_YEARS) {
      paidFiveYears += row.paymentCents;
      principalFiveYears += row.principalCents;
    }
  }
  const mi = inputs.mortgageInsurance;
  const miFiveYears = mi ? mi.monthlyCents * Math.min(mi.months, FIVE_YEARS, rows.length) : 0;
  const inFiveYears = paidFiveYears + miFiveYears + inputs.loanCostsCents + inputs.prepaidInterestCents;

  const amountFinancedCents = inputs.amountCents - inputs.prepaidFinanceChargesCents;
  return {
    loanAmountCents: inputs.amountCents,
    interestRateThousandths: inputs.rateThousandths,
    monthlyPrincipalAndInterestCents: payment,
    projectedPayments: projectedPayments(inputs, payment, rows.length),
    inFiveYearsTotalPaidDollars: wholeDollars(inFiveYears),
    inFiveYearsPrincipalPaidOffDollars: wholeDollars(principalFiveYears),
    aprThousandths: aprOf(inputs, amountFinancedCents, payment, rows.length, last),
    // TIP = interest over the life of the loan ÷ loan amount, in thousandths of a point: × 100,000.
    totalInterestPercentageThousandths: multiplyDivideHalfUp(totalInterest + inputs.prepaidInterestCents, 100_000, inputs.amountCents),
    totalInterestCents: totalInterest,
    amountFinancedCents,
  };
}
