/**
 * THE PRICING ORACLE (one of its files; see ./quote.ts): the decimal type it computes in. decimal.js
 * is a development dependency for this oracle's sake. Frozen: do not optimise it.
 *
 * The decimal type every pricing computation uses. decimal.js, never binary floating point, per
 * the house money rule; rounding of stated figures is half-up (to the cent, or to 0.001 percentage
 * points for rates). 28 significant digits keep (1 + i)^480 and the APR root far beyond the cent.
 */
import { Decimal } from 'decimal.js';

export const Dec = Decimal.clone({ precision: 28, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -50, toExpPos: 50 });
export type { Decimal };

export const ZERO = new Dec(0);
export const ONE = new Dec(1);
export const HUNDRED = new Dec(100);

/** Half-up to the cent. */
export function toCents(value: Decimal): Decimal {
  return value.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
}

/** Half-up to three decimals (how percentages are stated). */
export function toPercentPlaces(value: Decimal): Decimal {
  return value.toDecimalPlaces(3, Decimal.ROUND_HALF_UP);
}
