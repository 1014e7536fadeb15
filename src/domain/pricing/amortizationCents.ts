/**
 * The level monthly payment and the schedule's totals in integer cents: the fast path of pricing,
 * equal to amortization.ts (the decimal path) figure for figure. Same rules (issue 3):
 * - the payment is P·r / (1 − (1 + r)^−n), r = annual percent / 1200, n = 12 × years, rounded
 *   half-up to the cent; at a zero rate P / n, rounded half-up;
 * - each month's interest is the balance times r, rounded half-up to the cent;
 * - the last payment is adjusted so the balance ends at exactly 0.00, and the schedule ends early
 *   when the rounded-up payment clears the balance before month n.
 *
 * Only the payment needs a power. Its exact value is a ratio of huge integers, so it is evaluated
 * in binary floating point (log1p/expm1, relative error under 10^−14) and rounded to the cent only
 * when it lies clearly away from a half cent (more than 10^−11 relative): then the exact value,
 * and the 28-digit decimal that amortization.ts rounds (relative error under 10^−19), round to the
 * same cent. Within that hair of a half cent the decimal path decides, so the result is always the
 * decimal path's. Everything after the payment is integer arithmetic, exact in doubles below 2^53
 * (BigInt beyond).
 */
import { amortizationSummary, monthlyPayment, numberOfMonths } from './amortization.ts';
import { Dec, type Decimal } from './decimal.ts';
import { multiplyDivideHalfUp } from './units.ts';

/** Interest of a month: balance × rate / 1200 with the rate in thousandths of a percent, i.e. balance × t / 1,200,000. */
const RATE_DENOMINATOR = 1_200_000;

/** Relative distance from a half cent below which the payment is left to the decimal path. */
const PAYMENT_MARGIN = 1e-11;

export interface ScheduleTotals {
  monthlyPaymentCents: number;
  numberOfPayments: number;
  /** The adjusted final payment (equal to the level payment only by chance). */
  lastPaymentCents: number;
  totalInterestCents: number;
  totalOfPaymentsCents: number;
}

/** Integer cents as the exact decimal the decimal path takes. */
export function centsDecimal(cents: number): Decimal {
  return new Dec(cents).div(100);
}

/** Thousandths of a percentage point as the exact decimal the decimal path takes. */
export function thousandthsDecimal(thousandths: number): Decimal {
  return new Dec(thousandths).div(1000);
}

/** A decimal with at most `places` places (2 for cents, 3 for thousandths) as that integer. */
export function decimalToScaled(value: Decimal, places: 2 | 3): number {
  return Number(value.times(places === 2 ? 100 : 1000).toFixed(0));
}

function checkInputs(principalCents: number, rateThousandths: number): void {
  if (!Number.isSafeInteger(principalCents) || !Number.isSafeInteger(rateThousandths)) {
    throw new RangeError('principal and rate must be whole cents and thousandths');
  }
  if (principalCents < 0) throw new RangeError('principal must not be negative');
  if (rateThousandths < 0) throw new RangeError('ratePercent must not be negative');
}

/** The level monthly payment in cents, rounded half-up: amortization.ts's monthlyPayment, exactly. */
export function monthlyPaymentCents(principalCents: number, rateThousandths: number, termYears: number): number {
  const n = numberOfMonths(termYears);
  checkInputs(principalCents, rateThousandths);
  if (rateThousandths === 0) return multiplyDivideHalfUp(principalCents, 1, n);
  const r = rateThousandths / RATE_DENOMINATOR;
  // 1 − (1 + r)^−n without the cancellation of a small n·r.
  const payment = (principalCents * r) / -Math.expm1(-n * Math.log1p(r));
  const whole = Math.floor(payment);
  const fraction = payment - whole;
  if (Math.abs(fraction - 0.5) > payment * PAYMENT_MARGIN + 1e-9 && Number.isFinite(payment)) {
    return fraction > 0.5 ? whole + 1 : whole;
  }
  return decimalToScaled(monthlyPayment(centsDecimal(principalCents), thousandthsDecimal(rateThousandths), termYears), 2);
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
 * Walks the schedule in integer cents and returns its totals. The monthly interest is
 * round-half-up(balance × t / 1,200,000) = ⌊(2·balance·t + 1,200,000) / 2,400,000⌋.
 */
export function scheduleTotals(principalCents: number, rateThousandths: number, termYears: number): ScheduleTotals {
  const n = numberOfMonths(termYears);
  const payment = monthlyPaymentCents(principalCents, rateThousandths, termYears);
  const t = rateThousandths;
  if (2 * principalCents * t + RATE_DENOMINATOR >= 2 ** 52) {
    // Beyond exact doubles (only sheets far outside the default reach this): the BigInt walk.
    const summary = amortizationSummary(centsDecimal(principalCents), thousandthsDecimal(t), termYears);
    return {
      monthlyPaymentCents: payment,
      numberOfPayments: summary.numberOfPayments,
      lastPaymentCents: decimalToScaled(summary.lastPayment, 2),
      totalInterestCents: decimalToScaled(summary.totalInterest, 2),
      totalOfPaymentsCents: decimalToScaled(summary.totalOfPayments, 2),
    };
  }
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
  }
  return {
    monthlyPaymentCents: payment,
    numberOfPayments: count,
    lastPaymentCents: lastPayment,
    totalInterestCents: totalInterest,
    totalOfPaymentsCents: totalOfPayments,
  };
}
