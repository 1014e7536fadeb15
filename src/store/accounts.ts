/** Accounts: the owners of every other record. */
import { forUpdate, type SqlExecutor } from './store.ts';

export interface AccountRecord {
  accountId: string;
  name: string;
  email: string;
  currency: string;
  createdAt: string;
}

interface AccountRow {
  id: string;
  name: string;
  email: string;
  currency: string;
  created_at: string;
}

const toRecord = (row: AccountRow): AccountRecord => ({
  accountId: row.id,
  name: row.name,
  email: row.email,
  currency: row.currency,
  createdAt: row.created_at,
});

export async function insertAccount(tx: SqlExecutor, account: AccountRecord): Promise<void> {
  await tx.run('INSERT INTO accounts (id, name, email, currency, created_at) VALUES (?, ?, ?, ?, ?)', [
    account.accountId,
    account.name,
    account.email,
    account.currency,
    account.createdAt,
  ]);
}

/**
 * The account's test environment: a twin row owning the account's test records, with the
 * account's name, email and currency (src/domain/accounts/environments.ts gives its id).
 */
export async function insertTestEnvironment(tx: SqlExecutor, accountId: string, testEnvironmentId: string): Promise<void> {
  await tx.run(
    `INSERT INTO accounts (id, name, email, currency, created_at, live_account_id)
     SELECT ?, name, email, currency, created_at, id FROM accounts WHERE id = ?`,
    [testEnvironmentId, accountId],
  );
}

export async function findAccount(db: SqlExecutor, accountId: string): Promise<AccountRecord | undefined> {
  const row = await db.get<AccountRow>('SELECT id, name, email, currency, created_at FROM accounts WHERE id = ?', [accountId]);
  return row && toRecord(row);
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
