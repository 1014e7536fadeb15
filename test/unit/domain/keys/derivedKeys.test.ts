import { hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derivePurposeKey, KEY_PURPOSES } from '../../../../src/domain/keys/derivedKeys.ts';

describe('keys derived from the sealing key', () => {
  it('are HKDF-SHA-256 with the purpose as info: fixed for a key, different per key', () => {
    const key = Buffer.alloc(32, 7);
    const derived = derivePurposeKey(key, KEY_PURPOSES.auditAnchor);
    expect(derived).toHaveLength(32);
    expect(derived).toEqual(Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'mos audit anchor v1', 32)));
    expect(derived.equals(key)).toBe(false);
    expect(derivePurposeKey(Buffer.alloc(32, 8), KEY_PURPOSES.auditAnchor).equals(derived)).toBe(false);
  });
});
