/**
 * Dashboard sign-in sessions. A session is looked up by the SHA-256 of the id its cookie holds,
 * so the table (or a backup of it) opens no session.
 */
import type { SqlExecutor } from './store.ts';
import type { UserRecord, UserRole } from './users.ts';

export interface SessionRecord {
  idHash: string;
  userId: string;
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  environment: SessionEnvironment;
  /** 'second_factor': the password was right and the code is still to come; the session can do nothing else. */
  stage: SessionStage;
  /** When this session last checked the user's second factor (ISO 8601), or null: never. */
  secondFactorAt: string | null;
}

/** The account environment a session's pages work in. */
export type SessionEnvironment = 'live' | 'test';

export type SessionStage = 'signed_in' | 'second_factor';

/** What a session's pages need to know of the user's second factor. */
export interface SessionMfa {
  /** The user has a confirmed second factor. */
  enrolled: boolean;
  /** The user's account requires one of everyone. */
  required: boolean;
}

interface SessionRow {
  id_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  environment: SessionEnvironment;
  stage: SessionStage;
  second_factor_at: string | null;
  mfa_enrolled: number;
  mfa_required: number;
  account_id: string;
  email: string;
  role: UserRole;
  user_created_at: string;
}

export async function insertSession(tx: SqlExecutor, session: SessionRecord): Promise<void> {
  await tx.run(
    'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at, environment, stage, second_factor_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [session.idHash, session.userId, session.csrfToken, session.createdAt, session.lastSeenAt, session.expiresAt, session.environment, session.stage, session.secondFactorAt],
  );
}

/** The session, its user and their second factor's state, in one read (every dashboard request makes it). */
export async function findSession(db: SqlExecutor, idHash: string): Promise<{ session: SessionRecord; user: UserRecord; mfa: SessionMfa } | undefined> {
  const row = await db.get<SessionRow>(
    `SELECT s.id_hash, s.user_id, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, s.environment, s.stage, s.second_factor_at,
            u.account_id, u.email, u.role, u.created_at AS user_created_at,
            CASE WHEN u.totp_secret IS NULL THEN 0 ELSE 1 END AS mfa_enrolled, a.mfa_required
       FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
      WHERE s.id_hash = ?`,
    [idHash],
  );
  if (!row) return undefined;
  return {
    session: {
      idHash: row.id_hash,
      userId: row.user_id,
      csrfToken: row.csrf_token,
      createdAt: row.created_at,
      lastSeenAt: row.last_seen_at,
      expiresAt: row.expires_at,
      environment: row.environment,
      stage: row.stage,
      secondFactorAt: row.second_factor_at,
    },
    user: { userId: row.user_id, accountId: row.account_id, email: row.email, role: row.role, createdAt: row.user_created_at },
    mfa: { enrolled: Number(row.mfa_enrolled) === 1, required: Number(row.mfa_required) === 1 },
  };
}

export async function touchSession(tx: SqlExecutor, idHash: string, seenAt: string): Promise<void> {
  await tx.run('UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?', [seenAt, idHash]);
}

export async function setSessionEnvironment(tx: SqlExecutor, idHash: string, environment: SessionEnvironment): Promise<void> {
  await tx.run('UPDATE sessions SET environment = ? WHERE id_hash = ?', [environment, idHash]);
}

/** The session's second factor was checked now: it leaves the 'second_factor' stage, and sensitive actions count from `at`. */
export async function markSecondFactorChecked(tx: SqlExecutor, idHash: string, at: string): Promise<void> {
  await tx.run("UPDATE sessions SET stage = 'signed_in', second_factor_at = ? WHERE id_hash = ?", [at, idHash]);
}

/** Gives the session a new id (its hash) and CSRF token: the old id opens nothing from now on. */
export async function renewSessionId(tx: SqlExecutor, idHash: string, renewed: { idHash: string; csrfToken: string }): Promise<number> {
  return (await tx.run('UPDATE sessions SET id_hash = ?, csrf_token = ? WHERE id_hash = ?', [renewed.idHash, renewed.csrfToken, idHash])).changes;
}

/** Ends every session of the user but `keep` (its id hash), after their second factor was reset or disabled. */
export async function deleteUserSessions(tx: SqlExecutor, userId: string, keep: string | null = null): Promise<number> {
  return (await tx.run('DELETE FROM sessions WHERE user_id = ? AND id_hash <> ?', [userId, keep ?? ''])).changes;
}

export async function deleteSession(tx: SqlExecutor, idHash: string): Promise<number> {
  return (await tx.run('DELETE FROM sessions WHERE id_hash = ?', [idHash])).changes;
}

/** Removes sessions that ended: absolute expiry passed, or idle since before `idleBefore`. */
export async function deleteEndedSessions(tx: SqlExecutor, now: string, idleBefore: string): Promise<number> {
  return (await tx.run('DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at < ?', [now, idleBefore])).changes;
}
