/**
 * Pricing's figures as the decimal text its messages quote (a refused amount, the sheet's bounds,
 * an LTV, a rate): worked out on digit strings and integers, never on binary fractions. A JSON
 * number stands for the decimal of its shortest form (`String(value)`), as it always has here;
 * the text is that decimal in plain notation, as the decimal.js pricing wrote it (its notation
 * switched to exponents only beyond 10^50 and below 10^−50, which no figure reaches).
 */

/** The shortest form of `value` as an integer and a count of decimals: |value| = units / 10^places. */
function decimalOf(value: number): { negative: boolean; units: bigint; places: number } {
  if (!Number.isFinite(value)) throw new RangeError(`${value} has no decimal form`);
  const text = String(Math.abs(value));
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const fraction = dot < 0 ? '' : mantissa.slice(dot + 1);
  const units = BigInt((dot < 0 ? mantissa : mantissa.slice(0, dot)) + fraction);
  const places = fraction.length - exponent;
  return places >= 0 ? { negative: value < 0, units, places } : { negative: value < 0, units: units * 10n ** BigInt(-places), places: 0 };
}

/** `units` / 10^places in plain notation, trailing zeros of the fraction kept. */
function plain(negative: boolean, units: bigint, places: number): string {
  const digits = units.toString().padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const text = places === 0 ? whole : `${whole}.${digits.slice(-places)}`;
  return negative ? `-${text}` : text;
}

/** A JSON number's decimal in plain notation: `97` → "97", `6.125` → "6.125", `1e21` → "1000000000000000000000". */
export function decimalText(value: number): string {
  const { negative, units, places } = decimalOf(value);
  return plain(negative, units, places);
}

/** A JSON number's decimal with exactly two decimals, half-up (away from zero): `1000` → "1000.00", `0.125` → "0.13". */
export function fixedTwo(value: number): string {
  const { negative, units, places } = decimalOf(value);
  if (places <= 2) return plain(negative, units * 10n ** BigInt(2 - places), 2);
  const divisor = 10n ** BigInt(places - 2);
  return plain(negative, (units + divisor / 2n) / divisor, 2);
}

/** Integer cents as major units with two decimals: `350050` → "3500.50", `-5` → "-0.05". */
export function centsText(cents: number): string {
  const digits = Math.abs(cents).toString().padStart(3, '0');
  return `${cents < 0 ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** Integer thousandths of a point as the percentage, trailing zeros dropped: `116667` → "116.667", `97000` → "97". */
export function thousandthsText(thousandths: number): string {
  const digits = Math.abs(thousandths).toString().padStart(4, '0');
  const fraction = digits.slice(-3).replace(/0+$/, '');
  const sign = thousandths < 0 ? '-' : '';
  return sign + digits.slice(0, -3) + (fraction === '' ? '' : `.${fraction}`);
}
