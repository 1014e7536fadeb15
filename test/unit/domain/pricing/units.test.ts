import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalPlaces, hasAtMostDecimals, multiplyDivideHalfUp, toScaled } from '../../../../src/domain/pricing/units.ts';
import { hasAtMostDecimals as oracleHasAtMostDecimals } from '../../../reference/pricing/quote.ts';

describe('decimalPlaces', () => {
  it('counts the decimals decimal.js reads in a JSON number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer().map((n) => n / 1000), fc.integer().map((n) => n / 100)), (value) => {
        expect(decimalPlaces(value)).toBe(new Decimal(value).decimalPlaces());
        expect(hasAtMostDecimals(value, 2)).toBe(oracleHasAtMostDecimals(value, 2));
      }),
      { numRuns: 5000, examples: [[0.1 + 0.2], [1e-7], [1.5e-7], [1e21], [1.2345e25], [-0], [350_000.29], [5e-324]] },
    );
  });
});

describe('toScaled', () => {
  it('gives the exact integer of a number with at most that many decimals, and refuses one with more', () => {
    expect([toScaled(350_000.29, 2), toScaled(6.125, 3), toScaled(999_999_999.99, 2), toScaled(-0.25, 3)]).toEqual([35_000_029, 6_125, 99_999_999_999, -250]);
    expect(() => toScaled(0.125, 2)).toThrow(RangeError);
  });
});

describe('multiplyDivideHalfUp', () => {
  it('rounds the exact quotient half-up, in doubles and beyond them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999_999_999 }), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 99_999_999_999 }), (a, b, d) => {
        expect(multiplyDivideHalfUp(a, b, d)).toBe(Number((2n * BigInt(a) * BigInt(b) + BigInt(d)) / (2n * BigInt(d))));
      }),
      { numRuns: 2000 },
    );
  });
});
