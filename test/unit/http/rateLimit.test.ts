/**
 * The edge's per-key rate limit (src/http/rateLimit.ts) on its own: the decision and the IETF
 * RateLimit headers, counted in this process (sql.js) or by the counter instances share
 * (PostgreSQL, here a stand-in that answers the count and the end of the window as the database would).
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/http/rateLimit.ts';
import type { ApiProblem } from '../../../src/http/problem.ts';

/** Runs enforce and returns the headers it set and the problem it threw, if any. */
async function enforce(limiter: RateLimiter, key: string, now: number) {
  let headers: Record<string, string> | undefined;
  try {
    await limiter.enforce(key, now, (set) => (headers = set), 'This API key has');
    return { headers, problem: undefined };
  } catch (err) {
    return { headers, problem: err as ApiProblem };
  }
}

describe('RateLimiter in this process', () => {
  it('counts a key to its limit, with the policy, what remains and the seconds to the reset; then 429 with Retry-After', async () => {
    const limiter = new RateLimiter(2);
    expect(limiter.enabled).toBe(true);
    expect(await enforce(limiter, 'key-a', 0)).toEqual({ headers: { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=1;t=60' }, problem: undefined });
    expect(await enforce(limiter, 'key-a', 20_500)).toEqual({ headers: { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=0;t=40' }, problem: undefined });
    const refused = await enforce(limiter, 'key-a', 30_000);
    expect(refused.headers).toEqual({ 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=0;t=30' });
    expect(refused.problem).toMatchObject({
      status: 429,
      code: 'rate_limited',
      detail: 'This API key has used 2 requests this minute; retry after 30 seconds.',
      headers: { 'Retry-After': '30' },
    });
    // Another key has its own minute; the key's next minute starts afresh.
    expect((await enforce(limiter, 'key-b', 30_000)).problem).toBeUndefined();
    expect(await enforce(limiter, 'key-a', 60_000)).toEqual({ headers: { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=1;t=60' }, problem: undefined });
  });

  it('with a limit of 0 limits nothing and sets no headers', async () => {
    const limiter = new RateLimiter(0);
    expect(limiter.enabled).toBe(false);
    for (let i = 0; i < 5; i++) expect(await enforce(limiter, 'key-a', i)).toEqual({ headers: undefined, problem: undefined });
  });
});

describe('RateLimiter over a counter instances share', () => {
  /** What the shared counter would answer: the count so far in the window of `now`, and when it ends. */
  function sharedCounter(windowEndsAt: number) {
    const counts = new Map<string, number>();
    const calls: Array<[string, number]> = [];
    const count = async (key: string, now: number) => {
      calls.push([key, now]);
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return { count: counts.get(key)!, windowEndsAt };
    };
    return { count, calls };
  }

  it("decides on the shared count: allowed up to the limit, then 429; the reset is the window's end, at least a second", async () => {
    const shared = sharedCounter(60_000);
    const limiter = new RateLimiter(2, shared.count);
    expect(await enforce(limiter, 'key-a', 10_000)).toEqual({ headers: { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=1;t=50' }, problem: undefined });
    expect(await enforce(limiter, 'key-a', 10_001)).toEqual({ headers: { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=0;t=50' }, problem: undefined });
    const refused = await enforce(limiter, 'key-a', 59_999);
    expect(refused.headers).toEqual({ 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=0;t=1' });
    expect(refused.problem).toMatchObject({ status: 429, detail: 'This API key has used 2 requests this minute; retry after 1 seconds.', headers: { 'Retry-After': '1' } });
    // Past the limit the remaining count stays 0, never negative.
    expect((await enforce(limiter, 'key-a', 60_000)).headers!.RateLimit).toBe('"default";r=0;t=1');
    expect(shared.calls).toEqual([['key-a', 10_000], ['key-a', 10_001], ['key-a', 59_999], ['key-a', 60_000]]);
  });

  it('asks the shared counter nothing when rate limiting is off', async () => {
    const shared = sharedCounter(60_000);
    expect(await enforce(new RateLimiter(0, shared.count), 'key-a', 0)).toEqual({ headers: undefined, problem: undefined });
    expect(shared.calls).toEqual([]);
  });
});
