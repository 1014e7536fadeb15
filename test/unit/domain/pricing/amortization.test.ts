import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  exactPaymentCents,
  monthlyInterestCents,
  monthlyPaymentCents,
  paymentByDoubles,
  scheduleRows,
  scheduleTotals,
  type ScheduleRowCents,
} from '../../../../src/domain/pricing/amortization.ts';
import { amortizationSchedule, amortizationSummary, monthlyPayment } from '../../../reference/pricing/amortization.ts';
import { Dec, type Decimal } from '../../../reference/pricing/decimal.ts';

/** A decimal of the oracle with at most two places as integer cents. */
const cents = (value: Decimal) => Number(value.times(100).toFixed(0));

/** The oracle's schedule in cents, row for row. */
function oracleRows(principalCents: number, rateThousandths: number, years: number): ScheduleRowCents[] {
  return amortizationSchedule(new Dec(principalCents).div(100), new Dec(rateThousandths).div(1000), years).map((row) => ({
    number: row.number,
    paymentCents: cents(row.payment),
    principalCents: cents(row.principal),
    interestCents: cents(row.interest),
    balanceCents: cents(row.balance),
  }));
}

// Published figures (lenders' amortization tables; the first three are the issue's).
const PUBLISHED: Array<[principal: number, rate: number, years: number, paymentCents: number]> = [
  [200_000, 6, 30, 119_910],
  [200_000, 7.5, 15, 185_402],
  [180_000, 4.25, 30, 88_549],
  [100_000, 5, 30, 53_682],
  [100_000, 6, 15, 84_386],
  [250_000, 4, 30, 119_354],
  [300_000, 3.5, 30, 134_713],
  [100_000, 7, 30, 66_530],
];

