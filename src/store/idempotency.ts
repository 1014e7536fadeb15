/** Stored responses for Idempotency-Key replays. */
import { forUpdate, type SqlExecutor } from './store.ts';

export interface StoredResponse {
  requestHash: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  createdAt: string;
}

interface IdempotencyRow {
  request_hash: string;
  response_status: number;
  response_headers: string;
  response_body: string;
  created_at: string;
}

/** The stored response for this key if it was created at or after `notBefore` (older ones have expired). */
export async function findStoredResponse(
  db: SqlExecutor,
  accountId: string,
  key: string,
  notBefore: string,
): Promise<StoredResponse | undefined> {
  const row = await db.get<IdempotencyRow>(
    `SELECT request_hash, response_status, response_headers, response_body, created_at
       FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ? AND created_at >= ?`,
    [accountId, key, notBefore],
  );
  return (
    row && {
      requestHash: row.request_hash,
      status: row.response_status,
      headers: JSON.parse(row.response_headers) as Record<string, string>,
      body: row.response_body,
      createdAt: row.created_at,
    }
  );
}

/**
 * Stores (or replaces) the record of a key in one upsert. Not a delete and an insert: on PostgreSQL
 * a claim on another instance that waits on this row (`SELECT … FOR UPDATE`) follows an update to
 * the new version, but finds nothing once the row was deleted, and would then take the key over
 * and run the request a second time.
 */
export async function saveStoredResponse(tx: SqlExecutor, accountId: string, key: string, response: StoredResponse): Promise<void> {
  await tx.run(
    `INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, response_status, response_headers, response_body, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, idempotency_key) DO UPDATE SET request_hash = excluded.request_hash,
       response_status = excluded.response_status, response_headers = excluded.response_headers,
       response_body = excluded.response_body, created_at = excluded.created_at`,
    [accountId, key, response.requestHash, response.status, JSON.stringify(response.headers), response.body, response.createdAt],
  );
}

export async function deleteExpiredResponses(tx: SqlExecutor, olderThan: string): Promise<number> {
  return (await tx.run('DELETE FROM idempotency_keys WHERE created_at < ?', [olderThan])).changes;
}

/** response_status of a key claimed by a request still running (on any instance). */
export const IN_PROGRESS_STATUS = -1;

/**
 * Claims the key for a request through the table's primary key, so that instances sharing the
 * database run a key's request once: the insert of the claim (status -1) succeeds for exactly one
 * of them. Returns null when this request holds the claim now; else the row that is there (a
 * stored response, a claim of a request still running, or a "took effect" mark). An expired row
 * (created before `expiredBefore`), or a claim abandoned by an instance that died (before
 * `abandonedBefore`), is taken over.
 */
export async function claimIdempotencyKey(
  tx: SqlExecutor,
  accountId: string,
  key: string,
  claim: { requestHash: string; createdAt: string },
  expiredBefore: string,
  abandonedBefore: string,
): Promise<StoredResponse | null> {
  const inserted = await tx.run(
    `INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, response_status, response_headers, response_body, created_at)
     VALUES (?, ?, ?, ?, '{}', '', ?) ON CONFLICT (account_id, idempotency_key) DO NOTHING`,
    [accountId, key, claim.requestHash, IN_PROGRESS_STATUS, claim.createdAt],
  );
  if (inserted.changes === 1) return null;
  const lock = forUpdate(tx);
  const row = await tx.get<IdempotencyRow>(
    `SELECT request_hash, response_status, response_headers, response_body, created_at
       FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?${lock}`,
    [accountId, key],
  );
  if (row && row.created_at >= expiredBefore && !(row.response_status === IN_PROGRESS_STATUS && row.created_at < abandonedBefore)) {
    return {
      requestHash: row.request_hash,
      status: row.response_status,
      headers: JSON.parse(row.response_headers) as Record<string, string>,
      body: row.response_body,
      createdAt: row.created_at,
    };
  }
  await saveStoredResponse(tx, accountId, key, { requestHash: claim.requestHash, status: IN_PROGRESS_STATUS, headers: {}, body: '', createdAt: claim.createdAt });
  return null;
}

/** Gives a claim up (the request ended with nothing to store); a "took effect" mark or a stored response stays. */
export async function releaseIdempotencyClaim(tx: SqlExecutor, accountId: string, key: string): Promise<void> {
  await tx.run('DELETE FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ? AND response_status = ?', [accountId, key, IN_PROGRESS_STATUS]);
}
