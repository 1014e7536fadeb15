/**
 * Fixed-rate amortization in integer cents: the level monthly payment, the month-by-month
 * schedule and its totals. The one implementation of these figures: quotes state the payment and
 * the totals from it, and a quote's schedule (GET /v1/quotes/{quoteId}/schedule, the dashboard's
 * calculator) is its rows. Rules (issue 3, the usual US mortgage practice):
 * - the payment is P·r / (1 − (1 + r)^−n), r = annual percent / 1200, n = 12 × years, rounded
 *   half-up to the cent; at a zero rate P / n, rounded half-up;
 * - each month's interest is the balance times r, rounded half-up to the cent;
 * - the last payment is adjusted so the balance ends at exactly 0.00, and the schedule ends early
 *   when the rounded-up payment clears the balance before month n.
 *
 * Only the payment needs a power. It is evaluated in binary floating point (log1p/expm1, relative
 * error under 10^−14) and rounded to the cent when it lies clearly away from a half cent (more
 * than 10^−11 relative); within that hair the exact rational value decides, in BigInt. Everything
 * after the payment is integer arithmetic, exact in doubles below 2^52 and in BigInt beyond (the
 * largest amounts at the highest rates a sheet can give). The decimal.js pricing this replaced is
 * the test oracle (test/reference/pricing/), and the tests hold every figure and row to it.
 */
import { multiplyDivideHalfUp } from './units.ts';

/** Interest of a month: balance × rate / 1200 with the rate in thousandths of a percent, i.e. balance × t / 1,200,000. */
const RATE_DENOMINATOR = 1_200_000;

/** Relative distance from a half cent below which the payment is decided in exact rationals. */
const PAYMENT_MARGIN = 1e-11;

const MONTHS_PER_YEAR = 12;

export interface ScheduleTotals {
  monthlyPaymentCents: number;
  numberOfPayments: number;
  /** The adjusted final payment (equal to the level payment only by chance). */
  lastPaymentCents: number;
  totalInterestCents: number;
  totalOfPaymentsCents: number;
}

/** One month of the schedule, in cents. */
export interface ScheduleRowCents {
  /** 1-based payment number. */
  number: number;
  paymentCents: number;
  principalCents: number;
  interestCents: number;
  /** Balance after this payment. */
  balanceCents: number;
}

function numberOfMonths(termYears: number): number {
  if (!Number.isInteger(termYears) || termYears < 1) throw new RangeError(`termYears must be a whole number of years ≥ 1, got ${termYears}`);
  return termYears * MONTHS_PER_YEAR;
}

function checkInputs(principalCents: number, rateThousandths: number): void {
  if (!Number.isSafeInteger(principalCents) || !Number.isSafeInteger(rateThousandths)) {
    throw new RangeError('principal and rate must be whole cents and thousandths');
  }
  if (principalCents < 0) throw new RangeError('principal must not be negative');
  if (rateThousandths < 0) throw new RangeError('ratePercent must not be negative');
}

/** The level monthly payment in cents, rounded half-up. */
export function monthlyPaymentCents(principalCents: number, rateThousandths: number, termYears: number): number {
  const n = numberOfMonths(termYears);
  checkInputs(principalCents, rateThousandths);
  if (rateThousandths === 0) return multiplyDivideHalfUp(principalCents, 1, n);
  return paymentByDoubles(principalCents, rateThousandths, n) ?? exactPaymentCents(principalCents, rateThousandths, n);
}

/**
 * The payment when doubles settle its rounding beyond doubt, else null (exported for the tests
 * that pin the exact path). For t > 0 and n months.
 */
export function paymentByDoubles(principalCents: number, rateThousandths: number, n: number): number | null {
  const r = rateThousandths / RATE_DENOMINATOR;
  // 1 − (1 + r)^−n without the cancellation of a small n·r.
  const payment = (principalCents * r) / -Math.expm1(-n * Math.log1p(r));
  const whole = Math.floor(payment);
  const fraction = payment - whole;
  if (Math.abs(fraction - 0.5) > payment * PAYMENT_MARGIN + 1e-9 && Number.isFinite(payment)) {
    return fraction > 0.5 ? whole + 1 : whole;
  }
  return null;
}

/**
 * The payment from its exact rational value. With b = 1,200,000 and a = b + t (r = t / b),
 * P·r / (1 − (1 + r)^−n) = P·t·a^n / (b·(a^n − b^n)), and half-up to the cent is
 * ⌊(2·num + den) / (2·den)⌋: a few BigInt operations on numbers of some ten thousand bits.
 */
export function exactPaymentCents(principalCents: number, rateThousandths: number, n: number): number {
  const b = BigInt(RATE_DENOMINATOR);
  const an = (b + BigInt(rateThousandths)) ** BigInt(n);
  const numerator = BigInt(principalCents) * BigInt(rateThousandths) * an;
  const denominator = b * (an - b ** BigInt(n));
  return Number((2n * numerator + denominator) / (2n * denominator));
}

