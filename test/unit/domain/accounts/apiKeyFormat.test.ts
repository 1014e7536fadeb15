/**
 * The API key secret (src/domain/accounts/apiKeyFormat.ts): a scannable prefix, at least 128
 * random bits, and a checksum that turns away mistyped keys without a database look-up.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LIVE_KEY_PREFIX as API_KEY_PREFIX,
  TEST_KEY_PREFIX,
  apiKeyHint,
  apiKeyLivemode,
  generateApiKey as generateAnyApiKey,
  hashApiKey,
  isWellFormedApiKey,
} from '../../../../src/domain/accounts/apiKeyFormat.ts';

const generateApiKey = () => generateAnyApiKey(true);

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = /^mos_live_[0-9A-Za-z]{38}$/;

describe('generateApiKey', () => {
  it('makes keys of the form mos_live_ + 38 base62 characters that pass their own check', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(SHAPE);
      expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(isWellFormedApiKey(key)).toBe(true);
    }
  });

  it('makes test-mode keys mos_test_ + the same 38 characters, and each prefix names its mode', () => {
    for (let i = 0; i < 50; i++) {
      const test = generateAnyApiKey(false);
      expect(test).toMatch(/^mos_test_[0-9A-Za-z]{38}$/);
      expect(isWellFormedApiKey(test)).toBe(true);
      expect(apiKeyLivemode(test)).toBe(false);
      expect(apiKeyLivemode(generateApiKey())).toBe(true);
      expect(apiKeyHint(test)).toBe(`mos_test_…${test.slice(-4)}`);
      // The checksum covers the random part only: the same body under the other prefix is the other mode's key shape.
      expect(isWellFormedApiKey(`${API_KEY_PREFIX}${test.slice(TEST_KEY_PREFIX.length)}`)).toBe(true);
    }
  });

  it('draws at least 128 bits: 32 random characters, each of the 62 equally likely', () => {
    const samples = 4000;
    const counts = new Map<string, number>();
    const keys = new Set<string>();
    for (let i = 0; i < samples; i++) {
      const key = generateApiKey();
      keys.add(key);
      for (const ch of key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 32)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(keys.size).toBe(samples);
    expect([...counts.keys()].sort().join('')).toBe([...ALPHABET].sort().join(''));
    expect(32 * Math.log2(counts.size)).toBeGreaterThanOrEqual(128);
    // Uniform: each character's share of 128,000 draws is within 12% of 1/62 (a modulo bias
    // toward the first characters, the classic mistake, would show here as ~25% extra).
    const expected = (samples * 32) / 62;
    for (const [ch, count] of counts) expect(Math.abs(count - expected) / expected, `character ${ch}`).toBeLessThan(0.12);
  });
});

describe('isWellFormedApiKey', () => {
  it('rejects every one-character substitution anywhere after the prefix', () => {
    const key = generateApiKey();
    const body = key.slice(API_KEY_PREFIX.length);
    let checked = 0;
    for (let i = 0; i < body.length; i++) {
      for (const ch of ALPHABET) {
        if (ch === body[i]) continue;
        const typo = API_KEY_PREFIX + body.slice(0, i) + ch + body.slice(i + 1);
        expect(isWellFormedApiKey(typo), typo).toBe(false);
        checked++;
      }
    }
    expect(checked).toBe(38 * 61);
  });

  it('rejects swapped neighbouring characters, a dropped character and an extra one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 36 }), (i) => {
        const key = generateApiKey();
        const body = key.slice(API_KEY_PREFIX.length);
        if (body[i] !== body[i + 1]) {
          const swapped = body.slice(0, i) + body[i + 1] + body[i] + body.slice(i + 2);
          expect(isWellFormedApiKey(API_KEY_PREFIX + swapped)).toBe(false);
        }
        expect(isWellFormedApiKey(API_KEY_PREFIX + body.slice(0, i) + body.slice(i + 1))).toBe(false);
        expect(isWellFormedApiKey(API_KEY_PREFIX + body.slice(0, i) + 'A' + body.slice(i))).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects other prefixes, other alphabets and lookalikes', () => {
    const body = generateApiKey().slice(API_KEY_PREFIX.length);
    for (const candidate of [
      `mos_prod_${body}`,
      `MOS_LIVE_${body}`,
      `MOS_TEST_${body}`,
      `mos_live-${body}`,
      `mos_live_${body.slice(0, -1)}_`,
      `mos_live_${body} `,
      `bnk_tok_${body}`,
      '',
      'mos_live_',
    ]) {
      expect(isWellFormedApiKey(candidate), JSON.stringify(candidate)).toBe(false);
    }
  });
});

describe('hashApiKey and apiKeyHint', () => {
  it('stores the SHA-256 of the whole key in hex, and hints with the prefix and last four characters', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(apiKeyHint(key)).toBe(`mos_live_…${key.slice(-4)}`);
    expect(apiKeyHint(key)).not.toContain(key.slice(API_KEY_PREFIX.length, -4));
  });
});