describe('monthlyPaymentCents', () => {
  it.each(PUBLISHED)('%d at %d %% over %d years pays %d cents a month', (principal, rate, years, payment) => {
    expect(monthlyPaymentCents(principal * 100, Math.round(rate * 1000), years)).toBe(payment);
  });

  it('at a zero rate is the principal over the number of months, rounded half-up', () => {
    expect([monthlyPaymentCents(10_000_000, 0, 30), monthlyPaymentCents(100_000, 0, 1), monthlyPaymentCents(100_002, 0, 1)]).toEqual([27_778, 8_333, 8_334]);
  });

  it('refuses a term that is not a whole number of years, and negative or fractional inputs', () => {
    expect(() => monthlyPaymentCents(100_000, 5_000, 0)).toThrow(RangeError);
    expect(() => monthlyPaymentCents(100_000, 5_000, 2.5)).toThrow(RangeError);
    expect(() => monthlyPaymentCents(-1, 5_000, 30)).toThrow(RangeError);
    expect(() => monthlyPaymentCents(100_000, 0.5, 30)).toThrow(RangeError);
  });

  it('decides a payment within a hair of a half cent from its exact value, as the oracle does', () => {
    // Found by search: each payment lies within 10^−11 (relative) of a half cent, where doubles cannot decide.
    const nearHalf: Array<[number, number, number]> = [
      [3_288_314_807, 29_345, 39],
      [3_734_696_554, 12_236, 10],
      [4_308_833_474, 18_087, 2],
      [3_447_573_007, 14_098, 4],
      [1_599_578_903, 25_968, 10],
    ];
    for (const [principal, t, years] of nearHalf) {
      expect(paymentByDoubles(principal, t, years * 12), `${principal} at ${t}`).toBeNull();
      expect(monthlyPaymentCents(principal, t, years)).toBe(cents(monthlyPayment(new Dec(principal).div(100), new Dec(t).div(1000), years)));
    }
  });

  it('states, by its exact value, the payment the doubles state wherever they can', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999_999_999 }), fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 1, max: 40 }), (principal, t, years) => {
        const byDoubles = paymentByDoubles(principal, t, years * 12);
        if (byDoubles !== null) expect(exactPaymentCents(principal, t, years * 12)).toBe(byDoubles);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('scheduleRows', () => {
  it('rounds each month’s interest half-up and adjusts only the last payment (200,000 at 6 % over 30 years)', () => {
    const rows = scheduleRows(20_000_000, 6_000, 30);
    expect(rows).toHaveLength(360);
    expect(rows[0]).toEqual({ number: 1, paymentCents: 119_910, principalCents: 19_910, interestCents: 100_000, balanceCents: 19_980_090 });
    expect(rows[1]!.interestCents).toBe(99_900); // 199,800.90 × 0.005 = 999.0045 → 999.00
    expect(rows.at(-1)).toMatchObject({ paymentCents: 120_014, balanceCents: 0 });
  });

  it('ends early, with a smaller last payment, when the rounded-up payment clears the balance before month n', () => {
    // 1,000.80 over 40 years at 0 %: 2.085 rounds up to 2.09, and 479 × 2.09 > 1,000.80.
    const rows = scheduleRows(100_080, 0, 40);
    expect(rows.length).toBeLessThan(480);
    expect(rows.at(-1)!.balanceCents).toBe(0);
    expect(rows.at(-1)!.paymentCents).toBeLessThanOrEqual(209);
  });

  it('gives every row the oracle gives (payment, principal, interest, balance), for a spread of loans', () => {
    const corners: Array<[number, number, number]> = [
      [20_000_000, 6_000, 30], // the example
      [35_000_000, 6_500, 30], // the default sheet's example quote
      [1_610_081_900, 2_050, 3], // month 30 owes exactly 5,481.495 in interest
      [100_080, 0, 40], // ends early
      [1, 0, 1], // the smallest amount the contract allows
      [1, 50_000, 40],
      [99_999_999_999, 50_000, 40], // the largest amount at the highest rate: the BigInt walk
      [99_999_999_999, 0, 1],
      [3_288_314_807, 29_345, 39], // a payment within a hair of a half cent
    ];
    for (const [principal, t, years] of corners) expect(scheduleRows(principal, t, years), `${principal} at ${t} over ${years}`).toEqual(oracleRows(principal, t, years));
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 100_000, max: 5_000_000_000 }), fc.integer({ min: 1, max: 99_999_999_999 })),
        fc.oneof(fc.integer({ min: 0, max: 30_000 }), fc.integer({ min: 0, max: 50_000 })),
        fc.integer({ min: 1, max: 40 }),
        (principal, t, years) => {
          expect(scheduleRows(principal, t, years)).toEqual(oracleRows(principal, t, years));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('sums to its totals, repays the amount exactly and never leaves a negative balance', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999_999_999 }), fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 1, max: 40 }), (principal, t, years) => {
        const rows = scheduleRows(principal, t, years);
        const totals = scheduleTotals(principal, t, years);
        const sum = (pick: (row: ScheduleRowCents) => number) => rows.reduce((total, row) => total + pick(row), 0);
        expect(sum((row) => row.principalCents)).toBe(principal);
        expect(rows.at(-1)!.balanceCents).toBe(0);
        for (const row of rows) expect(row.balanceCents).toBeGreaterThanOrEqual(0);
        for (const row of rows.slice(0, -1)) expect(row.paymentCents).toBe(totals.monthlyPaymentCents);
        expect(rows.length).toBeLessThanOrEqual(years * 12);
        expect(totals).toEqual({
          monthlyPaymentCents: monthlyPaymentCents(principal, t, years),
          numberOfPayments: rows.length,
          lastPaymentCents: rows.at(-1)!.paymentCents,
          totalInterestCents: sum((row) => row.interestCents),
          totalOfPaymentsCents: sum((row) => row.paymentCents),
        });
        expect(totals.totalOfPaymentsCents).toBe(principal + totals.totalInterestCents);
      }),
      { numRuns: 200 },
    );
  });

  it('a longer term never raises the payment', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 5_000_000_000 }), fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 39 }), (principal, t, shorter) => {
        for (let longer = shorter + 1; longer <= Math.min(40, shorter + 3); longer++) {
          expect(monthlyPaymentCents(principal, t, longer)).toBeLessThanOrEqual(monthlyPaymentCents(principal, t, shorter));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('scheduleTotals', () => {
  it('equal the oracle’s payment and totals over the whole space', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 5_000_000_000 }), fc.integer({ min: 0, max: 30_000 }), fc.integer({ min: 1, max: 40 }), (principal, t, years) => {
        const [p, r] = [new Dec(principal).div(100), new Dec(t).div(1000)];
        const oracle = amortizationSummary(p, r, years);
        const totals = scheduleTotals(principal, t, years);
        expect(totals).toEqual({
          monthlyPaymentCents: cents(monthlyPayment(p, r, years)),
          numberOfPayments: oracle.numberOfPayments,
          lastPaymentCents: cents(oracle.lastPayment),
          totalInterestCents: cents(oracle.totalInterest),
          totalOfPaymentsCents: cents(oracle.totalOfPayments),
        });
      }),
      { numRuns: 3000, examples: [[1_610_081_900, 2_050, 3], [100_002, 0, 1], [100_080, 0, 40], [100_000, 1, 1]] },
    );
  });

  it('take BigInt beyond exact doubles and still agree (999,999,999.99 at 50 %)', () => {
    const oracle = amortizationSummary(new Dec('999999999.99'), new Dec(50), 40);
    const totals = scheduleTotals(99_999_999_999, 50_000, 40);
    expect([totals.totalInterestCents, totals.lastPaymentCents, totals.numberOfPayments]).toEqual([
      cents(oracle.totalInterest),
      cents(oracle.lastPayment),
      oracle.numberOfPayments,
    ]);
  });
});

describe('monthlyInterestCents', () => {
  it('rounds each month’s interest half-up exactly, on and beside every kind of boundary', () => {
    const D = 1_200_000n;
    const exact = (balance: number, t: number) => Number((2n * BigInt(balance) * BigInt(t) + D) / (2n * D));
    // Balances whose interest is exactly k + ½ cent, exactly k cents, and one cent either side, up to the
    // largest balance the walk takes in doubles (2·balance·t + D < 2^52).
    for (const t of [1, 7, 999, 6_125, 25_000, 30_000, 50_000]) {
      const largest = Math.floor((2 ** 52 - 1 - 1_200_000) / (2 * t));
      for (const k of [0, 1, 2, 1_000, 123_457, Math.floor((largest * t) / 1_200_000) - 1]) {
        for (const numerator of [k * 1_200_000 + 600_000, k * 1_200_000]) {
          if (numerator % t !== 0) continue;
          const balance = numerator / t;
          for (const b of [balance - 1, balance, balance + 1]) {
            if (b >= 0 && b <= largest) expect(monthlyInterestCents(b, t), `${b} at ${t}`).toBe(exact(b, t));
          }
        }
      }
      for (const b of [0, 1, largest - 1, largest]) expect(monthlyInterestCents(b, t), `${b} at ${t}`).toBe(exact(b, t));
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 50_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (t, share) => {
        const largest = t === 0 ? 5_000_000_000 : Math.floor((2 ** 52 - 1 - 1_200_000) / (2 * t));
        const balance = Math.floor(share * largest);
        expect(monthlyInterestCents(balance, t)).toBe(exact(balance, t));
      }),
      { numRuns: 20_000 },
    );
  });
});
