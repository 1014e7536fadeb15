import { describe, expect, it } from 'vitest';
import { isId, newId } from '../../src/ids.ts';

describe('newId', () => {
  it('is the prefix, a hyphen and 26 lowercase Crockford base32 characters', () => {
    const id = newId('mtg');
    expect(id).toMatch(/^mtg-[0-9a-hjkmnp-tv-z]{26}$/);
    expect(isId('mtg', id)).toBe(true);
    expect(isId('qte', id)).toBe(false);
  });

  it('sorts by creation time, so newest-first lists can order by id', () => {
    const earlier = newId('key', Date.parse('2026-01-01T00:00:00Z'));
    const later = newId('key', Date.parse('2026-06-01T00:00:00Z'));
    expect(earlier < later).toBe(true);
  });

  it('never repeats, even within one millisecond', () => {
    const now = Date.now();
    const ids = Array.from({ length: 20_000 }, () => newId('req', now));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
