/**
 * The account's events as a feed (read from the outbox's webhook_events, where every published
 * event is written in the transaction of its change), their retention, and the recovery of an
 * endpoint's missed deliveries.
 *
 * Test events (is_test = 1) are samples sent to one endpoint, not events of the account: the
 * feed and recovery leave them out; retention deletes them like the others.
 */
import { filteredPage, type Page, type PageRequest } from './pagination.ts';
import { notifyDispatchers } from './outbox.ts';
import { forUpdate, type SqlExecutor, type Tx } from './store.ts';

export interface EventRecord {
  eventId: string;
  type: string;
  /** The exact JSON text its deliveries carry. */
  payload: string;
  occurredAt: string;
}

export interface EventQuery {
  accountId: string;
  /** The retention cutoff: older events are not shown even before they are pruned (ISO 8601 UTC). */
  keptSince: string;
  type?: string | undefined;
  /** Inclusive lower bound on the event's time. */
  createdFrom?: string | undefined;
  /** Exclusive upper bound on the event's time. */
  createdTo?: string | undefined;
}

interface EventRow {
  id: string;
  type: string;
  payload: string;
  occurred_at: string;
}

const toRecord = (r: EventRow): EventRecord => ({ eventId: r.id, type: r.type, payload: r.payload, occurredAt: r.occurred_at });

/** A page of the account's events, newest first (indexes webhook_events_by_account and _by_account_type). */
export async function listEvents(db: SqlExecutor, query: EventQuery, page: PageRequest): Promise<Page<EventRecord>> {
  return filteredPage(
    db,
    'SELECT id, type, payload, occurred_at FROM webhook_events WHERE account_id = ? AND is_test = 0 AND occurred_at >= ?',
    [query.accountId, query.keptSince],
    [
      ['type = ?', query.type],
      ['occurred_at >= ?', query.createdFrom],
      ['occurred_at < ?', query.createdTo],
    ],
    page,
    toRecord,
    (e) => e.eventId,
  );
}

/** One event of the account still kept at `keptSince`; test events are not found. */
export async function findEvent(db: SqlExecutor, accountId: string, eventId: string, keptSince: string): Promise<EventRecord | undefined> {
  const row = await db.get<EventRow>(
    'SELECT id, type, payload, occurred_at FROM webhook_events WHERE account_id = ? AND id = ? AND is_test = 0 AND occurred_at >= ?',
    [accountId, eventId, keptSince],
  );
  return row && toRecord(row);
}

/**
 * Deletes up to `limit` events older than `cutoff`, oldest first, with their deliveries and
 * delivery attempts; returns how many events it took (fewer than `limit`: nothing older is left).
 * On PostgreSQL, rows another instance is pruning right now are skipped, not waited for.
 */
export async function pruneEventsBefore(tx: Tx, cutoff: string, limit: number): Promise<number> {
  const lock = forUpdate(tx, 'SKIP LOCKED');
  const rows = await tx.all<{ id: string }>(`SELECT id FROM webhook_events WHERE occurred_at < ? ORDER BY occurred_at, id LIMIT ?${lock}`, [
    cutoff,
    limit,
  ]);
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.id);
  const marks = ids.map(() => '?').join(', ');
  await tx.run(`DELETE FROM webhook_delivery_attempts WHERE event_id IN (${marks})`, ids);
  await tx.run(`DELETE FROM webhook_deliveries WHERE event_id IN (${marks})`, ids);
  await tx.run(`DELETE FROM webhook_events WHERE id IN (${marks})`, ids);
  return rows.length;
}

export interface RecoveryWindow {
  accountId: string;
  webhookId: string;
  /** Inclusive bounds on the events' time (ISO 8601 UTC). */
  since: string;
  until: string;
  /** When the queued deliveries are due: now. */
  now: string;
}

/**
 * The account's events of the window, of the kinds the endpoint chooses now, not tests. Bound
 * parameters: account, since, until, webhook.
 */
const WINDOW_EVENTS = `SELECT v.id FROM webhook_events v
  WHERE v.account_id = ? AND v.is_test = 0 AND v.occurred_at >= ? AND v.occurred_at <= ?
    AND v.type IN (SELECT s.event_type FROM webhook_subscriptions s WHERE s.webhook_id = ?)`;

/**
 * Makes due now, for the endpoint, every event of the window it has not acknowledged: a delivery
 * that failed or waits for a retry is brought forward (keeping its attempts, as a manual retry
 * does), and an event it never had a delivery of (it was disabled, or did not choose the kind
 * then) gets one. Deliveries that succeeded, and those an attempt holds a live lease on, are left
 * alone. Returns how many were queued and how many the endpoint already had.
 */
export async function queueRecovery(tx: Tx, w: RecoveryWindow): Promise<{ queued: number; alreadyDelivered: number }> {
  const window = [w.accountId, w.since, w.until, w.webhookId];
  const { changes: broughtForward } = await tx.run(
    `UPDATE webhook_deliveries
        SET state = 'pending', next_attempt_at = ?, locked_until = NULL, lease_token = NULL, updated_at = ?
      WHERE webhook_id = ? AND state <> 'succeeded' AND (lease_token IS NULL OR locked_until <= ?)
        AND event_id IN (${WINDOW_EVENTS})`,
    [w.now, w.now, w.webhookId, w.now, ...window],
  );
  // ON CONFLICT: on PostgreSQL a delivery inserted meanwhile by a concurrent recovery is left to it.
  const { changes: added } = await tx.run(
    `INSERT INTO webhook_deliveries (webhook_id, event_id, account_id, state, attempts, next_attempt_at, locked_until, lease_token, created_at, updated_at)
     SELECT ?, e.id, ?, 'pending', 0, ?, NULL, NULL, ?, ?
       FROM (${WINDOW_EVENTS}) e
      WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = ? AND d.event_id = e.id)
     ON CONFLICT (webhook_id, event_id) DO NOTHING`,
    [w.webhookId, w.accountId, w.now, w.now, w.now, ...window, w.webhookId],
  );
  const delivered = await tx.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND state = 'succeeded' AND event_id IN (${WINDOW_EVENTS})`,
    [w.webhookId, ...window],
  );
  const queued = broughtForward + added;
  if (queued > 0) await notifyDispatchers(tx);
  return { queued, alreadyDelivered: Number(delivered?.n ?? 0) };
}
