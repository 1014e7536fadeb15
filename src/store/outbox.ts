/**
 * The transactional outbox: events and the deliveries they fan out to, written in the
 * transaction of the change that caused them; the dispatcher's claims, attempts and lease.
 *
 * Claiming: a due delivery (state 'pending', next_attempt_at <= now) is taken by pushing its
 * next_attempt_at to the lease end (locked_until) under a fresh lease token. A dispatcher that
 * dies leaves it due again when the lease runs out; one that finishes records the attempt only
 * while it still holds the lease. On PostgreSQL the candidate query runs with
 * `FOR UPDATE SKIP LOCKED`; on the serialised embedded engine the transaction is enough.
 */
import { webhookSecretContext } from './sealedColumns.ts';
import { dialectOf, forUpdate, notifyOnCommit, type SqlExecutor, type Tx } from './store.ts';

/**
 * The LISTEN/NOTIFY channel of the outbox on PostgreSQL: notified (at commit, by the database)
 * whenever a delivery becomes due now, so the dispatchers of every instance wake at once.
 */
export const OUTBOX_CHANNEL = 'mos_outbox';

/** Wakes every instance's dispatcher when `tx` commits (PostgreSQL; sql.js's one process nudges itself). */
export async function notifyDispatchers(tx: Tx): Promise<void> {
  await notifyOnCommit(tx, OUTBOX_CHANNEL);
}

export interface OutboxEventRecord {
  eventId: string;
  accountId: string;
  type: string;
  /** The exact JSON text sent. */
  payload: string;
  occurredAt: string;
  isTest: boolean;
}

export async function insertEvent(tx: Tx, event: OutboxEventRecord): Promise<void> {
  await tx.run(
    `INSERT INTO webhook_events (id, account_id, type, payload, occurred_at, is_test) VALUES (?, ?, ?, ?, ?, ?)`,
    [event.eventId, event.accountId, event.type, event.payload, event.occurredAt, event.isTest ? 1 : 0],
  );
}

/** Enabled endpoints of the account that chose this event type, with the API version each is pinned to. */
export async function subscribedEndpoints(db: SqlExecutor, accountId: string, eventType: string): Promise<{ id: string; apiVersion: string }[]> {
  // Most accounts have no endpoint for most events. sql.js answers the join below in ~10 us even
  // when nothing matches (a tenth of a submit's CPU, issue 17), the subscriptions' own index in
  // well under one; the join runs only when there is a subscription (same answer either way).
  if (dialectOf(db) === 'sqlite') {
    const any = await db.get('SELECT 1 AS found FROM webhook_subscriptions WHERE account_id = ? AND event_type = ? LIMIT 1', [accountId, eventType]);
    if (!any) return [];
  }
  const rows = await db.all<{ id: string; api_version: string }>(
    `SELECT e.id AS id, e.api_version AS api_version FROM webhook_subscriptions s
       JOIN webhook_endpoints e ON e.id = s.webhook_id
      WHERE s.account_id = ? AND s.event_type = ? AND e.enabled = 1
      ORDER BY e.id`,
    [accountId, eventType],
  );
  return rows.map((r) => ({ id: r.id, apiVersion: r.api_version }));
}

/** Pending deliveries of the event to each endpoint, due at `dueAt` (one statement). */
export async function insertDeliveries(
  tx: Tx,
  d: { webhookIds: readonly string[]; eventId: string; accountId: string; dueAt: string },
): Promise<void> {
  if (d.webhookIds.length === 0) return;
  await tx.run(
    `INSERT INTO webhook_deliveries (webhook_id, event_id, account_id, state, attempts, next_attempt_at, locked_until, lease_token, created_at, updated_at)
     VALUES ${d.webhookIds.map(() => "(?, ?, ?, 'pending', 0, ?, NULL, NULL, ?, ?)").join(', ')}`,
    d.webhookIds.flatMap((webhookId) => [webhookId, d.eventId, d.accountId, d.dueAt, d.dueAt, d.dueAt]),
  );
  await notifyDispatchers(tx);
}

/** A delivery in flight: everything the dispatcher needs to send it without another query. */
export interface ClaimedDelivery {
  webhookId: string;
  eventId: string;
  accountId: string;
  eventType: string;
  isTest: boolean;
  payload: string;
  occurredAt: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  failingSince: string | null;
  /** The API version the endpoint's deliveries are rendered in. */
  apiVersion: string;
  /** Attempts made before this one. */
  attempts: number;
  leaseToken: string;
}

