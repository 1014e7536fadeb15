/** Accounts: the owners of every other record. */
import { API_KEYS_CHANNEL } from './apiKeys.ts';
import { forUpdate, notifyOnCommit, type SqlExecutor } from './store.ts';

const COLUMNS = 'id, name, email, currency, created_at, api_version, api_version_previous, api_version_changed_at';

export interface AccountRecord {
  accountId: string;
  name: string;
  email: string;
  currency: string;
  createdAt: string;
  /** The API version the account is pinned to (src/domain/versions/). */
  apiVersion: string;
  /** Before the last change of apiVersion, and when it was made: an upgrade can be rolled back for a while. */
  previousApiVersion: string | null;
  apiVersionChangedAt: string | null;
}

interface AccountRow {
  id: string;
  name: string;
  email: string;
  currency: string;
  created_at: string;
  api_version: string;
  api_version_previous: string | null;
  api_version_changed_at: string | null;
}

const toRecord = (row: AccountRow): AccountRecord => ({
  accountId: row.id,
  name: row.name,
  email: row.email,
  currency: row.currency,
  createdAt: row.created_at,
  apiVersion: row.api_version,
  previousApiVersion: row.api_version_previous,
  apiVersionChangedAt: row.api_version_changed_at,
});

/** A new account's row; without apiVersion it takes the column's default, the first version (as rows made before versions did). */
export type NewAccount = Pick<AccountRecord, 'accountId' | 'name' | 'email' | 'currency' | 'createdAt'> & { apiVersion?: string };

export async function insertAccount(tx: SqlExecutor, account: NewAccount): Promise<void> {
  const values = [account.accountId, account.name, account.email, account.currency, account.createdAt];
  if (account.apiVersion === undefined) {
    await tx.run('INSERT INTO accounts (id, name, email, currency, created_at) VALUES (?, ?, ?, ?, ?)', values);
  } else {
    await tx.run('INSERT INTO accounts (id, name, email, currency, created_at, api_version) VALUES (?, ?, ?, ?, ?, ?)', [...values, account.apiVersion]);
  }
}

/**
 * The account's test environment: a twin row owning the account's test records, with the
 * account's name, email and currency (src/domain/accounts/environments.ts gives its id).
 */
export async function insertTestEnvironment(tx: SqlExecutor, accountId: string, testEnvironmentId: string): Promise<void> {
  await tx.run(
    `INSERT INTO accounts (id, name, email, currency, created_at, api_version, live_account_id)
     SELECT ?, name, email, currency, created_at, api_version, id FROM accounts WHERE id = ?`,
    [testEnvironmentId, accountId],
  );
}

export async function findAccount(db: SqlExecutor, accountId: string): Promise<AccountRecord | undefined> {
  const row = await db.get<AccountRow>(`SELECT ${COLUMNS} FROM accounts WHERE id = ?`, [accountId]);
  return row && toRecord(row);
}

/**
 * Pins the account (both its environments, which share one version) to `apiVersion`, keeping the
 * version it leaves and when, for a rollback. Tells every instance at commit (the key cache holds
 * the version with each key, src/services/authentication.ts).
 */
export async function setAccountApiVersion(
  tx: SqlExecutor,
  accountId: string,
  change: { apiVersion: string; previousApiVersion: string | null; changedAt: string | null },
): Promise<void> {
  await tx.run('UPDATE accounts SET api_version = ?, api_version_previous = ?, api_version_changed_at = ? WHERE id = ? OR live_account_id = ?', [
    change.apiVersion,
    change.previousApiVersion,
    change.changedAt,
    accountId,
    accountId,
  ]);
  await notifyOnCommit(tx, API_KEYS_CHANNEL);
}

/**
 * Locks the account's row until the transaction ends (PostgreSQL `FOR UPDATE`; sql.js runs one
 * transaction at a time already). Changes that must see every other change of the account's keys
 * first (revoking a key while keeping one admin key) take it, so racing instances take turns.
 */
export async function lockAccount(tx: SqlExecutor, accountId: string): Promise<boolean> {
  const lock = forUpdate(tx);
  return (await tx.get(`SELECT id FROM accounts WHERE id = ?${lock}`, [accountId])) !== undefined;
}
