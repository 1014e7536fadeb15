/** API key records. The secret itself is never stored: only its SHA-256 hash. */
import type { components } from '../../generated/api.d.ts';
import { normaliseScopes, type ApiKeyScopes } from '../domain/accounts/scopes.ts';
import { notifyOnCommit, type SqlExecutor } from './store.ts';
import { toPage, type Page, type PageRequest } from './pagination.ts';

export type ApiKeyRole = components['schemas']['ApiKeyRole'];

export interface ApiKeyRecord {
  keyId: string;
  accountId: string;
  name: string;
  role: ApiKeyRole;
  /** A restricted key's scopes (role `restricted`); null for an admin or member key. */
  scopes: ApiKeyScopes | null;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  role: ApiKeyRole;
  /** JSON text on sql.js; JSONB (read back as text or an object, by driver) on PostgreSQL. */
  scopes: string | ApiKeyScopes | null;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = 'id, account_id, name, role, scopes, hint, created_at, last_used_at, revoked_at';

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  keyId: row.id,
  accountId: row.account_id,
  name: row.name,
  role: row.role,
  scopes: row.scopes === null ? null : normaliseScopes(typeof row.scopes === 'string' ? (JSON.parse(row.scopes) as ApiKeyScopes) : row.scopes),
  hint: row.hint,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export async function insertApiKey(tx: SqlExecutor, key: ApiKeyRecord, secretHash: string): Promise<void> {
  await tx.run(
    `INSERT INTO api_keys (id, account_id, name, role, scopes, secret_hash, hint, created_at, last_used_at, revoked_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
    [key.keyId, key.accountId, key.name, key.role, key.scopes === null ? null : JSON.stringify(key.scopes), secretHash, key.hint, key.createdAt],
  );
}

/** The key with this hash, and the API version its account is pinned to (what a request with it defaults to). */
export async function findApiKeyByHash(db: SqlExecutor, secretHash: string): Promise<(ApiKeyRecord & { apiVersion: string }) | undefined> {
  const row = await db.get<ApiKeyRow & { api_version: string }>(
    `SELECT ${COLUMNS.split(', ').map((column) => `k.${column}`).join(', ')}, a.api_version FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = ?`,
    [secretHash],
  );
  return row && { ...toRecord(row), apiVersion: row.api_version };
}

/** A key of this account, or undefined: another account's key is indistinguishable from none. */
export async function findApiKey(db: SqlExecutor, accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.get<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = ? AND id = ?`, [accountId, keyId]);
  return row && toRecord(row);
}

/** Looks a key up by id alone: for the operator's command line, which acts across accounts. */
export async function findApiKeyById(db: SqlExecutor, keyId: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.get<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`, [keyId]);
  return row && toRecord(row);
}

export async function listApiKeys(db: SqlExecutor, accountId: string, page: PageRequest): Promise<Page<ApiKeyRecord>> {
  const rows = await db.all<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
    [accountId, page.afterId ?? null, page.afterId ?? null, page.limit + 1],
  );
  return toPage(rows.map(toRecord), page.limit, (key) => key.keyId);
}

export async function countActiveAdminKeys(db: SqlExecutor, accountId: string): Promise<number> {
  const row = await db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ? AND role = 'admin' AND revoked_at IS NULL`,
    [accountId],
  );
  return row?.n ?? 0;
}

/** Keys of the account that are not revoked, whatever their role. */
export async function countActiveApiKeys(db: SqlExecutor, accountId: string): Promise<number> {
  const row = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL', [accountId]);
  return Number(row?.n ?? 0);
}

/**
 * The LISTEN/NOTIFY channel of revocations on PostgreSQL: notified (at commit, by the database)
 * whenever a key is revoked or its account's API version changes, so every instance forgets the keys it remembers at once.
 */
export const API_KEYS_CHANNEL = 'mos_api_keys';

/** Marks the key revoked and, on PostgreSQL, tells every instance when `tx` commits. */
export async function markApiKeyRevoked(tx: SqlExecutor, keyId: string, revokedAt: string): Promise<void> {
  const { changes } = await tx.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [revokedAt, keyId]);
  if (changes > 0) await notifyOnCommit(tx, API_KEYS_CHANNEL);
}

export async function touchApiKey(tx: SqlExecutor, keyId: string, usedAt: string): Promise<void> {
  await tx.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [usedAt, keyId]);
}
