/**
 * The simulated clocks of test environments: how far ahead of real time each one runs. No row
 * means real time, so a live environment (which never gets one) always reads real time.
 */
import type { SqlExecutor, Tx } from './store.ts';

export interface SimulatedClock {
  environmentId: string;
  offsetMs: number;
}

/** The environment's offset from real time in milliseconds (0 when it has none). */
export async function findClockOffset(db: SqlExecutor, environmentId: string): Promise<number> {
  const row = await db.get<{ offset_ms: number }>('SELECT offset_ms FROM test_clocks WHERE environment_id = ?', [environmentId]);
  return row?.offset_ms ?? 0;
}

/** Sets the environment's offset (an upsert that works the same on both engines). */
export async function saveClockOffset(tx: Tx, environmentId: string, offsetMs: number, updatedAt: string): Promise<void> {
  const { changes } = await tx.run('UPDATE test_clocks SET offset_ms = ?, updated_at = ? WHERE environment_id = ?', [offsetMs, updatedAt, environmentId]);
  if (changes === 0) {
    await tx.run('INSERT INTO test_clocks (environment_id, offset_ms, updated_at) VALUES (?, ?, ?)', [environmentId, offsetMs, updatedAt]);
  }
}

/** Back to real time. */
export async function deleteClockOffset(tx: Tx, environmentId: string): Promise<void> {
  await tx.run('DELETE FROM test_clocks WHERE environment_id = ?', [environmentId]);
}

/** Every environment running ahead of real time. */
export async function simulatedClocks(db: SqlExecutor): Promise<SimulatedClock[]> {
  const rows = await db.all<{ environment_id: string; offset_ms: number }>('SELECT environment_id, offset_ms FROM test_clocks ORDER BY environment_id');
  return rows.map((row) => ({ environmentId: row.environment_id, offsetMs: row.offset_ms }));
}

/**
 * Brings the environment's pending webhook retries `byMs` closer (never before `now`), as if that
 * much time had passed for them; deliveries in flight under a live lease are left to their attempt.
 * Times are computed here and bound as parameters (the embedded engine replays its journal).
 */
export async function advancePendingDeliveries(tx: Tx, environmentId: string, byMs: number, now: Date): Promise<number> {
  const nowIso = now.toISOString();
  const rows = await tx.all<{ webhook_id: string; event_id: string; next_attempt_at: string }>(
    `SELECT webhook_id, event_id, next_attempt_at FROM webhook_deliveries
      WHERE account_id = ? AND state = 'pending' AND next_attempt_at > ? AND (lease_token IS NULL OR locked_until <= ?)`,
    [environmentId, nowIso, nowIso],
  );
  let moved = 0;
  for (const row of rows) {
    const due = new Date(Math.max(now.getTime(), Date.parse(row.next_attempt_at) - byMs)).toISOString();
    const { changes } = await tx.run(
      `UPDATE webhook_deliveries SET next_attempt_at = ?, locked_until = NULL, lease_token = NULL, updated_at = ?
        WHERE webhook_id = ? AND event_id = ? AND state = 'pending' AND (lease_token IS NULL OR locked_until <= ?)`,
      [due, nowIso, row.webhook_id, row.event_id, nowIso],
    );
    moved += changes;
  }
  return moved;
}
