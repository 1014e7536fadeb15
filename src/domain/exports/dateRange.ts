/**
 * The `createdFrom` / `createdTo` bounds of an export: a date (`2026-11-01`, midnight UTC) or a
 * date-time with an offset (`2026-11-01T09:30:00+01:00`), turned into the store's form
 * (`toISOString()`, UTC with milliseconds), which compares correctly as text.
 */
const FORM = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|([+-])(\d{2}):(\d{2})))?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The moment `value` names, as ISO 8601 UTC with milliseconds, or null when it names none (`2026-02-30`, `24:00`). */
export function parseInstant(value: string): string | null {
  const m = FORM.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone, sign, oh = '0', om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  if (zone !== undefined && sign !== undefined && (Number(oh) > 23 || Number(om) > 59)) return null;
  const millis = Number((fraction + '000').slice(0, 3));
  const offsetMinutes = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(Number(h), Number(mi), Number(s), millis);
  date.setTime(date.getTime() - offsetMinutes * 60_000);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) return null;
  return date.toISOString();
}
