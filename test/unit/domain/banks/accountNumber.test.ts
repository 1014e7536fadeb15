import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accountMask,
  accountNumberDigest,
  accountNumbersMatch,
  isWellFormedAccountNumber,
} from '../../../../src/domain/banks/accountNumber.ts';

const key = randomBytes(32);
const accountNumber = fc.stringMatching(/^[0-9A-Z]{4,34}$/);

describe('isWellFormedAccountNumber', () => {
  it.each([
    ['000123456789', true],
    ['DE89370400440532013000', true],
    ['1234', true],
    ['123', false],
    ['0001 2345 6789', false],
    ['000-123', false],
    ['1'.repeat(35), false],
    ['', false],
  ])('%j is well formed: %s', (value, expected) => {
    expect(isWellFormedAccountNumber(value)).toBe(expected);
  });
});

describe('accountMask', () => {
  it('is the last four characters, upper case', () => {
    expect(accountMask('000123456789')).toBe('6789');
    expect(accountMask('de89370400440532013abc')).toBe('3ABC');
  });
});

describe('accountNumbersMatch', () => {
  it('matches the same number, and an IBAN regardless of case', () => {
    expect(accountNumbersMatch(key, '000123456789', '000123456789')).toBe(true);
    expect(accountNumbersMatch(key, 'de89370400440532013000', 'DE89370400440532013000')).toBe(true);
  });

  it('does not match a number differing in one digit, a leading zero or length', () => {
    expect(accountNumbersMatch(key, '000123456789', '000123456780')).toBe(false);
    expect(accountNumbersMatch(key, '00123456789', '000123456789')).toBe(false);
    expect(accountNumbersMatch(key, '000123456789', '0001234567890')).toBe(false);
  });

  it('matches exactly when the numbers are equal (property)', () => {
    fc.assert(
      fc.property(accountNumber, accountNumber, (a, b) => {
        expect(accountNumbersMatch(key, a, b)).toBe(a === b);
        expect(accountNumbersMatch(key, a, a)).toBe(true);
      }),
    );
  });
});

describe('accountNumberDigest', () => {
  it('is 32 bytes that depend on the key and never contain the number', () => {
    const digest = accountNumberDigest(key, '000123456789');
    expect(digest).toHaveLength(32);
    expect(digest.equals(accountNumberDigest(randomBytes(32), '000123456789'))).toBe(false);
    expect(digest.toString('hex')).not.toContain('000123456789');
  });
});
