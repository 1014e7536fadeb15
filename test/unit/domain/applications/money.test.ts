import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMoney, fromCents, hasAtMostDecimals, toCents } from '../../../../src/domain/applications/money.ts';

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

  // The decimal.js computations these functions were, kept as the reference they must equal bit for bit.
  const reference = {
    toCents: (amount: number) => new Decimal(amount).times(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber(),
    fromCents: (cents: number) => new Decimal(cents).dividedBy(100).toNumber(),
    formatMoney: (amount: number) => {
      const [whole, fraction] = new Decimal(amount).toFixed(2, Decimal.ROUND_HALF_UP).split('.');
      return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction}`;
    },
  };
  const amounts = fc.oneof(
    fc.integer({ min: -100_000_000_000_000, max: 100_000_000_000_000 }).map((cents) => cents / 100),
    fc.integer({ min: -10_000_000_000, max: 10_000_000_000 }).map((mills) => mills / 1000),
    fc.double({ noNaN: false }),
    fc.constantFrom(0, -0, 0.005, 0.015, 2 ** 50 / 100, 2 ** 53, Number.MAX_VALUE, Infinity, -Infinity, Number.NaN),
  );

  it('toCents, fromCents and formatMoney give what decimal.js gave, for any number', () => {
    fc.assert(
      fc.property(amounts, (amount) => {
        expect(Object.is(toCents(amount), reference.toCents(amount))).toBe(true);
        expect(formatMoney(amount)).toBe(reference.formatMoney(amount));
      }),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -(2 ** 53), max: 2 ** 53 }), fc.double()), (cents) => {
        expect(Object.is(fromCents(cents), reference.fromCents(cents))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });
});
