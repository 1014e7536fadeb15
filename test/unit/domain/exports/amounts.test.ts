import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centsToDecimal, formatCents, integerDigits, type AmountStyle } from '../../../../src/domain/exports/amounts.ts';

describe('centsToDecimal', () => {
  it.each([
    [35_000_000, '350000'],
    [35_000_050, '350000.5'],
    [35_000_055, '350000.55'],
    [5, '0.05'],
    [50, '0.5'],
    [0, '0'],
    [-5, '-0.05'],
    [-123_456, '-1234.56'],
    [900_719_925_474_099, '9007199254740.99'],
  ])('%d cents is %s', (cents, text) => {
    expect(centsToDecimal(cents)).toBe(text);
  });

  it('is the exact decimal of cents / 100, as JSON would print that number', () => {
    fc.assert(
      fc.property(fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (cents) => {
        expect(centsToDecimal(cents)).toBe(new Decimal(cents).dividedBy(100).toFixed());
      }),
    );
  });

  it('refuses what is not a whole number of cents', () => {
    expect(() => centsToDecimal(1.5)).toThrow(RangeError);
    expect(() => centsToDecimal(2 ** 60)).toThrow(RangeError);
  });
});

describe('integerDigits', () => {
  it('writes any safe integer as String() does', () => {
    for (const n of [0, 9, 10, 999, 1000, 1001, 999_999, 1_000_000, 999_999_999, 1e9, -1, -1000, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
      expect(integerDigits(n)).toBe(String(n));
    }
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER })), (n) => {
        expect(integerDigits(n)).toBe(String(n));
      }),
    );
  });
});

describe('formatCents', () => {
  const european: AmountStyle = { decimalSeparator: ',', thousandsSeparator: '.', decimals: 'two' };
  it.each([
    [123_456_789, european, '1.234.567,89'],
    [100, european, '1,00'],
    [100_000, european, '1.000,00'],
    [35_000_000, { decimalSeparator: '.', thousandsSeparator: ',', decimals: 'minimal' } as AmountStyle, '350,000'],
    [35_000_050, { decimalSeparator: '.', thousandsSeparator: "'", decimals: 'minimal' } as AmountStyle, "350'000.5"],
    [12_345, { decimalSeparator: '.', thousandsSeparator: ' ', decimals: 'two' } as AmountStyle, '123.45'],
    [-123_456_789, { decimalSeparator: '.', thousandsSeparator: ',', decimals: 'two' } as AmountStyle, '-1,234,567.89'],
  ])('%d cents in %o is %s', (cents, style, text) => {
    expect(formatCents(cents, style)).toBe(text);
  });

  it('reads back to the same amount once its separators are undone', () => {
    const style = fc.record({
      decimalSeparator: fc.constantFrom<'.' | ','>('.', ','),
      thousandsSeparator: fc.constantFrom('', ',', '.', ' ', "'"),
      decimals: fc.constantFrom<'minimal' | 'two'>('minimal', 'two'),
    }).filter((s) => s.thousandsSeparator !== s.decimalSeparator);
    fc.assert(
      fc.property(fc.integer({ min: -1e15, max: 1e15 }), style, (cents, s) => {
        const text = formatCents(cents, s);
        const plain = text.split(s.thousandsSeparator === '' ? /(?!)/ : s.thousandsSeparator).join('').replace(s.decimalSeparator, '.');
        expect(new Decimal(plain).times(100).toNumber()).toBe(cents);
        if (s.decimals === 'two') expect(text).toMatch(new RegExp(`\\${s.decimalSeparator}\\d{2}$`));
      }),
    );
  });
});
