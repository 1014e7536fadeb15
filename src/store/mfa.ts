/**
 * The dashboard's second factor: each user's TOTP secret (sealed, like every secret at rest), the
 * last time step accepted (no code twice), their recovery codes (SHA-256 only), and the account's
 * requirement.
 */
import { totpSecretContext } from './sealedColumns.ts';
import type { SqlExecutor } from './store.ts';

export interface UserMfa {
  /** The confirmed secret (base32), or null: not enrolled. */
  secret: string | null;
  /** The secret being enrolled (shown as a QR code, not yet confirmed by a code), or null. */
  pendingSecret: string | null;
  enrolledAt: string | null;
  /** The RFC 6238 step of the last code accepted, or null: none yet. */
  lastStep: number | null;
}

interface MfaRow {
  id: string;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_enrolled_at: string | null;
  totp_last_step: number | null;
}

export async function findUserMfa(db: SqlExecutor, userId: string): Promise<UserMfa | undefined> {
  const row = await db.get<MfaRow>('SELECT id, totp_secret, totp_pending_secret, totp_enrolled_at, totp_last_step FROM users WHERE id = ?', [userId]);
  if (!row) return undefined;
  const open = (value: string | null) => (value === null ? null : db.sealer.open(value, totpSecretContext(row.id)));
  return {
    secret: open(row.totp_secret),
    pendingSecret: open(row.totp_pending_secret),
    enrolledAt: row.totp_enrolled_at,
    lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
  };
}

export async function setPendingSecret(tx: SqlExecutor, userId: string, secret: string): Promise<void> {
  await tx.run('UPDATE users SET totp_pending_secret = ? WHERE id = ?', [tx.sealer.seal(secret, totpSecretContext(userId)), userId]);
}

/** The pending secret becomes the user's factor, with the step of the code that confirmed it as the last one used. */
export async function confirmPendingSecret(tx: SqlExecutor, userId: string, step: number, now: string): Promise<boolean> {
  const { changes } = await tx.run(
    'UPDATE users SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_enrolled_at = ?, totp_last_step = ? WHERE id = ? AND totp_pending_secret IS NOT NULL AND totp_secret IS NULL',
    [now, step, userId],
  );
  return changes === 1;
}

/**
 * Records `step` as the last one used, only if it is later than the one recorded: false when a
 * code of this step (or a later one) was taken already, by this request's twin too.
 */
export async function claimTotpStep(tx: SqlExecutor, userId: string, step: number): Promise<boolean> {
  const { changes } = await tx.run('UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < ?)', [
    step,
    userId,
    step,
  ]);
  return changes === 1;
}

/** Removes the user's factor and recovery codes (disabled by the user, or reset by an admin). */
export async function clearUserMfa(tx: SqlExecutor, userId: string): Promise<void> {
  await tx.run('UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_enrolled_at = NULL, totp_last_step = NULL WHERE id = ?', [userId]);
  await tx.run('DELETE FROM mfa_recovery_codes WHERE user_id = ?', [userId]);
}

/** The user's recovery codes become these (by hash); the earlier ones stop working. */
export async function replaceRecoveryCodes(tx: SqlExecutor, userId: string, codeHashes: readonly string[], now: string): Promise<void> {
  await tx.run('DELETE FROM mfa_recovery_codes WHERE user_id = ?', [userId]);
  for (const hash of codeHashes) await tx.run('INSERT INTO mfa_recovery_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)', [userId, hash, now]);
}

/** Marks an unused code used; false when there is no such unused code (never issued, or used already). */
export async function useRecoveryCode(tx: SqlExecutor, userId: string, codeHash: string, now: string): Promise<boolean> {
  const { changes } = await tx.run('UPDATE mfa_recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL', [now, userId, codeHash]);
  return changes === 1;
}

export async function countUnusedRecoveryCodes(db: SqlExecutor, userId: string): Promise<number> {
  const row = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM mfa_recovery_codes WHERE user_id = ? AND used_at IS NULL', [userId]);
  return Number(row?.n ?? 0);
}

/** The ids of the account's users who have a second factor. */
export async function listEnrolledUserIds(db: SqlExecutor, accountId: string): Promise<Set<string>> {
  const rows = await db.all<{ id: string }>('SELECT id FROM users WHERE account_id = ? AND totp_secret IS NOT NULL', [accountId]);
  return new Set(rows.map((row) => row.id));
}

export async function accountRequiresMfa(db: SqlExecutor, accountId: string): Promise<boolean> {
  const row = await db.get<{ mfa_required: number }>('SELECT mfa_required FROM accounts WHERE id = ?', [accountId]);
  return Number(row?.mfa_required ?? 0) === 1;
}

export async function setAccountMfaRequired(tx: SqlExecutor, accountId: string, required: boolean): Promise<void> {
  await tx.run('UPDATE accounts SET mfa_required = ? WHERE id = ?', [required ? 1 : 0, accountId]);
}

/** Whether the user has a confirmed second factor (no secret is opened to tell). */
export async function userHasMfa(db: SqlExecutor, userId: string): Promise<boolean> {
  return (await db.get('SELECT id FROM users WHERE id = ? AND totp_secret IS NOT NULL', [userId])) !== undefined;
}
