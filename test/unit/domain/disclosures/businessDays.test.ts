import { describe, expect, it } from 'vitest';
import { addBusinessDays, endOfLocalDay, isKnownTimeZone, isTridBusinessDay, loanEstimateDue, loanEstimateDueDate, localDate } from '../../../../src/domain/disclosures/businessDays.ts';
import { legalPublicHolidays } from '../../../../src/domain/disclosures/holidays.ts';

// Every 5 U.S.C. 6103(a) holiday of 2025–2027 as OPM's holiday tables list them: the date the
// statute names and the day federal offices observe it (written out by hand, not computed).
const HOLIDAYS: Record<number, Array<[name: string, date: string, observed: string]>> = {
  2025: [
    ["New Year's Day", '2025-01-01', '2025-01-01'],
    ['Birthday of Martin Luther King, Jr.', '2025-01-20', '2025-01-20'],
    ["Washington's Birthday", '2025-02-17', '2025-02-17'],
    ['Memorial Day', '2025-05-26', '2025-05-26'],
    ['Juneteenth National Independence Day', '2025-06-19', '2025-06-19'],
    ['Independence Day', '2025-07-04', '2025-07-04'],
    ['Labor Day', '2025-09-01', '2025-09-01'],
    ['Columbus Day', '2025-10-13', '2025-10-13'],
    ['Veterans Day', '2025-11-11', '2025-11-11'],
    ['Thanksgiving Day', '2025-11-27', '2025-11-27'],
    ['Christmas Day', '2025-12-25', '2025-12-25'],
  ],
  2026: [
    ["New Year's Day", '2026-01-01', '2026-01-01'],
    ['Birthday of Martin Luther King, Jr.', '2026-01-19', '2026-01-19'],
    ["Washington's Birthday", '2026-02-16', '2026-02-16'],
    ['Memorial Day', '2026-05-25', '2026-05-25'],
    ['Juneteenth National Independence Day', '2026-06-19', '2026-06-19'],
    ['Independence Day', '2026-07-04', '2026-07-03'], // a Saturday: observed Friday
    ['Labor Day', '2026-09-07', '2026-09-07'],
    ['Columbus Day', '2026-10-12', '2026-10-12'],
    ['Veterans Day', '2026-11-11', '2026-11-11'],
    ['Thanksgiving Day', '2026-11-26', '2026-11-26'],
    ['Christmas Day', '2026-12-25', '2026-12-25'],
  ],
  2027: [
    ["New Year's Day", '2027-01-01', '2027-01-01'],
    ['Birthday of Martin Luther King, Jr.', '2027-01-18', '2027-01-18'],
    ["Washington's Birthday", '2027-02-15', '2027-02-15'],
    ['Memorial Day', '2027-05-31', '2027-05-31'],
    ['Juneteenth National Independence Day', '2027-06-19', '2027-06-18'], // a Saturday: observed Friday
    ['Independence Day', '2027-07-04', '2027-07-05'], // a Sunday: observed Monday
    ['Labor Day', '2027-09-06', '2027-09-06'],
    ['Columbus Day', '2027-10-11', '2027-10-11'],
    ['Veterans Day', '2027-11-11', '2027-11-11'],
    ['Thanksgiving Day', '2027-11-25', '2027-11-25'],
    ['Christmas Day', '2027-12-25', '2027-12-24'], // a Saturday: observed Friday
  ],
};

describe('the legal public holidays of 5 U.S.C. 6103(a)', () => {
  for (const year of [2025, 2026, 2027]) {
    it(`${year}: every holiday, its date and the day it is observed`, () => {
      expect(legalPublicHolidays(year).map((h) => [h.name, h.date, h.observed])).toEqual(HOLIDAYS[year]);
    });
  }

  it("New Year's Day 2028 falls on a Saturday and is observed on Friday, December 31, 2027", () => {
    expect(legalPublicHolidays(2028)[0]).toEqual({ name: "New Year's Day", date: '2028-01-01', observed: '2027-12-31' });
  });

  it('Juneteenth is a legal public holiday from 2021 only (Pub. L. 117-17), and a Sunday one is observed Monday (2022)', () => {
    expect(legalPublicHolidays(2020).some((h) => h.name.startsWith('Juneteenth'))).toBe(false);
    expect(legalPublicHolidays(2022).find((h) => h.name.startsWith('Juneteenth'))).toMatchObject({ date: '2022-06-19', observed: '2022-06-20' });
  });

  it('refuses a year it has no calendar for, and a date that does not exist', () => {
    expect(() => legalPublicHolidays(1900)).toThrow(RangeError);
    expect(() => isTridBusinessDay('2026-02-30')).toThrow(RangeError);
    expect(() => isTridBusinessDay('26-1-1')).toThrow(RangeError);
  });
});

describe('a business day in the specific definition of 12 CFR 1026.2(a)(6)', () => {
  const all = [2025, 2026, 2027].flatMap((year) => HOLIDAYS[year]!);

  it.each(all)('%s (%s) is not a business day', (_name, date) => {
    expect(isTridBusinessDay(date)).toBe(false);
  });

  it.each(all.filter(([, date, observed]) => date !== observed))('%s: the day observed in its place (%s → %s) is a business day (comment 2(a)(6)-2)', (_name, _date, observed) => {
    expect(isTridBusinessDay(observed)).toBe(true);
  });

  it('Saturdays are business days, Sundays are not', () => {
    expect(isTridBusinessDay('2026-03-14')).toBe(true); // Saturday
    expect(isTridBusinessDay('2026-03-15')).toBe(false); // Sunday
    expect(isTridBusinessDay('2026-03-16')).toBe(true); // Monday
  });

  it('a day after a holiday and its weekend is counted again', () => {
    expect(isTridBusinessDay('2027-07-06')).toBe(true);
    expect(isTridBusinessDay('2025-11-28')).toBe(true); // the Friday after Thanksgiving
  });
});

