/**
 * The oracle's own credentials: before it can judge the production pricing, the decimal.js
 * pricing of this folder must itself agree with published figures and with arithmetic done step
 * by step in decimals. (Production is held to the oracle in test/unit/domain/pricing/.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amortizationSchedule, monthlyPayment } from './amortization.ts';
import { solveApr, type PaymentRun } from './apr.ts';
import { Dec } from './decimal.ts';

const d = (value: number | string) => new Dec(value);
const run = (amount: number | string, count: number): PaymentRun => ({ amount: d(amount), count });

describe('the oracle', () => {
  it.each([
    [200_000, 6, 30, '1199.1'],
    [200_000, 7.5, 15, '1854.02'],
    [180_000, 4.25, 30, '885.49'],
    [100_000, 5, 30, '536.82'],
  ])('pays the lenders’ tables’ payment: %d at %d %% over %d years, %s a month', (principal, rate, years, payment) => {
    expect(monthlyPayment(d(principal), d(rate), years).toString()).toBe(payment);
  });

  // 12 CFR 1026 Appendix J (c)(1)(i): amount advanced 5,000, 24 monthly payments of 230, regular first period: 9.69 %.
  it('gives 9.686 % for 5,000 repaid by 24 monthly payments of 230 (Appendix J (c)(1)(i))', () => {
    expect(solveApr(d(5000), [run(230, 24)]).apr.toString()).toBe('9.686');
  });

  // Monthly-payment actuarial APRs from a published consumer-loan rate chart (3-508B loan chart,
  // effective 2014-07-01: advance, equal monthly payments, APR to two decimals).
  it.each([
    [20, 2, 12, '156.79'],
    [30, 3, 12, '116.41'],
    [40, 4, 12, '92.57'],
    [50, 5, 12, '76.83'],
    [60, 6, 12, '65.66'],
    [70, 7, 12, '57.33'],
  ])('gives the chart’s APR for %d advanced, repaid by %d monthly payments of %d: %s %%', (advance, count, payment, expected) => {
    // The chart states the exact rate to two decimals; compare with the solver's unrounded root
    // (rounding the three-decimal APR again would round twice: 156.7949 → 156.795 → 156.80).
    const { monthlyRate } = solveApr(d(advance), [run(payment, count)]);
    expect(monthlyRate.times(1200).toDecimalPlaces(2).toString()).toBe(expected);
  });

  it('walks the schedule as a step-by-step decimal computation does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 5_000_000_000 }), fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 40 }), (cents, t, years) => {
        const [principal, rate] = [d(cents).div(100), d(t).div(1000)];
        const payment = monthlyPayment(principal, rate, years);
        let balance = principal;
        for (const row of amortizationSchedule(principal, rate, years)) {
          // balance × rate / 1200, divided last: a monthly rate rounded first (rate / 1200 repeats)
          // can land just under a half cent that the exact product reaches.
          const interest = balance.times(rate).div(1200).toDecimalPlaces(2, Dec.ROUND_HALF_UP);
          const owed = balance.plus(interest);
          const paid = row.number === years * 12 || owed.lessThanOrEqualTo(payment) ? owed : payment;
          balance = balance.minus(paid.minus(interest));
          expect([row.interest.toString(), row.payment.toString(), row.balance.toString()]).toEqual([interest.toString(), paid.toString(), balance.toString()]);
        }
        expect(balance.isZero()).toBe(true);
      }),
      // The first example is a half-cent case fast-check found: month 30 owes exactly 5,481.495 in interest.
      { numRuns: 100, examples: [[1610081900, 2050, 3]] },
    );
  });
});
