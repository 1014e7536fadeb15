/**
 * Business days for the Loan Estimate's clock, and when it runs out.
 *
 * Regulation Z has two definitions of a business day (12 CFR 1026.2(a)(6)). The general one is a
 * day the creditor's offices are open to the public for substantially all its business; the
 * specific one, for rescission and the TRID waiting periods, is every calendar day except Sundays
 * and the legal public holidays of 5 U.S.C. 6103(a). The clock here uses the specific one, as
 * issue 44 asks: the service cannot know a lender's opening days. Comment 2(a)(6)-2 says that under
 * the specific definition a holiday is its date in 6103(a), not the day offices observe it: when
 * July 4 falls on a Saturday, Friday July 3 is a business day (and Saturday is not); when
 * Christmas falls on a Sunday, Monday the 26th is a business day. That is what isTridBusinessDay
 * implements; holidays.ts still computes the observed days, for the calendar a reader sees.
 *
 * The Loan Estimate is due "not later than the third business day after the creditor receives
 * the consumer's application" (1026.19(e)(1)(iii)(A)): the day of receipt does not count, and the
 * estimate must be delivered or placed in the mail by the end of the third business day after it.
 * (Comment 19(e)(1)(iii)-1 reads that deadline in the general definition; docs/partners/
 * loan-estimate.md says where the two can differ.)
 */
import { dateOfDay, dayNumber, isLegalPublicHoliday, weekday } from './holidays.ts';

/** Business days the Loan Estimate has after the day the application is received. */
const LOAN_ESTIMATE_BUSINESS_DAYS = 3;

/** True for every day but Sundays and the dates of the 6103(a) legal public holidays. */
export function isTridBusinessDay(date: string): boolean {
  return weekday(date) !== 0 && !isLegalPublicHoliday(date);
}

/** The `count`-th business day after `date` (the day itself never counts), count ≥ 1. */
export function addBusinessDays(date: string, count: number): string {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a whole number ≥ 1, got ${count}`);
  let day = dayNumber(date);
  for (let left = count; left > 0; ) {
    day += 1;
    if (isTridBusinessDay(dateOfDay(day))) left -= 1;
  }
  return dateOfDay(day);
}

/** The last day the Loan Estimate may be delivered or mailed for an application received on `receivedDate`. */
export function loanEstimateDueDate(receivedDate: string): string {
  return addBusinessDays(receivedDate, LOAN_ESTIMATE_BUSINESS_DAYS);
}

/** The parts of an instant's wall-clock time in a time zone, read with Intl (the runtime's time zone data). */
function wallClock(instantMs: number, timeZone: string): { date: string; offsetMs: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instantMs));
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const asUtc = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  const date = `${String(part('year')).padStart(4, '0')}-${String(part('month')).padStart(2, '0')}-${String(part('day')).padStart(2, '0')}`;
  return { date, offsetMs: asUtc - Math.floor(instantMs / 1000) * 1000 };
}

/** The civil date an instant falls on in `timeZone` (an IANA name such as America/New_York). */
export function localDate(instant: Date, timeZone: string): string {
  return wallClock(instant.getTime(), timeZone).date;
}

/** The first instant of a civil date in `timeZone` (US zones change offset at 2 a.m., never at midnight). */
function startOfLocalDay(date: string, timeZone: string): number {
  const guess = dayNumber(date) * 86_400_000;
  let instant = guess - wallClock(guess, timeZone).offsetMs;
  const offset = wallClock(instant, timeZone).offsetMs;
  instant = guess - offset;
  return instant;
}

/** The last millisecond of a civil date in `timeZone`: "by the end of the day". */
export function endOfLocalDay(date: string, timeZone: string): Date {
  return new Date(startOfLocalDay(dateOfDay(dayNumber(date) + 1), timeZone) - 1);
}

/** True when `timeZone` is an IANA time zone this runtime knows. */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** When a Loan Estimate falls due for an application that became complete at `receivedAt`, in the lender's `timeZone`. */
export function loanEstimateDue(receivedAt: Date, timeZone: string): { receivedDate: string; dueDate: string; dueAt: Date } {
  const receivedDate = localDate(receivedAt, timeZone);
  const dueDate = loanEstimateDueDate(receivedDate);
  return { receivedDate, dueDate, dueAt: endOfLocalDay(dueDate, timeZone) };
}
