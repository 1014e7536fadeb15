import { describe, expect, it } from 'vitest';
import { hasUliForm, isValidLei, loanIdentifierOf, uliCheckDigits, uliCheckDigitsValid, uliOf } from '../../../../src/domain/hmda/uli.ts';
import { LEI } from './fixtures.ts';

describe('ULI check digits (Regulation C, appendix C)', () => {
  it("gives appendix C's example: LEI 10Bx939c5543TqA1144M and loan 999143X have check digits 38", () => {
    expect(uliCheckDigits('10Bx939c5543TqA1144M999143X')).toBe('38');
  });

  it("validates appendix C's example ULI and refuses it with a digit changed", () => {
    expect(uliCheckDigitsValid('10Bx939c5543TqA1144M999143X38')).toBe(true);
    expect(uliCheckDigitsValid('10Bx939c5543TqA1144M999143X37')).toBe(false);
    expect(uliCheckDigitsValid('10Bx939c5543TqA1144M999133X38')).toBe(false);
  });

  it('treats letters the same in either case', () => {
    expect(uliCheckDigits('10BX939C5543TQA1144M999143X')).toBe('38');
  });

  it('pads a one-digit result with a leading zero', () => {
    // Found by search: a base whose check digits are below 10.
    let base = '';
    for (let n = 0; n < 500 && base === ''; n++) {
      const candidate = `10Bx939c5543TqA1144M${String(n).padStart(7, '0')}`;
      if (Number(uliCheckDigits(candidate)) < 10) base = candidate;
    }
    expect(base).not.toBe('');
    expect(uliCheckDigits(base)).toMatch(/^0[0-9]$/);
    expect(uliCheckDigitsValid(base + uliCheckDigits(base))).toBe(true);
  });

  it('refuses a base with anything but letters and digits', () => {
    expect(() => uliCheckDigits('10Bx939c5543TqA1144M-999')).toThrow();
  });
});

describe('the ULI of an application', () => {
  it('is the LEI, 23 characters of the id, and valid check digits: 45 characters in all', () => {
    const uli = uliOf(LEI, 'mtg-01jkq8m2x3y4z5a6b7c8d9e0fa');
    expect(uli.startsWith(LEI)).toBe(true);
    expect(uli).toHaveLength(45);
    expect(hasUliForm(uli)).toBe(true);
    expect(uliCheckDigitsValid(uli)).toBe(true);
  });

  it('keeps the last 23 characters of the id, so ids of one millisecond (which differ at the end) differ', () => {
    expect(loanIdentifierOf('mtg-01jkq8m2x3y4z5a6b7c8d9e0fa')).toBe('KQ8M2X3Y4Z5A6B7C8D9E0FA');
    expect(loanIdentifierOf('mtg-01jkq8m2x3y4z5a6b7c8d9e0fa')).not.toBe(loanIdentifierOf('mtg-01jkq8m2x3y4z5a6b7c8d9e0fb'));
  });
});

describe('LEI check digits (ISO 17442)', () => {
  it('accepts an LEI whose check digits agree and refuses one whose do not', () => {
    expect(isValidLei(LEI)).toBe(true);
    const wrong = LEI.slice(0, 18) + String((Number(LEI.slice(18)) + 1) % 100).padStart(2, '0');
    expect(isValidLei(wrong)).toBe(false);
  });

  it('refuses lower case and the wrong length', () => {
    expect(isValidLei(LEI.toLowerCase())).toBe(false);
    expect(isValidLei(LEI.slice(1))).toBe(false);
  });
});
