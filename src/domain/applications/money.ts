/**
 * Conversions between JSON money (numbers in major units, at most two decimals) and the store's
 * INTEGER cents, exactly: what decimal.js computes, without a decimal object where integer
 * arithmetic on doubles is provably the same (the reasoning of domain/pricing/units.ts); decimal.js
 * for everything else. A decimal per amount was a twentieth of a submit's CPU (issue 17).
 */
import { Decimal } from 'decimal.js';

/**
 * `amount` × 100 when that is a whole number of cents: the nearest double to a decimal with at
 * most two places, × 100, lies within far less than 0.5 of that integer below 2^50, and the
 * integer / 100 is the same double again; any other amount (more decimals, too large, not finite)
 * gives null.
 */
export function exactCents(amount: number): number | null {
  const cents = Math.round(amount * 100);
  return Math.abs(cents) <= 2 ** 50 && cents / 100 === amount ? cents : null;
}

/** Major units to whole cents, rounding half-up (amounts arrive with at most two decimals). */
export function toCents(amount: number): number {
  return exactCents(amount) ?? new Decimal(amount).times(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/**
 * Whole cents to major units, as the JSON number the API returns: the double nearest to cents /
 * 100, which a correctly rounded division of a safe integer is (and decimal.js's toNumber too).
 */
export function fromCents(cents: number): number {
  return Number.isSafeInteger(cents) ? cents / 100 : new Decimal(cents).dividedBy(100).toNumber();
}

export function toCentsOrNull(amount: number | null | undefined): number | null {
  return amount === null || amount === undefined ? null : toCents(amount);
}

export function fromCentsOrNull(cents: number | null | undefined): number | null {
  return cents === null || cents === undefined ? null : fromCents(cents);
}

/** True when `value` has no more than `places` decimals (as JSON wrote it; 0.1 + 0.2 has many). */
export function hasAtMostDecimals(value: number, places: number): boolean {
  return Number.isFinite(value) && new Decimal(value).decimalPlaces() <= places;
}

/** `350000` → `350,000.00`, for messages. */
export function formatMoney(amount: number): string {
  const cents = amount > 0 ? exactCents(amount) : null;
  const [whole, fraction] =
    cents !== null
      ? [String(Math.floor(cents / 100)), String(cents % 100).padStart(2, '0')]
      : new Decimal(amount).toFixed(2, Decimal.ROUND_HALF_UP).split('.');
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction}`;
}
