/**
 * The quote store converts money and percentages without decimal.js now; these pin that every
 * conversion is the one decimal.js made (`new Decimal(x).times(100)` with its integer check,
 * `new Decimal(c).div(100).toNumber()`, `new Decimal(x).toString()`).
 */
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cents, major, percentText } from '../../../src/store/quotes.ts';

function decimalCents(amount: number): number | 'refused' {
  const value = new Decimal(amount).times(100);
  return value.isInteger() ? value.toNumber() : 'refused';
}

const attempt = (f: () => number): number | 'refused' => {
  try {
    return f();
  } catch (err) {
    if (err instanceof RangeError) return 'refused';
    throw err;
  }
};

describe('quote store conversions', () => {
  it('turn major units into cents exactly as decimal.js did, refusing the same numbers', () => {
    const amounts = fc.oneof(
      fc.integer({ min: -100_000_000_000, max: 100_000_000_000 }).map((c) => c / 100),
      fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }).map((c) => c / 1000),
      fc.double({ min: -1e12, max: 1e12, noNaN: true }),
    );
    fc.assert(
      fc.property(amounts, (amount) => {
        expect(attempt(() => cents(amount))).toBe(decimalCents(amount));
      }),
      { numRuns: 5000, examples: [[0.1 + 0.2], [350_000.29], [0.07], [1.005], [-0], [999_999_999.99]] },
    );
  });

  it('turn cents into the JSON number decimal.js gave', () => {
    fc.assert(
      fc.property(fc.integer({ min: -100_000_000_000, max: 100_000_000_000 }), (c) => {
        expect(Object.is(major(c), new Decimal(c).div(100).toNumber())).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('write a percentage as the decimal text decimal.js wrote', () => {
    const percents = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }).map((t) => t / 1000), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(percents, (value) => {
        expect(percentText(value)).toBe(new Decimal(value).toString());
      }),
      { numRuns: 5000, examples: [[0], [-0], [1e-7], [0.000001], [1e21], [6.611], [5e-324]] },
    );
  });
});
