import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMoney, fromCents, hasAtMostDecimals, toCents } from '../../../src/domain/applications/money.ts';

describe('money conversions', () => {
  it('cents round-trip through major units exactly for every amount up to 100 million', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_000 }), (cents) => {
        expect(toCents(fromCents(cents))).toBe(cents);
      }),
    );
  });

  it.each([
    [0.1, 10],
    [1234.56, 123456],
    [1234.565, 123457],
    [0.29, 29],
    [832750, 83275000],
  ])('%s major units are %s cents (half-up, no binary drift)', (major, cents) => {
    expect(toCents(major)).toBe(cents);
  });

  it.each([
    [350000, 2, true],
    [350000.12, 2, true],
    [350000.123, 2, false],
    [0.1 + 0.2, 2, false],
    [43.125, 3, true],
    [43.1255, 3, false],
    [Number.NaN, 2, false],
  ])('%s has at most %s decimals: %s', (value, places, expected) => {
    expect(hasAtMostDecimals(value, places)).toBe(expected);
  });

  it.each([
    [350000, '350,000.00'],
    [832750, '832,750.00'],
    [1249125.5, '1,249,125.50'],
    [0.005, '0.01'],
    [999.99, '999.99'],
  ])('formats %s as %s', (value, text) => {
    expect(formatMoney(value)).toBe(text);
  });
});
