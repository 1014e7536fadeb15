/**
 * Amounts as text. The store keeps integer cents; exports write major units. The conversion is
 * done on the digits (no division, no binary floating point), so an amount is never rounded on
 * its way out.
 */

/**
 * The decimal places of each number of cents 1-99 as JSON writes them (`.05`, `.5`, `.55`): a
 * table, so the only string an amount needs is its whole part's.
 */
const FRACTIONS: readonly string[] = Array.from({ length: 100 }, (_, cents) =>
  cents === 0 ? '' : cents % 10 === 0 ? '.' + cents / 10 : (cents < 10 ? '.0' : '.') + cents,
);

/** '000' to '999', and '0' to '999' for the leading group: whole numbers are written three digits at a time from these. */
const GROUPS: readonly string[] = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));
const LEADING: readonly string[] = Array.from({ length: 1000 }, (_, n) => String(n));

/**
 * A whole number's digits, as String() writes them. Not String() itself: it goes through V8's
 * number-string cache, which keeps the strings of the last thousands of numbers alive; an export
 * writes a new number in every amount, so each young-generation collection copied the whole
 * cache, and those survivors are what V8 grows the young generation by (half of an export's RSS
 * growth). Below 10^9 the digits come from the tables (half the time of toFixed(0), a call into
 * the runtime); past that, toFixed(0), which is the same for integers below 10^21.
 */
export function integerDigits(whole: number): string {
  if (!(whole >= 0 && whole < 1e9 && Number.isInteger(whole))) return whole.toFixed(0);
  if (whole < 1000) return LEADING[whole]!;
  const thousands = Math.floor(whole / 1000);
  const last = GROUPS[whole - thousands * 1000]!;
  if (thousands < 1000) return LEADING[thousands]! + last;
  const millions = Math.floor(thousands / 1000);
  return LEADING[millions]! + GROUPS[thousands - millions * 1000]! + last;
}

/** `35000050` → `350000.5`, `35000000` → `350000`, `-5` → `-0.05`: the shortest exact decimal, as JSON numbers are written. */
export function centsToDecimal(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`an amount in cents must be a safe integer, got ${cents}`);
  // Integer arithmetic on the digits' values (exact below 2^53): an export writes several amounts
  // per record, a million records at a time.
  const magnitude = cents < 0 ? -cents : cents;
  const fraction = magnitude % 100;
  const whole = integerDigits((magnitude - fraction) / 100) + FRACTIONS[fraction]!;
  return cents < 0 ? '-' + whole : whole;
}

export interface AmountStyle {
  decimalSeparator: '.' | ',';
  /** Between groups of three digits of the whole part; '' for none. */
  thousandsSeparator: string;
  /** `minimal` drops zero decimals (`350000`, `1234.5`); `two` always writes two (`350000.00`). */
  decimals: 'minimal' | 'two';
}

/** An amount in a custom format's style: `formatCents(123456789, {',', '.', 'two'})` → `1.234.567,89`. */
export function formatCents(cents: number, style: AmountStyle): string {
  const { sign, whole, fraction } = splitCents(cents);
  const grouped = style.thousandsSeparator === '' ? whole : groupThousands(whole, style.thousandsSeparator);
  if (style.decimals === 'two') return sign + grouped + style.decimalSeparator + fraction;
  if (fraction === '00') return sign + grouped;
  return sign + grouped + style.decimalSeparator + (fraction[1] === '0' ? fraction[0] : fraction);
}

function splitCents(cents: number): { sign: string; whole: string; fraction: string } {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`an amount in cents must be a safe integer, got ${cents}`);
  const sign = cents < 0 ? '-' : '';
  const digits = integerDigits(Math.abs(cents)).padStart(3, '0');
  return { sign, whole: digits.slice(0, -2), fraction: digits.slice(-2) };
}

function groupThousands(whole: string, separator: string): string {
  let out = '';
  const head = whole.length % 3;
  if (head > 0) out = whole.slice(0, head);
  for (let i = head; i < whole.length; i += 3) out += (out === '' ? '' : separator) + whole.slice(i, i + 3);
  return out;
}
