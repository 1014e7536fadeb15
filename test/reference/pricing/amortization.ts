/**
 * THE PRICING ORACLE (one of its files; see ./quote.ts): the decimal.js amortization that priced
 * quotes until issue 17 and served quote schedules until issue 26. Only tests import it; production
 * computes these figures in integers (src/domain/pricing/amortization.ts) and the tests hold each
 * figure and each schedule row to this. Frozen: do not optimise it.
 *
 * Fixed-rate amortization: the level monthly payment and the month-by-month schedule.
 *
 * Rules (issue 3, the usual US mortgage practice):
 * - the payment is P·r / (1 − (1 + r)^−n), r the monthly rate (annual percent / 1200), n = 12 × years,
 *   rounded half-up to the cent; at a zero rate it is P / n, rounded half-up;
 * - each month's interest is the balance times r, rounded half-up to the cent;
 * - the last payment is adjusted so the balance ends at exactly 0.00. Rounding the payment up can
 *   pay a small, long, low-rate loan off before month n: the schedule then ends with the month that
 *   clears the balance (the payment count is the schedule's length).
 *
 * The payment is computed with decimal.js (it needs a power). The schedule then only adds,
 * subtracts and rounds a product to the cent, so it runs in exact integer cents with BigInt: the
 * same results as decimal arithmetic (a property test compares them), without allocating a decimal
 * per step. Nothing here touches binary floating point.
 */
import { Dec, ONE, toCents, type Decimal } from './decimal.ts';

const MONTHS_PER_YEAR = 12;
const MONTHLY_RATE_DIVISOR = new Dec(1200);

export interface ScheduleRow {
  /** 1-based payment number. */
  number: number;
  payment: Decimal;
  principal: Decimal;
  interest: Decimal;
  /** Balance after this payment. */
  balance: Decimal;
}

export interface AmortizationSummary {
  monthlyPayment: Decimal;
  numberOfPayments: number;
  /** The adjusted final payment (equal to monthlyPayment only by chance). */
  lastPayment: Decimal;
  totalInterest: Decimal;
  totalOfPayments: Decimal;
}

function numberOfMonths(termYears: number): number {
  if (!Number.isInteger(termYears) || termYears < 1) throw new RangeError(`termYears must be a whole number of years ≥ 1, got ${termYears}`);
  return termYears * MONTHS_PER_YEAR;
}

/** The monthly rate r as a decimal fraction (6 % a year → 0.005). */
function monthlyRate(ratePercent: Decimal): Decimal {
  return new Dec(ratePercent).div(MONTHLY_RATE_DIVISOR);
}

/** The level monthly payment, rounded half-up to the cent. */
export function monthlyPayment(principal: Decimal, ratePercent: Decimal, termYears: number): Decimal {
  const n = numberOfMonths(termYears);
  const p = new Dec(principal);
  if (p.isNegative()) throw new RangeError('principal must not be negative');
  if (new Dec(ratePercent).isNegative()) throw new RangeError('ratePercent must not be negative');
  const r = monthlyRate(ratePercent);
  if (r.isZero()) return toCents(p.div(n));
  const discount = ONE.minus(ONE.plus(r).pow(-n));
  return toCents(p.times(r).div(discount));
}

/** A decimal with at most two places as integer cents. */
function toBigCents(value: Decimal): bigint {
  return BigInt(toCents(new Dec(value)).times(100).toFixed(0));
}

/** Integer cents as an exact decimal. */
function centsToDecimal(cents: bigint): Decimal {
  const negative = cents < 0n;
  const digits = (negative ? -cents : cents).toString().padStart(3, '0');
  return new Dec(`${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`);
}

interface CentsRow {
  number: number;
  payment: bigint;
  principal: bigint;
  interest: bigint;
  balance: bigint;
}

/**
 * Walks the schedule in integer cents, calling `visit` for each row when given. The monthly
 * interest is round-half-up(balance × ratePercent / 1200): with ratePercent = num / 10^k exactly,
 * that is ⌊(2·balance·num + D) / 2D⌋ for D = 1200 · 10^k (balance ≥ 0).
 */
function walkSchedule(principal: Decimal, ratePercent: Decimal, termYears: number, visit?: (row: CentsRow) => void): AmortizationSummary {
  const n = numberOfMonths(termYears);
  const paymentDecimal = monthlyPayment(principal, ratePercent, termYears);
  const payment = toBigCents(paymentDecimal);
  const rate = new Dec(ratePercent);
  const places = rate.decimalPlaces();
  const numerator = BigInt(rate.times(new Dec(10).pow(places)).toFixed(0));
  const twiceDenominator = 2n * 1200n * 10n ** BigInt(places);
  const half = twiceDenominator / 2n;

  let balance = toBigCents(principal);
  let totalInterest = 0n;
  let totalOfPayments = 0n;
  let lastPayment = 0n;
  let count = 0;
  for (let month = 1; month <= n && balance > 0n; month++) {
    const interest = (2n * balance * numerator + half) / twiceDenominator;
    const owed = balance + interest;
    // The final month, or an earlier month when the rounded-up payment has already caught up.
    const thisPayment = month === n || owed <= payment ? owed : payment;
    const principalPart = thisPayment - interest;
    balance -= principalPart;
    totalInterest += interest;
    totalOfPayments += thisPayment;
    lastPayment = thisPayment;
    count = month;
    visit?.({ number: month, payment: thisPayment, principal: principalPart, interest, balance });
  }
  return {
    monthlyPayment: paymentDecimal,
    numberOfPayments: count,
    lastPayment: centsToDecimal(lastPayment),
    totalInterest: centsToDecimal(totalInterest),
    totalOfPayments: centsToDecimal(totalOfPayments),
  };
}

/** The full schedule: one row per payment, the last one adjusted so the balance ends at 0.00. */
export function amortizationSchedule(principal: Decimal, ratePercent: Decimal, termYears: number): ScheduleRow[] {
  const rows: ScheduleRow[] = [];
  walkSchedule(principal, ratePercent, termYears, (row) =>
    rows.push({
      number: row.number,
      payment: centsToDecimal(row.payment),
      principal: centsToDecimal(row.principal),
      interest: centsToDecimal(row.interest),
      balance: centsToDecimal(row.balance),
    }),
  );
  return rows;
}

/** The schedule's totals without keeping its rows. */
export function amortizationSummary(principal: Decimal, ratePercent: Decimal, termYears: number): AmortizationSummary {
  return walkSchedule(principal, ratePercent, termYears);
}
