/** Dashboard users: people who sign in to an account, each with a role. */
import type { components } from '../../generated/api.d.ts';
import { forUpdate, type SqlExecutor } from './store.ts';

/** A user's role has the same two values as an API key's (admin manages integrations, member reads). */
export type UserRole = components['schemas']['ApiKeyRole'];

export interface UserRecord {
  userId: string;
  accountId: string;
  /** Lower-cased. */
  email: string;
  role: UserRole;
  createdAt: string;
}

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  role: UserRole;
  created_at: string;
}

const COLUMNS = 'id, account_id, email, role, created_at';

const toRecord = (row: UserRow): UserRecord => ({
  userId: row.id,
  accountId: row.account_id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at,
});

export async function insertUser(tx: SqlExecutor, user: UserRecord, passwordHash: string): Promise<void> {
  await tx.run(`INSERT INTO users (${COLUMNS}, password_hash) VALUES (?, ?, ?, ?, ?, ?)`, [
    user.userId,
    user.accountId,
    user.email,
    user.role,
    user.createdAt,
    passwordHash,
  ]);
}

/** The user with this (lower-cased) email and their password hash, for sign-in. */
export async function findUserByEmail(db: SqlExecutor, email: string): Promise<{ user: UserRecord; passwordHash: string } | undefined> {
  const row = await db.get<UserRow & { password_hash: string }>(`SELECT ${COLUMNS}, password_hash FROM users WHERE email = ?`, [email]);
  return row && { user: toRecord(row), passwordHash: row.password_hash };
}

export async function emailTaken(db: SqlExecutor, email: string): Promise<boolean> {
  return (await db.get('SELECT id FROM users WHERE email = ?', [email])) !== undefined;
}

/** Whether this account has a user with this email (another account's users are not looked at). */
export async function accountHasEmail(db: SqlExecutor, accountId: string, email: string): Promise<boolean> {
  return (await db.get('SELECT id FROM users WHERE account_id = ? AND email = ?', [accountId, email])) !== undefined;
}

/** A user of this account, or undefined: another account's user is indistinguishable from none. */
export async function findAccountUser(db: SqlExecutor, accountId: string, userId: string): Promise<UserRecord | undefined> {
  const lock = forUpdate(db);
  const row = await db.get<UserRow>(`SELECT ${COLUMNS} FROM users WHERE account_id = ? AND id = ?${lock}`, [accountId, userId]);
  return row && toRecord(row);
}

/** Every user of the account, oldest first (a team is small: the invitation flow adds them one by one). */
export async function listAccountUsers(db: SqlExecutor, accountId: string): Promise<UserRecord[]> {
  const rows = await db.all<UserRow>(`SELECT ${COLUMNS} FROM users WHERE account_id = ? ORDER BY id`, [accountId]);
  return rows.map(toRecord);
}

export async function countAccountAdmins(db: SqlExecutor, accountId: string): Promise<number> {
  const row = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM users WHERE account_id = ? AND role = 'admin'`, [accountId]);
  return Number(row?.n ?? 0);
}

export async function setUserRole(tx: SqlExecutor, userId: string, role: UserRole): Promise<void> {
  await tx.run('UPDATE users SET role = ? WHERE id = ?', [role, userId]);
}

export async function setPasswordHash(tx: SqlExecutor, userId: string, passwordHash: string): Promise<void> {
  await tx.run('UPDATE users SET password_hash = ? WHERE id = ?', [passwordHash, userId]);
}

/** Removes the user, their sessions and their recovery codes. */
export async function deleteUser(tx: SqlExecutor, userId: string): Promise<void> {
  await tx.run('DELETE FROM sessions WHERE user_id = ?', [userId]);
  await tx.run('DELETE FROM mfa_recovery_codes WHERE user_id = ?', [userId]);
  await tx.run('DELETE FROM users WHERE id = ?', [userId]);
}