interface CandidateRow {
  webhook_id: string;
  event_id: string;
  account_id: string;
  attempts: number;
}

/** The deliveries due at the bound time `?`: pending, their attempt's time come, their endpoint enabled. One text for the claim and the look before it, so the two cannot disagree. */
const DUE = `FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.webhook_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND e.enabled = 1`;

/** Whether any delivery is due (what dueDeliveries would find, skipping no endpoint): a read, no lock taken. */
export async function anyDeliveryDue(db: SqlExecutor, now: string): Promise<boolean> {
  return (await db.get(`SELECT 1 AS due ${DUE} LIMIT 1`, [now])) !== undefined;
}

/**
 * Due deliveries to enabled endpoints, oldest due first, leaving out the endpoints in `skip`
 * (those already at their concurrency limit). On PostgreSQL the rows are locked as they are read,
 * skipping rows another instance is claiming right now (`FOR UPDATE OF d SKIP LOCKED`), so
 * instances claiming together take different deliveries instead of waiting for each other.
 */
export async function dueDeliveries(db: SqlExecutor, now: string, skip: readonly string[], limit: number): Promise<CandidateRow[]> {
  const notIn = skip.length > 0 ? `AND d.webhook_id NOT IN (${skip.map(() => '?').join(', ')})` : '';
  return db.all<CandidateRow>(
    `SELECT d.webhook_id, d.event_id, d.account_id, d.attempts
       ${DUE} ${notIn}
      ORDER BY d.next_attempt_at, d.event_id
      LIMIT ?${forUpdate(db, 'OF d SKIP LOCKED')}`,
    [now, ...skip, limit],
  );
}

/**
 * Takes due deliveries of one endpoint under a lease (one statement); returns how many it took.
 * A delivery no longer due (someone else took it) is left alone.
 */
export async function leaseDeliveries(
  tx: Tx,
  webhookId: string,
  eventIds: readonly string[],
  now: string,
  lockedUntil: string,
  leaseToken: string,
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const { changes } = await tx.run(
    `UPDATE webhook_deliveries SET next_attempt_at = ?, locked_until = ?, lease_token = ?, updated_at = ?
      WHERE webhook_id = ? AND event_id IN (${eventIds.map(() => '?').join(', ')}) AND state = 'pending' AND next_attempt_at <= ?`,
    [lockedUntil, lockedUntil, leaseToken, now, webhookId, ...eventIds, now],
  );
  return changes;
}

interface ClaimedRow {
  webhook_id: string;
  event_id: string;
  account_id: string;
  attempts: number;
  lease_token: string;
  type: string;
  is_test: number;
  payload: string;
  occurred_at: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  api_version: string;
}

/** The deliveries this lease token holds, with their event and endpoint (index webhook_deliveries_by_lease). */
export async function leasedDeliveries(db: SqlExecutor, leaseToken: string): Promise<ClaimedDelivery[]> {
  const rows = await db.all<ClaimedRow>(
    `SELECT d.webhook_id, d.event_id, d.account_id, d.attempts, d.lease_token,
            v.type, v.is_test, v.payload, v.occurred_at,
            e.url, e.secret, e.previous_secret, e.previous_secret_expires_at, e.failing_since, e.api_version
       FROM webhook_deliveries d
       JOIN webhook_events v ON v.id = d.event_id
       JOIN webhook_endpoints e ON e.id = d.webhook_id
      WHERE d.lease_token = ? AND d.state = 'pending'`,
    [leaseToken],
  );
  return rows.map((r) => ({
    webhookId: r.webhook_id,
    eventId: r.event_id,
    accountId: r.account_id,
    eventType: r.type,
    isTest: r.is_test === 1,
    payload: r.payload,
    occurredAt: r.occurred_at,
    url: r.url,
    secret: db.sealer.open(r.secret, webhookSecretContext(r.webhook_id)),
    previousSecret: r.previous_secret === null ? null : db.sealer.open(r.previous_secret, webhookSecretContext(r.webhook_id)),
    previousSecretExpiresAt: r.previous_secret_expires_at,
    failingSince: r.failing_since,
    apiVersion: r.api_version,
    attempts: r.attempts,
    leaseToken: r.lease_token,
  }));
}

