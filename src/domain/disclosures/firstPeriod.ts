/**
 * The first period of a loan in Appendix J's unit periods: the time from consummation, where the
 * term begins (Appendix J (b)(2)), to the first payment. For a monthly unit period, Appendix J
 * (b)(5) counts the whole months back from the later date; the days left between the earlier date
 * and the start of the first whole month are the odd days, a fraction of d/30.
 *
 * Months are measured as (b)(3)(iv) says: from a date to the same date of another month, and to a
 * shorter month's last day when it lacks the date (March 30 back one month is February 28 or 29;
 * May 31 back one month is April 30). One date cannot tell a schedule on the last day of each month
 * from one on the 28th, 29th or 30th, so the first payment's day of the month is taken as the
 * schedule's (mortgages here fall due on the 1st). A first payment less than a month after
 * consummation is refused: no mortgage this service prices has one.
 */
import type { FirstPeriod } from '../pricing/aprFixedPoint.ts';
import { dayNumber } from './holidays.ts';

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The day number `months` whole months before `date` (YYYY-MM-DD), measured as (b)(3)(iv) says. */
function monthsBefore(date: string, months: number): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const index = year * 12 + (month - 1) - months;
  const [y, m] = [Math.floor(index / 12), (index % 12) + 1];
  return Date.UTC(y, m - 1, Math.min(day, daysInMonth(y, m))) / 86_400_000;
}

export function firstPeriodBetween(consummationDate: string, firstPaymentDate: string): FirstPeriod {
  const start = dayNumber(consummationDate);
  dayNumber(firstPaymentDate); // refuses what is not a date
  const [sy, sm] = consummationDate.split('-').map(Number) as [number, number];
  const [ey, em] = firstPaymentDate.split('-').map(Number) as [number, number];
  // The months between the two calendar months, counted back, land in consummation's month: one
  // fewer when they land before its day (then they land in the month after, which is later).
  let months = (ey - sy) * 12 + (em - sm);
  if (monthsBefore(firstPaymentDate, months) < start) months -= 1;
  if (months < 1) {
    throw new RangeError(`the first payment (${firstPaymentDate}) must fall at least one month after consummation (${consummationDate})`);
  }
  return { fullMonths: months, oddDays: monthsBefore(firstPaymentDate, months) - start };
}

