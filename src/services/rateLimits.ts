/**
 * Rate-limit counters every instance shares, for the PostgreSQL engine (several instances on one
 * database): the edge is handed `countShared` through the context when the store is shared, and
 * keeps its counters in memory otherwise (one sql.js process owns every request).
 */
import type { AppContext } from '../context.ts';
import { countRequest, deleteRateLimitWindows } from '../store/rateLimits.ts';

const WINDOW_MS = 60_000;

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