const TWICE_DENOMINATOR = 2 * RATE_DENOMINATOR;
const INVERSE_TWICE_DENOMINATOR = 1 / TWICE_DENOMINATOR;

/**
 * A month's interest in cents, round-half-up(balance × t / 1,200,000) = ⌊(2·balance·t + D) / 2D⌋,
 * for 2·balance·t + D below 2^52 (the caller checks), where every step below is exact in doubles.
 * The quotient is taken as a product with 1/2D, as a division is the slowest step of the schedule's
 * walk and each month waits for the last: the product is off by far less than one, so its floor is
 * the quotient's or one either side of it, and the exact remainder says which.
 */
export function monthlyInterestCents(balanceCents: number, rateThousandths: number): number {
  const twice = 2 * rateThousandths * balanceCents + RATE_DENOMINATOR;
  const interest = Math.floor(twice * INVERSE_TWICE_DENOMINATOR);
  const remainder = twice - interest * TWICE_DENOMINATOR;
  if (remainder < 0) return interest - 1;
  return remainder >= TWICE_DENOMINATOR ? interest + 1 : interest;
}

/**
 * Walks the schedule in integer cents, calling `visit` for each row when given, and returns its
 * totals. The monthly interest is round-half-up(balance × t / 1,200,000) =
 * ⌊(2·balance·t + 1,200,000) / 2,400,000⌋.
 */
function walkSchedule(principalCents: number, rateThousandths: number, termYears: number, visit?: (row: ScheduleRowCents) => void): ScheduleTotals {
  const n = numberOfMonths(termYears);
  const payment = monthlyPaymentCents(principalCents, rateThousandths, termYears);
  const t = rateThousandths;
  // Beyond exact doubles (the largest amounts at the highest rates a sheet can give): BigInt.
  if (2 * principalCents * t + RATE_DENOMINATOR >= 2 ** 52) return walkScheduleBig(principalCents, t, n, payment, visit);
  let balance = principalCents;
  let totalInterest = 0;
  let totalOfPayments = 0;
  let lastPayment = 0;
  let count = 0;
  for (let month = 1; month <= n && balance > 0; month++) {
    const interest = monthlyInterestCents(balance, t);
    const owed = balance + interest;
    // The final month, or an earlier month when the rounded-up payment has already caught up.
    const thisPayment = month === n || owed <= payment ? owed : payment;
    balance -= thisPayment - interest;
    totalInterest += interest;
    totalOfPayments += thisPayment;
    lastPayment = thisPayment;
    count = month;
    if (visit) visit({ number: month, paymentCents: thisPayment, principalCents: thisPayment - interest, interestCents: interest, balanceCents: balance });
  }
  return {
    monthlyPaymentCents: payment,
    numberOfPayments: count,
    lastPaymentCents: lastPayment,
    totalInterestCents: totalInterest,
    totalOfPaymentsCents: totalOfPayments,
  };
}

/**
 * The same walk in BigInt, for 2·balance·t + 1,200,000 at or beyond 2^52. Every figure it yields
 * is at most the amount plus its interest, far below 2^53, so each converts back exactly.
 */
function walkScheduleBig(principalCents: number, t: number, n: number, paymentCents: number, visit?: (row: ScheduleRowCents) => void): ScheduleTotals {
  const payment = BigInt(paymentCents);
  const rate = BigInt(t);
  const twiceDenominator = 2n * BigInt(RATE_DENOMINATOR);
  let balance = BigInt(principalCents);
  let totalInterest = 0n;
  let totalOfPayments = 0n;
  let lastPayment = 0n;
  let count = 0;
  for (let month = 1; month <= n && balance > 0n; month++) {
    const interest = (2n * balance * rate + BigInt(RATE_DENOMINATOR)) / twiceDenominator;
    const owed = balance + interest;
    const thisPayment = month === n || owed <= payment ? owed : payment;
    balance -= thisPayment - interest;
    totalInterest += interest;
    totalOfPayments += thisPayment;
    lastPayment = thisPayment;
    count = month;
    if (visit) {
      visit({ number: month, paymentCents: Number(thisPayment), principalCents: Number(thisPayment - interest), interestCents: Number(interest), balanceCents: Number(balance) });
    }
  }
  return {
    monthlyPaymentCents: paymentCents,
    numberOfPayments: count,
    lastPaymentCents: Number(lastPayment),
    totalInterestCents: Number(totalInterest),
    totalOfPaymentsCents: Number(totalOfPayments),
  };
}

/** The schedule's totals without keeping its rows (what a quote states). */
export function scheduleTotals(principalCents: number, rateThousandths: number, termYears: number): ScheduleTotals {
  return walkSchedule(principalCents, rateThousandths, termYears);
}

/** The full schedule: one row per payment, the last one adjusted so the balance ends at 0.00. */
export function scheduleRows(principalCents: number, rateThousandths: number, termYears: number): ScheduleRowCents[] {
  const rows: ScheduleRowCents[] = [];
  walkSchedule(principalCents, rateThousandths, termYears, (row) => rows.push(row));
  return rows;
}
