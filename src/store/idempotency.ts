/** Stored responses for Idempotency-Key replays. */
import type { SqlExecutor } from './store.ts';

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

/** Saves (or, for an expired key being reused, replaces) the response of a key. */
export async function saveStoredResponse(tx: SqlExecutor, accountId: string, key: string, response: StoredResponse): Promise<void> {
  await tx.run('DELETE FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?', [accountId, key]);
  await tx.run(
    `INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, response_status, response_headers, response_body, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [accountId, key, response.requestHash, response.status, JSON.stringify(response.headers), response.body, response.createdAt],
  );
}

export async function deleteExpiredResponses(tx: SqlExecutor, olderThan: string): Promise<number> {
  return (await tx.run('DELETE FROM idempotency_keys WHERE created_at < ?', [olderThan])).changes;
}
