import { describe, expect, it } from 'vitest';
import { formatRecoveryCode, normalizeRecoveryCode, stepIsNew, totpCodeOf, totpStepAt, verificationIsFresh } from '../../../../src/domain/users/mfa.ts';

describe('TOTP steps', () => {
  it('are 30-second periods since the epoch (RFC 6238 T0 = 0, X = 30)', () => {
    expect(totpStepAt(0)).toBe(0);
    expect(totpStepAt(29_999)).toBe(0);
    expect(totpStepAt(30_000)).toBe(1);
    expect(totpStepAt(Date.parse('2026-11-02T09:00:15Z'))).toBe(Math.floor(Date.parse('2026-11-02T09:00:00Z') / 30_000));
  });

  it('a step is taken only when later than the last one taken: the same or an earlier step is a replay', () => {
    expect(stepIsNew(100, null)).toBe(true);
    expect(stepIsNew(101, 100)).toBe(true);
    expect(stepIsNew(100, 100)).toBe(false);
    expect(stepIsNew(99, 100)).toBe(false);
  });
});

describe('step-up freshness', () => {
  const at = Date.parse('2026-11-02T09:00:00Z');
  it('a check is fresh for 10 minutes, never before it happened, and a session that never checked is not', () => {
    expect(verificationIsFresh(null, at)).toBe(false);
    expect(verificationIsFresh(new Date(at).toISOString(), at)).toBe(true);
    expect(verificationIsFresh(new Date(at).toISOString(), at + 10 * 60_000 - 1)).toBe(true);
    expect(verificationIsFresh(new Date(at).toISOString(), at + 10 * 60_000)).toBe(false);
    expect(verificationIsFresh(new Date(at + 1).toISOString(), at)).toBe(false);
  });
});

describe('recovery codes', () => {
  it('are 16 characters of Crockford base32 (80 bits) in four groups, and read back whatever the case, hyphens or spaces', () => {
    const random = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
    const code = formatRecoveryCode(random);
    expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    const plain = code.replaceAll('-', '');
    expect(normalizeRecoveryCode(code)).toBe(plain);
    expect(normalizeRecoveryCode(` ${code.toUpperCase().replaceAll('-', ' ')} `)).toBe(plain);
    expect(() => formatRecoveryCode(new Uint8Array(15))).toThrow(RangeError);
  });

  it('letters people confuse read as the digits they look like; anything else of the wrong length or alphabet is no code', () => {
    expect(normalizeRecoveryCode('OIL0-0000-0000-0000')).toBe('0110000000000000');
    expect(normalizeRecoveryCode('uuuu-0000-0000-0000')).toBeNull(); // u is not in the alphabet
    expect(normalizeRecoveryCode('0000-0000-0000')).toBeNull();
    expect(normalizeRecoveryCode('0000-0000-0000-00000')).toBeNull();
  });

  it('six digits are a TOTP code (spaces allowed); anything else is taken as a recovery code', () => {
    expect(totpCodeOf('123456')).toBe('123456');
    expect(totpCodeOf(' 123 456 ')).toBe('123456');
    expect(totpCodeOf('12345')).toBeNull();
    expect(totpCodeOf('1234567')).toBeNull();
    expect(totpCodeOf('abcd-efgh-jkmn-pqrs')).toBeNull();
  });
});