describe('the Loan Estimate is due by the end of the third business day after receipt (1026.19(e)(1)(iii))', () => {
  // [received, due]: counted by hand on a calendar.
  const ROWS: Array<[string, string, string]> = [
    ['an ordinary Monday (the comment’s example: Thursday)', '2026-03-09', '2026-03-12'],
    ['a Wednesday: Saturday counts', '2026-03-11', '2026-03-14'],
    ['a Thursday: Sunday does not count', '2026-03-12', '2026-03-16'],
    ['a Sunday: the day of receipt never counts', '2026-03-15', '2026-03-18'],
    ['the Friday before Martin Luther King Day 2026', '2026-01-16', '2026-01-21'],
    ['the Friday before Presidents Day 2025', '2025-02-14', '2025-02-19'],
    ['the Friday before Memorial Day 2027', '2027-05-28', '2027-06-02'],
    ['the Friday before Labor Day 2025', '2025-08-29', '2025-09-03'],
    ['the Friday before Columbus Day 2026', '2026-10-09', '2026-10-14'],
    ['the day before Thanksgiving 2025', '2025-11-26', '2025-12-01'],
    ['Wednesday before Juneteenth 2025 (a Thursday)', '2025-06-18', '2025-06-23'],
    ['Wednesday before Veterans Day 2027 (a Thursday)', '2027-11-10', '2027-11-15'],
    ['Thursday July 2, 2026: Friday the 3rd (observed) counts, Saturday the 4th does not', '2026-07-02', '2026-07-07'],
    ['Friday July 3, 2026, the observed Independence Day itself', '2026-07-03', '2026-07-08'],
    ['Friday July 2, 2027: Monday the 5th (observed) counts', '2027-07-02', '2027-07-06'],
    ['Thursday June 17, 2027: Friday the 18th (observed Juneteenth) counts, Saturday the 19th does not', '2027-06-17', '2027-06-22'],
    ['Wednesday December 22, 2027: Christmas Eve (observed) counts, Christmas Saturday does not', '2027-12-22', '2027-12-27'],
    ['Thursday December 30, 2027: across New Year 2028 (a Saturday)', '2027-12-30', '2028-01-04'],
    ['Christmas Eve 2025 across Christmas and its Sunday', '2025-12-24', '2025-12-29'],
    ['New Year’s Eve 2025 (New Year’s Day a Thursday)', '2025-12-31', '2026-01-05'],
  ];

  it.each(ROWS)('%s: received %s, due %s', (_why, received, due) => {
    expect(loanEstimateDueDate(received)).toBe(due);
  });

  it('counts only whole business days ≥ 1', () => {
    expect(addBusinessDays('2026-03-14', 1)).toBe('2026-03-16');
    expect(() => addBusinessDays('2026-03-14', 0)).toThrow(RangeError);
    expect(() => addBusinessDays('2026-03-14', 1.5)).toThrow(RangeError);
  });
});

describe('the local day in the lender’s time zone', () => {
  it('an application complete at 10 p.m. in New York on the Friday before MLK Day is received that Friday, due Wednesday 23:59:59.999 EST', () => {
    const due = loanEstimateDue(new Date('2026-01-17T03:00:00Z'), 'America/New_York');
    expect(due).toEqual({ receivedDate: '2026-01-16', dueDate: '2026-01-21', dueAt: new Date('2026-01-22T04:59:59.999Z') });
  });

  it('in summer the end of the day is 23:59:59.999 EDT', () => {
    expect(endOfLocalDay('2026-07-08', 'America/New_York').toISOString()).toBe('2026-07-09T03:59:59.999Z');
    expect(endOfLocalDay('2026-07-08', 'America/Los_Angeles').toISOString()).toBe('2026-07-09T06:59:59.999Z');
    expect(endOfLocalDay('2026-07-08', 'UTC').toISOString()).toBe('2026-07-08T23:59:59.999Z');
  });

  it('the days of the clock change keep their midnight (2026-03-08 and 2026-11-01 in New York)', () => {
    expect(endOfLocalDay('2026-03-07', 'America/New_York').toISOString()).toBe('2026-03-08T04:59:59.999Z');
    expect(endOfLocalDay('2026-03-08', 'America/New_York').toISOString()).toBe('2026-03-09T03:59:59.999Z');
    expect(endOfLocalDay('2026-11-01', 'America/New_York').toISOString()).toBe('2026-11-02T04:59:59.999Z');
  });

  it('the same instant is a different day east and west', () => {
    const instant = new Date('2026-05-05T05:30:00Z');
    expect(localDate(instant, 'America/New_York')).toBe('2026-05-05');
    expect(localDate(instant, 'America/Los_Angeles')).toBe('2026-05-04');
  });

  it('knows an IANA zone from a made-up one', () => {
    expect(isKnownTimeZone('America/Chicago')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
  });
});
