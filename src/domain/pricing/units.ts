/**
 * Scaled integers for pricing: money as integer cents, percentages as integer thousandths of a
 * percentage point. The request's and the rate sheet's JSON numbers carry at most two (money) or
 * three (percent) decimals, so each is exactly an integer count of these units, and sums, products
 * and half-up roundings of them are exact integer arithmetic: the same results as decimal
 * arithmetic, without allocating a decimal per step.
 *
 * A JSON number is read as decimal.js reads it (through its shortest string form), so "has at most
 * two decimals" means exactly what it meant with decimal.js.
 */

/** Digits after the point of a finite number's exact decimal form as decimal.js reads it (`String(value)`), trailing zeros aside. */
export function decimalPlaces(value: number): number {
  const text = String(value);
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  // A number's shortest form never ends its fraction with a zero.
  const fraction = point < 0 ? 0 : mantissa.length - point - 1;
  return Math.max(0, fraction - exponent);
}

/** True when a JSON number has at most `places` decimals (checked on its exact decimal form). */
export function hasAtMostDecimals(value: number, places: number): boolean {
  return Number.isFinite(value) && decimalPlaces(value) <= places;
}

const SCALE = [1, 10, 100, 1000] as const;

/**
 * `value` × 10^places as an exact integer, for a number with at most `places` decimals (a rate
 * sheet's, validated when it was saved, or a request's, checked first). The nearest double to a
 * decimal with at most `places` places, scaled, lies within far less than 0.5 of that integer
 * below 2^50, and the integer divided back is that same double: the check proves exactness.
 */
export function toScaled(value: number, places: 0 | 1 | 2 | 3): number {
  const factor = SCALE[places];
  const scaled = Math.round(value * factor) + 0; // + 0: never −0
  if (!(Math.abs(scaled) <= 2 ** 50) || scaled / factor !== value) {
    throw new RangeError(`${value} is not a number with at most ${places} decimals that pricing can hold exactly`);
  }
  return scaled;
}

/**
 * ⌊a·b / d + ½⌋ for integers a, b ≥ 0 and d > 0: the exact quotient rounded half-up. In doubles
 * while 2·a·b + d stays below 2^53 (the remainder of two such integers is exact, and so is the
 * division that is left), in BigInt beyond.
 */
export function multiplyDivideHalfUp(a: number, b: number, d: number): number {
  const twice = 2 * a * b + d;
  if (twice <= Number.MAX_SAFE_INTEGER) return (twice - (twice % (2 * d))) / (2 * d);
  return Number((2n * BigInt(a) * BigInt(b) + BigInt(d)) / (2n * BigInt(d)));
}

/**
 * Integer cents as the JSON number in major units: the double nearest to cents / 100, which is the
 * number the decimal's text parses to (Decimal.toNumber()), since a correctly rounded division
 * of an exact integer lands on the same nearest double.
 */
export function majorUnits(cents: number): number {
  return cents / 100;
}

/** Integer thousandths of a percentage point as the JSON number in percent (6500 → 6.5). */
export function percent(thousandths: number): number {
  return thousandths / 1000;
}
