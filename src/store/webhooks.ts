/**
 * Webhook endpoints and their delivery log. The signing secrets (current and previous) are stored
 * sealed (AES-256-GCM, `db.sealer`, see src/store/core/sealing.ts) and opened only where a
 * delivery is signed (outbox.ts): records read for responses carry no secret, only its last four
 * characters.
 */
import type { components } from '../../generated/api.d.ts';
import { notifyDispatchers, type AttemptRecord } from './outbox.ts';
import { webhookSecretContext } from './sealedColumns.ts';
import type { SqlExecutor, Tx } from './store.ts';
import { toPage, type Page, type PageRequest } from './pagination.ts';

export type DisabledReason = NonNullable<components['schemas']['Webhook']['disabledReason']>;

export interface WebhookEndpointRecord {
  webhookId: string;
  accountId: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  /** The last four characters of the current secret. */
  secretTail: string;
  previousSecretExpiresAt: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
  /** The API version its deliveries are rendered in. */
  apiVersion: string;
}

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string;
  enabled: number;
  disabled_reason: DisabledReason | null;
  disabled_at: string | null;
  secret: string;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  api_version: string;
}

const COLUMNS = `id, account_id, url, description, enabled, disabled_reason, disabled_at,
  secret, previous_secret_expires_at, failing_since, created_at, updated_at, api_version`;

async function withEvents(db: SqlExecutor, rows: EndpointRow[]): Promise<WebhookEndpointRecord[]> {
  if (rows.length === 0) return [];
  const subs = await db.all<{ webhook_id: string; event_type: string }>(
    `SELECT webhook_id, event_type FROM webhook_subscriptions WHERE webhook_id IN (${rows.map(() => '?').join(', ')}) ORDER BY event_type`,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({
    webhookId: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    events: subs.filter((s) => s.webhook_id === row.id).map((s) => s.event_type),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    secretTail: db.sealer.open(row.secret, webhookSecretContext(row.id)).slice(-4),
    previousSecretExpiresAt: row.previous_secret_expires_at,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    apiVersion: row.api_version,
  }));
}

export interface NewEndpoint {
  webhookId: string;
  accountId: string;
  url: string;
  description: string;
  events: readonly string[];
  secret: string;
  createdAt: string;
  apiVersion: string;
}

export async function insertEndpoint(tx: Tx, e: NewEndpoint): Promise<void> {
  await tx.run(
    `INSERT INTO webhook_endpoints (id, account_id, url, description, enabled, disabled_reason, disabled_at, secret,
       previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at, api_version)
     VALUES (?, ?, ?, ?, 1, NULL, NULL, ?, NULL, NULL, NULL, ?, ?, ?)`,
    [e.webhookId, e.accountId, e.url, e.description, tx.sealer.seal(e.secret, webhookSecretContext(e.webhookId)), e.createdAt, e.createdAt, e.apiVersion],
  );
  await replaceSubscriptions(tx, e.accountId, e.webhookId, e.events);
}

export async function replaceSubscriptions(tx: Tx, accountId: string, webhookId: string, events: readonly string[]): Promise<void> {
  await tx.run('DELETE FROM webhook_subscriptions WHERE webhook_id = ?', [webhookId]);
  for (const event of new Set(events)) {
    await tx.run('INSERT INTO webhook_subscriptions (webhook_id, account_id, event_type) VALUES (?, ?, ?)', [webhookId, accountId, event]);
  }
}

