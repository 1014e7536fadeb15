/**
 * Rate-limit counters every instance shares, for the PostgreSQL engine (several instances on one
 * database): the edge is handed `countShared` through the context when the store is shared, and
 * keeps its counters in memory otherwise (one sql.js process owns every request).
 */
import type { AppContext } from '../context.ts';
import { WINDOW_MS, WindowCounter } from '../domain/limits/windowCounter.ts';
import { countRequest, deleteRateLimitWindows, uncountRequest } from '../store/rateLimits.ts';

/**
 * Counts one request of `bucket` in the one-minute window (aligned to the clock) holding `now`;
 * returns the window's count so far and when it ends. Ended windows are swept at most once a minute.
 */
export function sharedRequestCounter(ctx: Pick<AppContext, 'store'>): (bucket: string, now: number) => Promise<{ count: number; windowEndsAt: number }> {
  let lastSweep = 0;
  return async (bucket, now) => {
    const windowStart = now - (now % WINDOW_MS);
    const count = await ctx.store.transaction((tx) => countRequest(tx, bucket, new Date(windowStart).toISOString()));
    if (now - lastSweep >= WINDOW_MS) {
      lastSweep = now;
      const ended = new Date(windowStart - WINDOW_MS).toISOString();
      void ctx.store.transaction((tx) => deleteRateLimitWindows(tx, ended)).catch(() => {});
    }
    return { count, windowEndsAt: windowStart + WINDOW_MS };
  };
}

/** One attempt counted by an AttemptLimiter. */
export interface CountedAttempt {
  /** false when the bucket had already used its limit this minute (nothing was counted then). */
  allowed: boolean;
  /** Seconds until the bucket's minute ends (at least 1). */
  retryAfterSeconds: number;
  /** Gives the attempt back (it turned out not to count: a sign-in that succeeded). */
  release(): Promise<void>;
}

export interface AttemptLimiter {
  readonly limit: number;
  take(bucket: string): Promise<CountedAttempt>;
}

/**
 * Counts attempts (sign-ins, for example) per bucket in one-minute windows, at most `limit` a
 * minute (0: no limit). Each attempt is counted before the work it guards, so concurrent attempts
 * cannot slip past the limit together while their outcomes are unknown, and is given back by
 * `release` when it turns out not to count. The count lives in this process (WindowCounter) on
 * sql.js and in the database every instance shares on PostgreSQL, like the API's rate limits.
 */
export function attemptLimiter(ctx: Pick<AppContext, 'store' | 'clock' | 'countShared'>, limit: number): AttemptLimiter {
  const local = new WindowCounter(limit);
  const shared = ctx.countShared;
  return {
    limit,
    async take(bucket) {
      const now = ctx.clock.now().getTime();
      if (limit <= 0) return { allowed: true, retryAfterSeconds: 0, release: async () => {} };
      if (!shared) {
        const taken = local.take(bucket, now);
        return { allowed: taken.allowed, retryAfterSeconds: taken.retryAfterSeconds, release: async () => taken.release() };
      }
      const { count, windowEndsAt } = await shared(bucket, now);
      const allowed = count <= limit;
      const windowStart = new Date(windowEndsAt - WINDOW_MS).toISOString();
      let released = false;
      return {
        allowed,
        retryAfterSeconds: Math.max(1, Math.ceil((windowEndsAt - now) / 1000)),
        async release() {
          if (released) return;
          released = true;
          await ctx.store.transaction((tx) => uncountRequest(tx, bucket, windowStart));
        },
      };
    },
  };
}