export interface AttemptRecord {
  attemptId: string;
  webhookId: string;
  eventId: string;
  accountId: string;
  /** 1 for the first attempt. */
  attempt: number;
  attemptedAt: string;
  outcome: 'succeeded' | 'failed';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** When the next attempt is due; null when there is none (success, or given up). */
  nextAttemptAt: string | null;
}

/**
 * Records one attempt and moves the delivery on: succeeded, pending again at nextAttemptAt, or
 * failed for good. Does nothing (returns false) when the lease was lost: the delivery was taken
 * again after the lease ran out, or the endpoint was deleted.
 */
export async function recordAttempt(tx: Tx, attempt: AttemptRecord, leaseToken: string): Promise<boolean> {
  const state = attempt.outcome === 'succeeded' ? 'succeeded' : attempt.nextAttemptAt ? 'pending' : 'failed';
  const { changes } = await tx.run(
    `UPDATE webhook_deliveries
        SET state = ?, attempts = ?, next_attempt_at = ?, locked_until = NULL, lease_token = NULL, updated_at = ?
      WHERE webhook_id = ? AND event_id = ? AND lease_token = ?`,
    [state, attempt.attempt, attempt.nextAttemptAt, attempt.attemptedAt, attempt.webhookId, attempt.eventId, leaseToken],
  );
  if (changes !== 1) return false;
  await tx.run(
    `INSERT INTO webhook_delivery_attempts
       (id, webhook_id, event_id, account_id, attempt, attempted_at, outcome, status_code, error, duration_ms, next_attempt_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      attempt.attemptId,
      attempt.webhookId,
      attempt.eventId,
      attempt.accountId,
      attempt.attempt,
      attempt.attemptedAt,
      attempt.outcome,
      attempt.statusCode,
      attempt.error,
      attempt.durationMs,
      attempt.nextAttemptAt,
    ],
  );
  return true;
}

/** Releases a lease without an attempt (the dispatcher stopped before sending). */
export async function releaseLease(tx: Tx, key: { webhookId: string; eventId: string }, leaseToken: string, dueAt: string): Promise<void> {
  await tx.run(
    `UPDATE webhook_deliveries SET next_attempt_at = ?, locked_until = NULL, lease_token = NULL, updated_at = ?
      WHERE webhook_id = ? AND event_id = ? AND lease_token = ?`,
    [dueAt, dueAt, key.webhookId, key.eventId, leaseToken],
  );
}

/** Makes a delivery due now again (the retry operation); false when there is no such delivery. */
export async function scheduleRetry(tx: Tx, accountId: string, webhookId: string, eventId: string, now: string): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE webhook_deliveries
        SET state = 'pending', next_attempt_at = ?, locked_until = NULL, lease_token = NULL, updated_at = ?
      WHERE account_id = ? AND webhook_id = ? AND event_id = ? AND (lease_token IS NULL OR locked_until <= ?)`,
    [now, now, accountId, webhookId, eventId, now],
  );
  if (changes === 1) await notifyDispatchers(tx);
  return changes === 1;
}

export interface DeliveryStateRecord {
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  inFlight: boolean;
}

/** A delivery's state; `inFlight` while a dispatcher holds an unexpired lease on it at `now`. */
export async function findDelivery(
  db: SqlExecutor,
  accountId: string,
  webhookId: string,
  eventId: string,
  now: string,
): Promise<DeliveryStateRecord | undefined> {
  const row = await db.get<{ state: DeliveryStateRecord['state']; attempts: number; next_attempt_at: string | null; locked_until: string | null }>(
    `SELECT state, attempts, next_attempt_at, locked_until FROM webhook_deliveries WHERE account_id = ? AND webhook_id = ? AND event_id = ?`,
    [accountId, webhookId, eventId],
  );
  return (
    row && {
      state: row.state,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at,
      inFlight: row.locked_until !== null && row.locked_until > now,
    }
  );
}

/** The outbox's depth: pending deliveries (due or waiting for a retry) and the creation time of the oldest. */
export async function pendingDeliveryBacklog(db: SqlExecutor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
  const row = await db.get<{ pending: number | string; oldest: string | null }>(
    "SELECT COUNT(*) AS pending, MIN(created_at) AS oldest FROM webhook_deliveries WHERE state = 'pending'",
  );
  return { pending: Number(row?.pending ?? 0), oldestCreatedAt: row?.oldest ?? null };
}
