/** Invitations to join an account: one-time links, of which only the token's SHA-256 is kept. */
import { forUpdate, type SqlExecutor } from './store.ts';
import type { UserRole } from './users.ts';

export interface InvitationRecord {
  invitationId: string;
  accountId: string;
  /** Lower-cased: the address the invitee signs in with. */
  email: string;
  role: UserRole;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

interface InvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: UserRole;
  invited_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = 'id, account_id, email, role, invited_by, created_at, expires_at, accepted_at, revoked_at';

const toRecord = (row: InvitationRow): InvitationRecord => ({
  invitationId: row.id,
  accountId: row.account_id,
  email: row.email,
  role: row.role,
  invitedBy: row.invited_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  acceptedAt: row.accepted_at,
  revokedAt: row.revoked_at,
});

export async function insertInvitation(tx: SqlExecutor, invitation: InvitationRecord, tokenHash: string): Promise<void> {
  await tx.run(`INSERT INTO invitations (${COLUMNS}, token_hash) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`, [
    invitation.invitationId,
    invitation.accountId,
    invitation.email,
    invitation.role,
    invitation.invitedBy,
    invitation.createdAt,
    invitation.expiresAt,
    tokenHash,
  ]);
}

/** The invitation a token names; `locked` (in a transaction) locks it on PostgreSQL, so two acceptances take turns. */
export async function findInvitationByTokenHash(db: SqlExecutor, tokenHash: string, locked = false): Promise<InvitationRecord | undefined> {
  const lock = locked ? forUpdate(db) : '';
  const row = await db.get<InvitationRow>(`SELECT ${COLUMNS} FROM invitations WHERE token_hash = ?${lock}`, [tokenHash]);
  return row && toRecord(row);
}

/** Invitations of the account still open at `now` (not used, revoked or lapsed), newest first. */
export async function listOpenInvitations(db: SqlExecutor, accountId: string, now: string): Promise<InvitationRecord[]> {
  const rows = await db.all<InvitationRow>(
    `SELECT ${COLUMNS} FROM invitations
      WHERE account_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?
      ORDER BY id DESC LIMIT 100`,
    [accountId, now],
  );
  return rows.map(toRecord);
}

export async function markInvitationAccepted(tx: SqlExecutor, invitationId: string, acceptedAt: string): Promise<boolean> {
  return (await tx.run('UPDATE invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL', [acceptedAt, invitationId])).changes === 1;
}

/** Revokes an open invitation of this account; false when there is none. */
export async function markInvitationRevoked(tx: SqlExecutor, accountId: string, invitationId: string, revokedAt: string): Promise<boolean> {
  return (
    (await tx.run('UPDATE invitations SET revoked_at = ? WHERE account_id = ? AND id = ? AND accepted_at IS NULL AND revoked_at IS NULL', [
      revokedAt,
      accountId,
      invitationId,
    ])).changes === 1
  );
}
