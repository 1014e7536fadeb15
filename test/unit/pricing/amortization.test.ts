import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amortizationSchedule, amortizationSummary, monthlyPayment } from '../../../src/domain/pricing/amortization.ts';
import { monthlyPaymentCents } from '../../../src/domain/pricing/amortizationCents.ts';
import { Dec } from '../../../src/domain/pricing/decimal.ts';

const d = (value: number | string) => new Dec(value);

// Published figures (lenders' amortization tables; the first three are the issue's).
const PUBLISHED: Array<[principal: number, rate: number, years: number, payment: string]> = [
  [200_000, 6, 30, '1199.1'],
  [200_000, 7.5, 15, '1854.02'],
  [180_000, 4.25, 30, '885.49'],
  [100_000, 5, 30, '536.82'],
  [100_000, 6, 15, '843.86'],
  [250_000, 4, 30, '1193.54'],
  [300_000, 3.5, 30, '1347.13'],
  [100_000, 7, 30, '665.3'],
];

describe('monthlyPayment', () => {
  it.each(PUBLISHED)('%d at %d %% over %d years pays %s a month', (principal, rate, years, payment) => {
    expect(monthlyPayment(d(principal), d(rate), years).toString()).toBe(payment);
    // The fast path, in integer cents and thousandths of a point, states the same payment.
    expect(monthlyPaymentCents(principal * 100, rate * 1000, years)).toBe(Math.round(Number(payment) * 100));
  });

  it('at a zero rate is the principal over the number of months, rounded half-up', () => {
    expect(monthlyPayment(d(100_000), d(0), 30).toString()).toBe('277.78'); // 277.777…
    expect(monthlyPayment(d(1_000), d(0), 1).toString()).toBe('83.33'); // 83.333…
    expect(monthlyPayment(d(1_000.02), d(0), 1).toString()).toBe('83.34'); // 83.335 → half-up
    expect([monthlyPaymentCents(10_000_000, 0, 30), monthlyPaymentCents(100_000, 0, 1), monthlyPaymentCents(100_002, 0, 1)]).toEqual([27_778, 8_333, 8_334]);
  });

  it('refuses a term that is not a whole number of years', () => {
    expect(() => monthlyPayment(d(1000), d(5), 0)).toThrow(RangeError);
    expect(() => monthlyPayment(d(1000), d(5), 2.5)).toThrow(RangeError);
  });
});

describe('amortizationSchedule', () => {
  it('rounds each month’s interest half-up and adjusts only the last payment (200,000 at 6 % over 30 years)', () => {
    const rows = amortizationSchedule(d(200_000), d(6), 30);
    expect(rows).toHaveLength(360);
    expect(rows[0]).toMatchObject({ number: 1 });
    expect(rows[0]!.interest.toString()).toBe('1000'); // 200,000 × 0.005
    expect(rows[0]!.principal.toString()).toBe('199.1');
    expect(rows[0]!.balance.toString()).toBe('199800.9');
    expect(rows[1]!.interest.toString()).toBe('999'); // 199,800.90 × 0.005 = 999.0045 → 999.00
    const last = rows.at(-1)!;
    expect(last.balance.isZero()).toBe(true);
    expect(last.payment.toString()).toBe('1200.14');
  });

  it('ends early, with a smaller last payment, when the rounded-up payment clears the balance before month n', () => {
    // 1,000.80 over 40 years at 0 %: 2.085 rounds up to 2.09, and 479 × 2.09 > 1,000.80.
    const rows = amortizationSchedule(d('1000.80'), d(0), 40);
    expect(rows.length).toBeLessThan(480);
    expect(rows.at(-1)!.balance.isZero()).toBe(true);
    expect(rows.at(-1)!.payment.lessThanOrEqualTo('2.09')).toBe(true);
  });
});

const loan = fc.record({
  cents: fc.integer({ min: 100_000, max: 5_000_000_000 }), // 1,000.00 to 50,000,000.00
  rateThousandths: fc.integer({ min: 0, max: 20_000 }), // 0.000 % to 20.000 %
  years: fc.integer({ min: 1, max: 40 }),
});
const principalOf = (cents: number) => d(cents).div(100);
const rateOf = (thousandths: number) => d(thousandths).div(1000);

describe('amortization properties', () => {
  it('the principal parts sum to the amount exactly and the balance ends at 0.00', () => {
    fc.assert(
      fc.property(loan, ({ cents, rateThousandths, years }) => {
        const rows = amortizationSchedule(principalOf(cents), rateOf(rateThousandths), years);
        const principalSum = rows.reduce((sum, row) => sum.plus(row.principal), d(0));
        expect(principalSum.equals(principalOf(cents))).toBe(true);
        expect(rows.at(-1)!.balance.isZero()).toBe(true);
        for (const row of rows) expect(row.balance.isNegative()).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it('every payment but the last equals monthlyPayment, and the totals are the schedule’s sums', () => {
    fc.assert(
      fc.property(loan, ({ cents, rateThousandths, years }) => {
        const principal = principalOf(cents);
        const rate = rateOf(rateThousandths);
        const rows = amortizationSchedule(principal, rate, years);
        const payment = monthlyPayment(principal, rate, years);
        for (const row of rows.slice(0, -1)) expect(row.payment.equals(payment)).toBe(true);
        expect(rows.length).toBeLessThanOrEqual(years * 12);
        const summary = amortizationSummary(principal, rate, years);
        expect(summary.numberOfPayments).toBe(rows.length);
        expect(summary.totalInterest.equals(rows.reduce((s, r) => s.plus(r.interest), d(0)))).toBe(true);
        expect(summary.totalOfPayments.equals(rows.reduce((s, r) => s.plus(r.payment), d(0)))).toBe(true);
        expect(summary.totalOfPayments.equals(principal.plus(summary.totalInterest))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('the integer-cents schedule equals a schedule computed step by step in decimal.js', () => {
    fc.assert(
      fc.property(loan, ({ cents, rateThousandths, years }) => {
        const principal = principalOf(cents);
        const rate = rateOf(rateThousandths);
        const payment = monthlyPayment(principal, rate, years);
        const n = years * 12;
        let balance = principal;
        const rows = amortizationSchedule(principal, rate, years);
        for (const row of rows) {
          // balance × rate / 1200, divided last: a monthly rate rounded first (rate / 1200 repeats)
          // can land just under a half cent that the exact product reaches.
          const interest = balance.times(rate).div(1200).toDecimalPlaces(2, Dec.ROUND_HALF_UP);
          const owed = balance.plus(interest);
          const paid = row.number === n || owed.lessThanOrEqualTo(payment) ? owed : payment;
          balance = balance.minus(paid.minus(interest));
          expect([row.interest.toString(), row.payment.toString(), row.balance.toString()]).toEqual([interest.toString(), paid.toString(), balance.toString()]);
        }
        expect(balance.isZero()).toBe(true);
      }),
      // The first example is a half-cent case fast-check found: month 30 owes exactly 5,481.495 in interest.
      { numRuns: 100, examples: [[{ cents: 1610081900, rateThousandths: 2050, years: 3 }]] },
    );
  });

  it('a longer term never raises the payment', () => {
    fc.assert(
      fc.property(loan, fc.integer({ min: 1, max: 39 }), ({ cents, rateThousandths }, shorter) => {
        const principal = principalOf(cents);
        const rate = rateOf(rateThousandths);
        for (let longer = shorter + 1; longer <= Math.min(40, shorter + 3); longer++) {
          expect(monthlyPayment(principal, rate, longer).lessThanOrEqualTo(monthlyPayment(principal, rate, shorter))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