/** An endpoint of this account, or undefined: another account's endpoint is indistinguishable from none. */
export async function findEndpoint(db: SqlExecutor, accountId: string, webhookId: string): Promise<WebhookEndpointRecord | undefined> {
  const row = await db.get<EndpointRow>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ? AND id = ?`, [accountId, webhookId]);
  return row ? (await withEvents(db, [row]))[0] : undefined;
}

/** How many endpoints the account has registered, enabled or not. */
export async function countEndpoints(db: SqlExecutor, accountId: string): Promise<number> {
  const row = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE account_id = ?', [accountId]);
  return Number(row?.n ?? 0);
}

/** The id of the account's endpoint with exactly this URL, if any. */
export async function findEndpointIdByUrl(db: SqlExecutor, accountId: string, url: string): Promise<string | undefined> {
  const row = await db.get<{ id: string }>('SELECT id FROM webhook_endpoints WHERE account_id = ? AND url = ? ORDER BY id LIMIT 1', [accountId, url]);
  return row?.id;
}

export async function listEndpoints(db: SqlExecutor, accountId: string, page: PageRequest): Promise<Page<WebhookEndpointRecord>> {
  const rows = await db.all<EndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
    [accountId, page.afterId ?? null, page.afterId ?? null, page.limit + 1],
  );
  return toPage(await withEvents(db, rows), page.limit, (e) => e.webhookId);
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  /** true re-enables (clearing the reason and the failure run); false disables by hand. */
  enabled?: boolean;
  apiVersion?: string;
}

export async function updateEndpoint(tx: Tx, webhookId: string, changes: EndpointChanges, now: string): Promise<void> {
  if (changes.url !== undefined) await tx.run('UPDATE webhook_endpoints SET url = ? WHERE id = ?', [changes.url, webhookId]);
  if (changes.description !== undefined) await tx.run('UPDATE webhook_endpoints SET description = ? WHERE id = ?', [changes.description, webhookId]);
  if (changes.apiVersion !== undefined) await tx.run('UPDATE webhook_endpoints SET api_version = ? WHERE id = ?', [changes.apiVersion, webhookId]);
  if (changes.enabled === true) {
    const enabled = await tx.run(
      'UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, disabled_at = NULL, failing_since = NULL WHERE id = ? AND enabled = 0',
      [webhookId],
    );
    if (enabled.changes === 1) await notifyDispatchers(tx); // its pending deliveries are due again
  } else if (changes.enabled === false) {
    await disableEndpoint(tx, webhookId, 'manual', now);
  }
  await tx.run('UPDATE webhook_endpoints SET updated_at = ? WHERE id = ?', [now, webhookId]);
}

export async function disableEndpoint(tx: Tx, webhookId: string, reason: DisabledReason, now: string): Promise<boolean> {
  const { changes } = await tx.run(
    'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ? WHERE id = ? AND enabled = 1',
    [reason, now, now, webhookId],
  );
  return changes === 1;
}

/** Deletes the endpoint with its subscriptions, deliveries and delivery log (the events stay). */
export async function deleteEndpoint(tx: Tx, accountId: string, webhookId: string): Promise<boolean> {
  // Ownership first: another account's id must change nothing, not even the children.
  const owned = await tx.get('SELECT id FROM webhook_endpoints WHERE account_id = ? AND id = ?', [accountId, webhookId]);
  if (!owned) return false;
  await tx.run('DELETE FROM webhook_delivery_attempts WHERE webhook_id = ?', [webhookId]);
  await tx.run('DELETE FROM webhook_deliveries WHERE webhook_id = ?', [webhookId]);
  await tx.run('DELETE FROM webhook_subscriptions WHERE webhook_id = ?', [webhookId]);
  const { changes } = await tx.run('DELETE FROM webhook_endpoints WHERE account_id = ? AND id = ?', [accountId, webhookId]);
  return changes === 1;
}

/** Makes `secret` current; the one it replaces keeps signing until `previousExpiresAt`. */
export async function rotateSecret(tx: Tx, webhookId: string, secret: string, previousExpiresAt: string, now: string): Promise<void> {
  await tx.run(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ? WHERE id = ?`,
    [previousExpiresAt, tx.sealer.seal(secret, webhookSecretContext(webhookId)), now, webhookId],
  );
}

/** A failed attempt: starts the endpoint's run of failures unless one is going on. */
export async function markEndpointFailing(tx: Tx, webhookId: string, at: string): Promise<void> {
  await tx.run('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL', [at, webhookId]);
}

/** A successful delivery ends the endpoint's run of failures. */
export async function markEndpointHealthy(tx: Tx, webhookId: string): Promise<void> {
  await tx.run('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL', [webhookId]);
}

/** An attempt as the delivery log shows it: what was recorded, with its event's type. */
export interface DeliveryAttemptRecord extends Omit<AttemptRecord, 'accountId'> {
  eventType: string;
  isTest: boolean;
}

interface AttemptRow {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  is_test: number;
  attempt: number;
  attempted_at: string;
  outcome: 'succeeded' | 'failed';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
}

/** The endpoint's delivery log, newest attempt first. */
export async function listAttempts(db: SqlExecutor, webhookId: string, page: PageRequest): Promise<Page<DeliveryAttemptRecord>> {
  const rows = await db.all<AttemptRow>(
    `SELECT a.id, a.webhook_id, a.event_id, v.type, v.is_test, a.attempt, a.attempted_at, a.outcome, a.status_code, a.error,
            a.duration_ms, a.next_attempt_at
       FROM webhook_delivery_attempts a
       JOIN webhook_events v ON v.id = a.event_id
      WHERE a.webhook_id = ? AND (CAST(? AS TEXT) IS NULL OR a.id < ?)
      ORDER BY a.id DESC LIMIT ?`,
    [webhookId, page.afterId ?? null, page.afterId ?? null, page.limit + 1],
  );
  const records = rows.map((r) => ({
    attemptId: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.type,
    isTest: r.is_test === 1,
    attempt: r.attempt,
    attemptedAt: r.attempted_at,
    outcome: r.outcome,
    statusCode: r.status_code,
    error: r.error,
    durationMs: r.duration_ms,
    nextAttemptAt: r.next_attempt_at,
  }));
  return toPage(records, page.limit, (a) => a.attemptId);
}

/** The event's type, if the event belongs to this account. */
export async function findEventType(db: SqlExecutor, accountId: string, eventId: string): Promise<string | undefined> {
  const row = await db.get<{ type: string }>('SELECT type FROM webhook_events WHERE account_id = ? AND id = ?', [accountId, eventId]);
  return row?.type;
}
