/**
 * The legal public holidays of 5 U.S.C. 6103(a), year by year, with the day federal offices
 * observe each one (5 U.S.C. 6103(b) and Executive Order 11582: a holiday on a Sunday is observed
 * the Monday after, one on a Saturday the Friday before). Six are set by weekday (the third Monday
 * of January, and so on), five by date; Juneteenth (June 19) is a legal public holiday from 2021
 * (Pub. L. 117-17). Inauguration Day (6103(c)) is a holiday only for employees around Washington,
 * D.C., and is not a 6103(a) holiday, so it is not here.
 *
 * Civil dates are plain `YYYY-MM-DD` strings: no time zone enters this file.
 */

export interface LegalPublicHoliday {
  name: string;
  /** The date 6103(a) names (for the weekday holidays, that year's date). */
  date: string;
  /** The day federal offices observe it: `date`, or the Friday before / Monday after. */
  observed: string;
}

const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 of a civil date (proleptic Gregorian, no time zone). */
export function dayNumber(date: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  if (new Date(ms).getUTCDate() !== day || new Date(ms).getUTCMonth() !== month - 1) throw new RangeError(`no such date: ${date}`);
  return ms / MS_PER_DAY;
}

/** The civil date of a day number. */
export function dateOfDay(dayNumber: number): string {
  return new Date(dayNumber * MS_PER_DAY).toISOString().slice(0, 10);
}

/** 0 for Sunday … 6 for Saturday. */
export function weekday(date: string): number {
  return new Date(dayNumber(date) * MS_PER_DAY).getUTCDay();
}

function civil(year: number, month: number, day: number): string {
  return dateOfDay(Date.UTC(year, month - 1, day) / MS_PER_DAY);
}

/** The `nth` (1-based) given weekday of a month. */
function nthWeekday(year: number, month: number, wantedWeekday: number, nth: number): string {
  const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
  return civil(year, month, 1 + ((wantedWeekday - first + 7) % 7) + 7 * (nth - 1));
}

/** The last given weekday of a month. */
function lastWeekday(year: number, month: number, wantedWeekday: number): string {
  const lastDay = new Date(Date.UTC(year, month, 0));
  const back = (lastDay.getUTCDay() - wantedWeekday + 7) % 7;
  return civil(year, month, lastDay.getUTCDate() - back);
}

function observedDay(date: string): string {
  const day = weekday(date);
  if (day === 0) return dateOfDay(dayNumber(date) + 1);
  if (day === 6) return dateOfDay(dayNumber(date) - 1);
  return date;
}

const MONDAY = 1;
const THURSDAY = 4;

/** The 6103(a) holidays of `year` (1971 on, when the Monday holidays took their present days), in date order. */
export function legalPublicHolidays(year: number): LegalPublicHoliday[] {
  if (!Number.isInteger(year) || year < 1971 || year > 9999) throw new RangeError(`no holiday calendar for ${year}`);
  const dates: Array<[string, string]> = [
    ["New Year's Day", civil(year, 1, 1)],
    ['Birthday of Martin Luther King, Jr.', nthWeekday(year, 1, MONDAY, 3)],
    ["Washington's Birthday", nthWeekday(year, 2, MONDAY, 3)],
    ['Memorial Day', lastWeekday(year, 5, MONDAY)],
    ...(year >= 2021 ? [['Juneteenth National Independence Day', civil(year, 6, 19)] as [string, string]] : []),
    ['Independence Day', civil(year, 7, 4)],
    ['Labor Day', nthWeekday(year, 9, MONDAY, 1)],
    ['Columbus Day', nthWeekday(year, 10, MONDAY, 2)],
    ['Veterans Day', civil(year, 11, 11)],
    ['Thanksgiving Day', nthWeekday(year, 11, THURSDAY, 4)],
    ['Christmas Day', civil(year, 12, 25)],
  ];
  // The Martin Luther King holiday is kept from 1986 (Pub. L. 98-144).
  return dates.filter(([name]) => year >= 1986 || !name.startsWith('Birthday of Martin')).map(([name, date]) => ({ name, date, observed: observedDay(date) }));
}

const byYear = new Map<number, ReadonlySet<string>>();

/** True when `date` is the date 6103(a) names for a legal public holiday (not a day observed in its place). */
export function isLegalPublicHoliday(date: string): boolean {
  const year = Number(date.slice(0, 4));
  let dates = byYear.get(year);
  if (!dates) byYear.set(year, (dates = new Set(legalPublicHolidays(year).map((h) => h.date))));
  return dates.has(date);
}
