import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstPeriodBetween } from '../../../../src/domain/disclosures/firstPeriod.ts';

describe('the first period in Appendix J unit periods (consummation to the first payment)', () => {
  it('counts whole months back from the first payment and the odd days before them', () => {
    const table: [string, string, number, number][] = [
      ['2013-04-15', '2013-06-01', 1, 16], // the CFPB sample H-25(B)'s closing, interest to May 1
      ['2013-04-16', '2013-06-01', 1, 15],
      ['2013-05-01', '2013-06-01', 1, 0], // a regular first period
      ['2013-04-01', '2013-06-01', 2, 0],
      ['2026-12-10', '2027-02-01', 1, 22], // across the year
      ['2028-01-15', '2028-03-01', 1, 17], // February of a leap year lies in the whole month
      ['2027-01-15', '2027-03-01', 1, 17], // and of a common year
      ['2027-01-31', '2027-03-31', 2, 0], // the same date, two months on
      ['2027-01-31', '2027-03-01', 1, 1], // back one month from March 1 is February 1
      ['2027-01-30', '2027-03-30', 2, 0],
      ['2027-01-30', '2027-05-31', 4, 1], // back four months from May 31 is January 31: one odd day
      ['2027-02-28', '2027-03-30', 1, 0], // back one month from March 30 is February's last day
    ];
    for (const [consummation, firstPayment, fullMonths, oddDays] of table) {
      expect(firstPeriodBetween(consummation, firstPayment), `${consummation} → ${firstPayment}`).toEqual({ fullMonths, oddDays });
    }
  });

  it('refuses a first payment less than a month after consummation, on it, or before it, and what is not a date', () => {
    for (const [consummation, firstPayment] of [
      ['2027-01-10', '2027-02-01'],
      ['2027-03-31', '2027-04-30'], // back one month from April 30 is March 30: a day short
      ['2027-02-01', '2027-02-01'],
      ['2027-03-01', '2027-02-01'],
      ['2027-01-01', '2027-02-30'],
      ['2027-1-1', '2027-03-01'],
      ['2027-01-01', ''],
    ] as const) {
      expect(() => firstPeriodBetween(consummation, firstPayment), `${consummation} → ${firstPayment}`).toThrow(RangeError);
    }
    expect(() => firstPeriodBetween('2027-01-10', '2027-02-01')).toThrow('the first payment (2027-02-01) must fall at least one month after consummation (2027-01-10)');
  });

  it('for any dates a month or more apart: whole months of the calendar difference or one fewer, and 0 to 30 odd days that are the days to the first whole month', () => {
    const day = 86_400_000;
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1) / day, max: Date.UTC(2060, 0, 1) / day }), fc.integer({ min: 31, max: 800 }), (start, length) => {
        const consummation = new Date(start * day).toISOString().slice(0, 10);
        const firstPayment = new Date((start + length) * day).toISOString().slice(0, 10);
        const { fullMonths, oddDays } = firstPeriodBetween(consummation, firstPayment);
        const calendarMonths = (Number(firstPayment.slice(0, 4)) - Number(consummation.slice(0, 4))) * 12 + Number(firstPayment.slice(5, 7)) - Number(consummation.slice(5, 7));
        expect([calendarMonths, calendarMonths - 1]).toContain(fullMonths);
        expect(fullMonths).toBeGreaterThanOrEqual(1);
        expect(oddDays).toBeGreaterThanOrEqual(0);
        expect(oddDays).toBeLessThanOrEqual(30);
        // The whole months cover the rest of the days: at least 28 and at most 31 a month.
        expect(length - oddDays).toBeGreaterThanOrEqual(28 * fullMonths);
        expect(length - oddDays).toBeLessThanOrEqual(31 * fullMonths);
      }),
      { numRuns: 2000 },
    );
  });

  it('a consummation on the same day of the month as the first payment (the 1st to the 28th) has no odd days', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2000, max: 2060 }), fc.integer({ min: 0, max: 11 }), fc.integer({ min: 1, max: 28 }), fc.integer({ min: 1, max: 60 }), (year, month, dayOfMonth, months) => {
        const iso = (index: number) => `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}-${String(dayOfMonth).padStart(2, '0')}`;
        const start = year * 12 + month;
        expect(firstPeriodBetween(iso(start), iso(start + months))).toEqual({ fullMonths: months, oddDays: 0 });
      }),
    );
  });
});
