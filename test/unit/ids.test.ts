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

describe('monotonicUlid', () => {
  it('gives the ulid package\'s monotonic ids (lowercase) for the same random numbers and times', async () => {
    const fc = (await import('fast-check')).default;
    const { monotonicFactory } = await import('ulid');
    const { monotonicUlid } = await import('../../src/ids.ts');
    const base = Date.parse('2026-11-26T04:00:00Z');
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -3, max: 3 }).map((d) => base + d), fc.constant(0), fc.integer({ min: 1, max: 2 ** 48 - 1 })), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: 1, maxLength: 64 }),
        (times, randoms) => {
          let a = 0;
          let b = 0;
          const ours = monotonicUlid(() => randoms[a++ % randoms.length]!);
          const theirs = monotonicFactory(() => randoms[b++ % randoms.length]! / 2 ** 32);
          // A time of 0 means "now" to both: give both the same now.
          const now = base + 10;
          const realNow = Date.now;
          Date.now = () => now;
          try {
            const outcome = (make: () => string) => {
              try {
                return make().toLowerCase();
              } catch {
                return 'threw';
              }
            };
            for (const time of times) expect(outcome(() => ours(time))).toBe(outcome(() => theirs(time)));
          } finally {
            Date.now = realNow;
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
