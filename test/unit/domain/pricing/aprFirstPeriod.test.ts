import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scheduleTotals } from '../../../../src/domain/pricing/amortization.ts';
import { REGULAR_FIRST_PERIOD, solveAprFixedPoint, type CentsRun } from '../../../../src/domain/pricing/aprFixedPoint.ts';
import { rootRoundsTo } from '../../../helpers/appendixJ.ts';

/** A priced loan's payments, with mortgage insurance on the first `insured` of them. */
const loans = fc
  .record({
    cents: fc.integer({ min: 1_000_000, max: 200_000_000 }),
    t: fc.integer({ min: 0, max: 15_000 }),
    years: fc.integer({ min: 1, max: 40 }),
    prepaidBasisPoints: fc.integer({ min: 0, max: 800 }),
    insuranceCents: fc.integer({ min: 0, max: 50_000 }),
    insuredShare: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ cents, t, years, prepaidBasisPoints, insuranceCents, insuredShare }) => {
    const totals = scheduleTotals(cents, t, years);
    const insured = Math.floor(insuredShare * (totals.numberOfPayments - 1));
    const runs: CentsRun[] = [
      { amountCents: totals.monthlyPaymentCents + insuranceCents, count: insured },
      { amountCents: totals.monthlyPaymentCents, count: totals.numberOfPayments - 1 - insured },
      { amountCents: totals.lastPaymentCents, count: 1 },
    ];
    return { financed: cents - Math.floor((cents * prepaidBasisPoints) / 10_000), runs, t };
  });
const firstPeriods = fc.record({ fullMonths: fc.integer({ min: 1, max: 3 }), oddDays: fc.integer({ min: 0, max: 30 }) });

describe('the APR with an odd first period (Appendix J (b)(8), consummation to the first payment)', () => {
  it('a regular first period, one month and no odd days, states what the search always has', () => {
    fc.assert(
      fc.property(loans, ({ financed, runs, t }) => {
        expect(solveAprFixedPoint(financed, runs, t, REGULAR_FIRST_PERIOD)).toBe(solveAprFixedPoint(financed, runs, t));
      }),
      { numRuns: 200 },
    );
  });

  it('states the root of the equation, rounded to the thousandth: the equation written out on its own (test/helpers/appendixJ.ts) brackets it', () => {
    fc.assert(
      fc.property(loans, firstPeriods, ({ financed, runs, t }, firstPeriod) => {
        expect(rootRoundsTo(runs, financed, solveAprFixedPoint(financed, runs, t, firstPeriod), firstPeriod)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('the later the first payment, the lower the APR of the same payments; thirty odd days are a whole month', () => {
    fc.assert(
      fc.property(loans, fc.integer({ min: 0, max: 29 }), ({ financed, runs, t }, oddDays) => {
        const apr = (fullMonths: number, days: number) => solveAprFixedPoint(financed, runs, t, { fullMonths, oddDays: days });
        expect(apr(1, oddDays + 1)).toBeLessThanOrEqual(apr(1, oddDays));
        expect(apr(1, 30)).toBe(apr(2, 0));
        expect(apr(2, oddDays)).toBeLessThanOrEqual(apr(1, oddDays));
      }),
      { numRuns: 100 },
    );
  });

  it('a loan with no finance charge has an APR of 0 whatever its first period', () => {
    expect(solveAprFixedPoint(120_000, [{ amountCents: 10_000, count: 12 }], 0, { fullMonths: 2, oddDays: 17 })).toBe(0);
  });

  it('refuses a first period shorter than a month, odd days outside 0 to 30, and what is not a whole number', () => {
    const runs = [{ amountCents: 10_000, count: 12 }];
    for (const firstPeriod of [
      { fullMonths: 0, oddDays: 20 },
      { fullMonths: 1, oddDays: 31 },
      { fullMonths: 1, oddDays: -1 },
      { fullMonths: 1.5, oddDays: 0 },
      { fullMonths: 1, oddDays: Number.NaN },
    ]) {
      expect(() => solveAprFixedPoint(110_000, runs, 0, firstPeriod), JSON.stringify(firstPeriod)).toThrow(/^a first period is one or more whole months and 0 to 30 odd days, got /);
    }
  });
});
