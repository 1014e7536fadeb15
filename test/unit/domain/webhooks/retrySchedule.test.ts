import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAILING_ENDPOINT_DISABLE_AFTER_MS,
  JITTER,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  RETRY_DELAYS_MS,
  attemptVerdict,
  failingTooLong,
  nextAttemptAt,
  parseRetryAfter,
} from '../../../../src/domain/webhooks/retrySchedule.ts';

const NOW = new Date('2026-11-21T18:30:00.000Z');
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

describe('nextAttemptAt', () => {
  it.each([
    // attempt that failed, random, expected delay (ms) or null
    [1, 0.5, 5 * S],
    [2, 0.5, 5 * MIN],
    [3, 0.5, 30 * MIN],
    [4, 0.5, 2 * H],
    [5, 0.5, 5 * H],
    [6, 0.5, 10 * H],
    [7, 0.5, 10 * H],
    [8, 0.5, null],
    [9, 0.5, null],
    [1, 0, 4.5 * S],
    [1, 0.999_999, 5.5 * S - 0.011],
    [4, 0, 1.8 * H],
    [7, 0.25, 9.5 * H],
  ] as const)('after failed attempt %i with random %d: %s ms later', (attempt, random, delay) => {
    const next = nextAttemptAt(attempt, NOW, random);
    if (delay === null) expect(next).toBeNull();
    else expect(next!.getTime() - NOW.getTime()).toBeCloseTo(delay, -1);
  });

  it('makes eight attempts in all: the first and one per delay', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(RETRY_DELAYS_MS).toEqual([5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 10 * H]);
  });

  it.each([
    ['a longer Retry-After wins', 1, 120 * S, 120 * S],
    ['a shorter Retry-After does not bring the attempt forward', 3, 10 * S, 30 * MIN],
    ['a huge Retry-After is capped at 10 hours', 1, 7 * 24 * H, MAX_RETRY_AFTER_MS],
    ['Retry-After 0 changes nothing', 2, 0, 5 * MIN],
  ] as const)('%s', (_label, attempt, retryAfter, delay) => {
    expect(nextAttemptAt(attempt, NOW, 0.5, retryAfter)!.getTime() - NOW.getTime()).toBe(delay);
  });

  it('gives up after the last attempt even when the receiver sent Retry-After', () => {
    expect(nextAttemptAt(MAX_ATTEMPTS, NOW, 0.5, 60 * S)).toBeNull();
  });

  it('refuses an attempt number below 1 and a random outside [0, 1)', () => {
    expect(() => nextAttemptAt(0, NOW, 0.5)).toThrow(RangeError);
    expect(() => nextAttemptAt(1.5, NOW, 0.5)).toThrow(RangeError);
    expect(() => nextAttemptAt(1, NOW, 1)).toThrow(RangeError);
    expect(() => nextAttemptAt(1, NOW, -0.1)).toThrow(RangeError);
  });

  it('property: every retry lands within ±10 % of its step, later than the previous step, and never before a Retry-After (up to the cap)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_ATTEMPTS - 1 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: 30 * 24 * H }), { nil: null }),
        (attempt, random, retryAfter) => {
          const delay = nextAttemptAt(attempt, NOW, random, retryAfter)!.getTime() - NOW.getTime();
          const step = RETRY_DELAYS_MS[attempt - 1]!;
          const jittered = nextAttemptAt(attempt, NOW, random)!.getTime() - NOW.getTime();
          expect(jittered).toBeGreaterThanOrEqual(Math.floor(step * (1 - JITTER)));
          expect(jittered).toBeLessThanOrEqual(Math.ceil(step * (1 + JITTER)));
          expect(delay).toBeGreaterThanOrEqual(jittered);
          if (retryAfter !== null) expect(delay).toBeGreaterThanOrEqual(Math.min(retryAfter, MAX_RETRY_AFTER_MS));
          expect(delay).toBeLessThanOrEqual(Math.max(MAX_RETRY_AFTER_MS, jittered));
        },
      ),
    );
  });

  it('property: with the same random, each step waits at least as long as the one before', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (random) => {
        let previous = 0;
        for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
          const delay = nextAttemptAt(attempt, NOW, random)!.getTime() - NOW.getTime();
          expect(delay).toBeGreaterThanOrEqual(previous);
          previous = delay;
        }
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120 * S],
    [' 0 ', 0],
    ['Sat, 21 Nov 2026 18:31:00 GMT', 60 * S],
    ['Sat, 21 Nov 2026 18:00:00 GMT', 0],
    ['soon', null],
    ['-5', null],
    ['1.5', null],
    ['', null],
    [null, null],
    [undefined, null],
  ] as const)('%j is %s ms', (header, ms) => {
    expect(parseRetryAfter(header, NOW)).toBe(ms);
  });
});

describe('attemptVerdict', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [410, 'gone'],
    [301, 'retry'],
    [400, 'retry'],
    [404, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [null, 'retry'],
  ] as const)('status %s: %s', (status, verdict) => {
    expect(attemptVerdict(status)).toBe(verdict);
  });
});

describe('failingTooLong', () => {
  it.each([
    [null, 0, false],
    [0, FAILING_ENDPOINT_DISABLE_AFTER_MS - 1, false],
    [0, FAILING_ENDPOINT_DISABLE_AFTER_MS, true],
    [0, 6 * 24 * H, true],
  ] as const)('failing since %s, now %s: %s', (since, now, expected) => {
    expect(failingTooLong(since === null ? null : new Date(since), new Date(now))).toBe(expected);
  });
  it('five days is the limit', () => {
    expect(FAILING_ENDPOINT_DISABLE_AFTER_MS).toBe(5 * 24 * H);
  });
});
