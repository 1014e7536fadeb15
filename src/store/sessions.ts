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
}

/** The account environment a session's pages work in. */
export type SessionEnvironment = 'live' | 'test';

interface SessionRow {
  id_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  environment: SessionEnvironment;
  account_id: string;
  email: string;
  role: UserRole;
  user_created_at: string;
}

export async function insertSession(tx: SqlExecutor, session: SessionRecord): Promise<void> {
  await tx.run('INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at, environment) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    session.idHash,
    session.userId,
    session.csrfToken,
    session.createdAt,
    session.lastSeenAt,
    session.expiresAt,
    session.environment,
  ]);
}

/** The session and its user, in one read (every dashboard request makes it). */
export async function findSession(db: SqlExecutor, idHash: string): Promise<{ session: SessionRecord; user: UserRecord } | undefined> {
  const row = await db.get<SessionRow>(
    `SELECT s.id_hash, s.user_id, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, s.environment,
            u.account_id, u.email, u.role, u.created_at AS user_created_at
       FROM sessions s JOIN users u ON u.id = s.user_id
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
    },
    user: { userId: row.user_id, accountId: row.account_id, email: row.email, role: row.role, createdAt: row.user_created_at },
  };
}

export async function touchSession(tx: SqlExecutor, idHash: string, seenAt: string): Promise<void> {
  await tx.run('UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?', [seenAt, idHash]);
}

export async function setSessionEnvironment(tx: SqlExecutor, idHash: string, environment: SessionEnvironment): Promise<void> {
  await tx.run('UPDATE sessions SET environment = ? WHERE id_hash = ?', [environment, idHash]);
}

export async function deleteSession(tx: SqlExecutor, idHash: string): Promise<number> {
  return (await tx.run('DELETE FROM sessions WHERE id_hash = ?', [idHash])).changes;
}

/** Removes sessions that ended: absolute expiry passed, or idle since before `idleBefore`. */
export async function deleteEndedSessions(tx: SqlExecutor, now: string, idleBefore: string): Promise<number> {
  return (await tx.run('DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at < ?', [now, idleBefore])).changes;
}
