import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amortizationSummary } from '../../../src/domain/pricing/amortization.ts';
import { presentValue, solveApr, solveAprOnBracket, type PaymentRun } from '../../../src/domain/pricing/apr.ts';
import { Dec } from '../../../src/domain/pricing/decimal.ts';

const d = (value: number | string) => new Dec(value);
const run = (amount: number | string, count: number): PaymentRun => ({ amount: d(amount), count });

/** The payment stream of an amortized loan: n − 1 level payments and the adjusted last one. */
function streamOf(principal: InstanceType<typeof Dec>, rate: InstanceType<typeof Dec>, years: number): PaymentRun[] {
  const s = amortizationSummary(principal, rate, years);
  return [run(s.monthlyPayment.toString(), s.numberOfPayments - 1), run(s.lastPayment.toString(), 1)];
}

/** The APR in percent, stated to three decimals (half-up): what a quote states. */
const aprOf = (...args: Parameters<typeof solveApr>) => solveApr(...args).apr;

describe('the APR (solveApr)', () => {
  // 12 CFR 1026 Appendix J (c)(1)(i): amount advanced 5,000, 24 monthly payments of 230, regular first period: 9.69 %.
  it('gives 9.69 % for 5,000 repaid by 24 monthly payments of 230 (Appendix J (c)(1)(i))', () => {
    const apr = aprOf(d(5000), [run(230, 24)]);
    expect(apr.toDecimalPlaces(2).toString()).toBe('9.69');
    expect(apr.toString()).toBe('9.686');
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

  it('with no prepaid finance charge equals the note rate of a level-payment loan (200,000 at 6 % over 30 years)', () => {
    expect(aprOf(d(200_000), streamOf(d(200_000), d(6), 30)).toString()).toBe('6');
  });

  it('counts the last payment as made, not as the level one', () => {
    // 1,000 repaid by 11 × 100 and a final 1: a last payment of 100 would give a far higher rate.
    const actual = aprOf(d(1000), [run(100, 11), run(1, 1)]);
    const level = aprOf(d(1000), [run(100, 12)]);
    expect(actual.lessThan(level)).toBe(true);
  });

  it('is 0 when the payments just repay the amount financed, and refuses payments that do not', () => {
    expect(aprOf(d(1200), [run(100, 12)]).isZero()).toBe(true);
    expect(() => aprOf(d(1300), [run(100, 12)])).toThrow(RangeError);
  });

  it('the Brent fallback finds the same root on a bracket', () => {
    const { apr, bracketWidth } = solveAprOnBracket(d(5000), [run(230, 24)], d(0), d('0.5'));
    expect(apr.toString()).toBe('9.686');
    expect(bracketWidth.lessThanOrEqualTo('1e-9')).toBe(true);
    expect(() => solveAprOnBracket(d(5000), [run(230, 24)], d('0.5'), d(1))).toThrow(RangeError);
  });

  it('reaches the same APR from a hint below the root as from 0, and ignores a hint above it', () => {
    const runs = [run(230, 24)];
    expect(solveApr(d(5000), runs, d('0.005')).apr.toString()).toBe('9.686');
    expect(solveApr(d(5000), runs, d('0.02')).apr.toString()).toBe('9.686');
  });

  it('finds a bracket for a very high rate', () => {
    // 100 advanced, repaid by 12 payments of 100: i solves Σ 100 v^k = 100, close to 100 % a month.
    const { apr } = solveApr(d(100), [run(100, 12)]);
    const monthly = apr.div(1200);
    expect(presentValue([run(100, 12)], monthly.minus('0.00001')).greaterThan(100)).toBe(true);
    expect(presentValue([run(100, 12)], monthly.plus('0.00001')).lessThan(100)).toBe(true);
  });
});

const loanWithFees = fc.record({
  cents: fc.integer({ min: 100_000, max: 5_000_000_000 }),
  rateThousandths: fc.integer({ min: 0, max: 20_000 }),
  years: fc.integer({ min: 1, max: 40 }),
  feeBasisPoints: fc.integer({ min: 1, max: 500 }), // prepaid finance charges of 0.01 % to 5 %
});

describe('APR properties', () => {
  it('is within 0.001 percentage points of the exact root: the present value changes sign across apr ± 0.001', () => {
    fc.assert(
      fc.property(loanWithFees, ({ cents, rateThousandths, years, feeBasisPoints }) => {
        const principal = d(cents).div(100);
        const financed = principal.minus(principal.times(feeBasisPoints).div(10_000).toDecimalPlaces(2));
        const runs = streamOf(principal, d(rateThousandths).div(1000), years);
        const apr = aprOf(financed, runs);
        const below = presentValue(runs, apr.minus('0.001').div(1200));
        const above = presentValue(runs, apr.plus('0.001').div(1200));
        expect(below.greaterThan(financed)).toBe(true);
        expect(above.lessThan(financed)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  // Rounding each month's interest to the cent can also lower the actual stream's rate below the
  // note rate (1,000 at 0.002 % rounds every month's interest to 0.00), by up to about 12 / amount
  // points. Prepaid finance charges of 0.1 % or more on 25,000 or more outweigh that by far.
  it('is at least the interest rate when prepaid finance charges are positive (0.1 % or more, amounts from 25,000)', () => {
    const realistic = fc.record({
      cents: fc.integer({ min: 2_500_000, max: 5_000_000_000 }),
      rateThousandths: fc.integer({ min: 0, max: 20_000 }),
      years: fc.integer({ min: 1, max: 40 }),
      feeBasisPoints: fc.integer({ min: 10, max: 500 }),
    });
    fc.assert(
      fc.property(realistic, ({ cents, rateThousandths, years, feeBasisPoints }) => {
        const principal = d(cents).div(100);
        const rate = d(rateThousandths).div(1000);
        const financed = principal.minus(principal.times(feeBasisPoints).div(10_000).toDecimalPlaces(2, Dec.ROUND_UP));
        expect(aprOf(financed, streamOf(principal, rate, years)).greaterThanOrEqualTo(rate)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  // Each month's interest is rounded to the cent, so the actual stream's exact rate drifts from the
  // note rate by at most about 0.005 × n in present value, i.e. 12 / amount percentage points
  // (1,000 over 1 year at 2.226 % is truly 2.228 %). From 25,000 up the drift stays under 0.0005 and
  // the stated APR, rounded to 0.001, within 0.001 of the rate.
  it('equals the interest rate to 0.001 when there are no prepaid finance charges (amounts from 25,000)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2_500_000, max: 5_000_000_000 }), fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 40 }), (cents, rateThousandths, years) => {
        const principal = d(cents).div(100);
        const rate = d(rateThousandths).div(1000);
        const apr = aprOf(principal, streamOf(principal, rate, years));
        expect(apr.minus(rate).abs().lessThanOrEqualTo('0.001')).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
