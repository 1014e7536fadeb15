/**
 * Rate-limit counters shared by every instance on one PostgreSQL database: one row per key and
 * one-minute window, counted with a single upsert. Losing a few counts in a crash is harmless,
 * so the counting transaction does not wait for its WAL flush (`synchronous_commit = off`).
 * (Redis would do the same with INCR + EXPIRE; PostgreSQL is already shared by the instances,
 * and a counter is one row update, so it adds no second system to run.)
 */
import type { SqlExecutor } from './store.ts';

/** Counts one request of `bucket` in the window starting at `windowStart`; returns the window's count so far. */
export async function countRequest(tx: SqlExecutor, bucket: string, windowStart: string): Promise<number> {
  await tx.run('SET LOCAL synchronous_commit = off');
  const row = await tx.get<{ hits: number }>(
    `INSERT INTO rate_limit_counters (bucket, window_start, hits) VALUES (?, ?, 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1
     RETURNING hits`,
    [bucket, windowStart],
  );
  return row?.hits ?? 1;
}

/** Removes the windows that ended before `before`. */
export async function deleteRateLimitWindows(tx: SqlExecutor, before: string): Promise<number> {
  return (await tx.run('DELETE FROM rate_limit_counters WHERE window_start < ?', [before])).changes;
}

/** Gives back one count of `bucket` in the window starting at `windowStart` (an attempt that turned out not to count). */
export async function uncountRequest(tx: SqlExecutor, bucket: string, windowStart: string): Promise<void> {
  await tx.run('SET LOCAL synchronous_commit = off');
  await tx.run('UPDATE rate_limit_counters SET hits = hits - 1 WHERE bucket = ? AND window_start = ? AND hits > 0', [bucket, windowStart]);
}
