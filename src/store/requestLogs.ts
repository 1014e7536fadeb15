/**
 * The request log: one row per /v1 request a key of an account made, written in batches after the
 * answers (never in a request's own transaction), read newest first by account, and pruned after
 * the retention period.
 */
import { filteredPage, type Page, type PageRequest } from './pagination.ts';
import { forUpdate, type SqlExecutor, type SqlValue, type Tx } from './store.ts';

export interface RequestLogRecord {
  /** The row's own time-ordered id (`rlg-…`): request ids are the callers' and may repeat. */
  id: string;
  /** The environment the key acts in (the account's id, or its test environment's). */
  accountId: string;
  requestId: string;
  keyId: string;
  keyName: string | null;
  method: string;
  operationId: string;
  path: string;
  status: number;
  latencyMs: number;
  clientAddress: string;
  idempotencyKey: string | null;
  idempotentReplayed: boolean;
  /** The problem+json text as sent, for 4xx and 5xx answers; null otherwise. */
  problem: string | null;
  createdAt: string;
}

export interface RequestLogQuery {
  accountId: string;
  /** The retention cutoff: older rows are not shown even before they are pruned (ISO 8601 UTC). */
  keptSince: string;
  status?: number | undefined;
  /** Inclusive lower and exclusive upper bound on the status (a status class: 400 to 500). */
  statusFrom?: number | undefined;
  statusBelow?: number | undefined;
  keyId?: string | undefined;
  operationId?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
}

interface RequestLogRow {
  id: string;
  account_id: string;
  request_id: string;
  key_id: string;
  key_name: string | null;
  method: string;
  operation_id: string;
  path: string;
  status: number;
  latency_ms: number;
  client_address: string;
  idempotency_key: string | null;
  idempotent_replayed: number;
  problem: string | null;
  created_at: string;
}

const COLUMNS =
  'id, account_id, request_id, key_id, key_name, method, operation_id, path, status, latency_ms, client_address, idempotency_key, idempotent_replayed, problem, created_at';
const COLUMN_COUNT = 15;

const toRecord = (r: RequestLogRow): RequestLogRecord => ({
  id: r.id,
  accountId: r.account_id,
  requestId: r.request_id,
  keyId: r.key_id,
  keyName: r.key_name,
  method: r.method,
  operationId: r.operation_id,
  path: r.path,
  status: Number(r.status),
  latencyMs: Number(r.latency_ms),
  clientAddress: r.client_address,
  idempotencyKey: r.idempotency_key,
  idempotentReplayed: Number(r.idempotent_replayed) === 1,
  problem: r.problem,
  createdAt: r.created_at,
});

/** Rows per INSERT statement (1,500 parameters): well under either engine's limit on bound parameters; fewer statements cost less per row. */
const ROWS_PER_STATEMENT = 100;

/** Writes a batch of entries, a multi-row INSERT per 100. */
export async function insertRequestLogs(tx: Tx, records: readonly RequestLogRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += ROWS_PER_STATEMENT) {
    const chunk = records.slice(start, start + ROWS_PER_STATEMENT);
    const marks = chunk.map(() => `(${Array(COLUMN_COUNT).fill('?').join(', ')})`).join(', ');
    const params: SqlValue[] = [];
    for (const r of chunk) {
      params.push(
        r.id, r.accountId, r.requestId, r.keyId, r.keyName, r.method, r.operationId, r.path, r.status, r.latencyMs,
        r.clientAddress, r.idempotencyKey, r.idempotentReplayed ? 1 : 0, r.problem, r.createdAt,
      );
    }
    await tx.run(`INSERT INTO request_logs (${COLUMNS}) VALUES ${marks}`, params);
  }
}

/** The names of these keys now, by key id (keys that are gone are left out). */
export async function keyNames(db: SqlExecutor, keyIds: readonly string[]): Promise<Map<string, string>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db.all<{ id: string; name: string }>(`SELECT id, name FROM api_keys WHERE id IN (${keyIds.map(() => '?').join(', ')})`, [...keyIds]);
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** A page of the account's request log, newest first (index request_logs_by_account). */
export async function listRequestLogs(db: SqlExecutor, query: RequestLogQuery, page: PageRequest): Promise<Page<RequestLogRecord>> {
  return filteredPage(
    db,
    `SELECT ${COLUMNS} FROM request_logs WHERE account_id = ? AND created_at >= ?`,
    [query.accountId, query.keptSince],
    [
      ['status = ?', query.status],
      ['status >= ?', query.statusFrom],
      ['status < ?', query.statusBelow],
      ['key_id = ?', query.keyId],
      ['operation_id = ?', query.operationId],
      ['created_at >= ?', query.createdFrom],
      ['created_at < ?', query.createdTo],
    ],
    page,
    toRecord,
    (r) => r.id,
  );
}

/** The newest entry of the account with this request id still kept at `keptSince`. */
export async function findRequestLog(db: SqlExecutor, accountId: string, requestId: string, keptSince: string): Promise<RequestLogRecord | undefined> {
  const row = await db.get<RequestLogRow>(
    `SELECT ${COLUMNS} FROM request_logs WHERE account_id = ? AND request_id = ? AND created_at >= ? ORDER BY id DESC LIMIT 1`,
    [accountId, requestId, keptSince],
  );
  return row && toRecord(row);
}

/**
 * Deletes up to `limit` entries older than `cutoff`; returns how many (fewer than `limit`: nothing
 * older is left). On PostgreSQL, rows another instance is pruning right now are skipped.
 */
export async function pruneRequestLogsBefore(tx: Tx, cutoff: string, limit: number): Promise<number> {
  const rows = await tx.all<{ id: string }>(`SELECT id FROM request_logs WHERE created_at < ? ORDER BY created_at LIMIT ?${forUpdate(tx, 'SKIP LOCKED')}`, [
    cutoff,
    limit,
  ]);
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.id);
  await tx.run(`DELETE FROM request_logs WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
  return rows.length;
}

/** What the edge records of a request after answering it: the row before its id and key name are known. */
export type RequestLogEntry = Omit<RequestLogRecord, 'id' | 'keyName' | 'createdAt'> & {
  /** When the request arrived, in milliseconds since the epoch (made ISO 8601 when written). */
  arrivedAt: number;
};
