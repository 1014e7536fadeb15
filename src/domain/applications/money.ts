/**
 * Conversions between JSON money (numbers in major units, at most two decimals) and the store's
 * INTEGER cents, through decimal.js so that binary floating point never touches an amount.
 */
import { Decimal } from 'decimal.js';

/** Major units to whole cents, rounding half-up (amounts arrive with at most two decimals). */
export function toCents(amount: number): number {
  return new Decimal(amount).times(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/** Whole cents to major units, as the JSON number the API returns. */
export function fromCents(cents: number): number {
  return new Decimal(cents).dividedBy(100).toNumber();
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
  const [whole, fraction] = new Decimal(amount).toFixed(2, Decimal.ROUND_HALF_UP).split('.');
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction}`;
}
