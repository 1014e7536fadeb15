/**
 * Bank verifications: one row per completed check, history kept; the latest by checked_at is an
 * application's current outcome. No full account number here: the mask and a keyed hash only.
 */
import type { FailedCheck } from '../domain/banks/verification.ts';
import type { NameMatchOutcome } from '../domain/banks/nameMatch.ts';
import type { SqlExecutor } from './store.ts';

export interface BankVerificationRecord {
  verificationId: string;
  accountId: string;
  mortgageId: string;
  partnerId: string;
  verified: boolean;
  /** The last four characters of the submitted account number. */
  accountMask: string;
  /** HMAC-SHA-256 (server secret) of the submitted account number, hex. */
  accountNumberHash: string;
  /** Keyed hash of the number the partner holds for the token's account. */
  linkedAccountHash: string;
  nameScore: number;
  nameOutcome: NameMatchOutcome;
  failedChecks: FailedCheck[];
  checkedAt: string;
}

interface BankVerificationRow {
  id: string;
  account_id: string;
  mortgage_id: string;
  partner_id: string;
  verified: number;
  account_mask: string;
  account_number_hash: string;
  linked_account_hash: string;
  name_score: string;
  name_outcome: NameMatchOutcome;
  failed_checks: string;
  checked_at: string;
}

const COLUMNS = 'id, account_id, mortgage_id, partner_id, verified, account_mask, account_number_hash, linked_account_hash, name_score, name_outcome, failed_checks, checked_at';

const toRecord = (row: BankVerificationRow): BankVerificationRecord => ({
  verificationId: row.id,
  accountId: row.account_id,
  mortgageId: row.mortgage_id,
  partnerId: row.partner_id,
  verified: row.verified === 1,
  accountMask: row.account_mask,
  accountNumberHash: row.account_number_hash,
  linkedAccountHash: row.linked_account_hash,
  nameScore: Number(row.name_score),
  nameOutcome: row.name_outcome,
  failedChecks: JSON.parse(row.failed_checks) as FailedCheck[],
  checkedAt: row.checked_at,
});

export async function insertBankVerification(tx: SqlExecutor, v: BankVerificationRecord): Promise<void> {
  await tx.run(`INSERT INTO bank_verifications (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    v.verificationId,
    v.accountId,
    v.mortgageId,
    v.partnerId,
    v.verified ? 1 : 0,
    v.accountMask,
    v.accountNumberHash,
    v.linkedAccountHash,
    v.nameScore.toFixed(3),
    v.nameOutcome,
    JSON.stringify(v.failedChecks),
    v.checkedAt,
  ]);
}

/**
 * checked_at of the failed verifications of this application with this linked account (the one the
 * bank token names, by its keyed hash) after `since`: the attempt limit's window. Counting per
 * linked account stops guessing with one token, while a stranger's failures with their own
 * account cannot lock the applicant out.
 */
export async function failedVerificationTimes(db: SqlExecutor, mortgageId: string, linkedAccountHash: string, since: string): Promise<string[]> {
  const rows = await db.all<{ checked_at: string }>(
    `SELECT checked_at FROM bank_verifications
      WHERE mortgage_id = ? AND linked_account_hash = ? AND verified = 0 AND checked_at > ? ORDER BY checked_at`,
    [mortgageId, linkedAccountHash, since],
  );
  return rows.map((r) => r.checked_at);
}

/** Every verification of an application, oldest first (history; bounded by the attempt limit in practice). */
export async function listBankVerifications(db: SqlExecutor, accountId: string, mortgageId: string): Promise<BankVerificationRecord[]> {
  const rows = await db.all<BankVerificationRow>(
    `SELECT ${COLUMNS} FROM bank_verifications WHERE account_id = ? AND mortgage_id = ? ORDER BY checked_at, id`,
    [accountId, mortgageId],
  );
  return rows.map(toRecord);
}

/**
 * The account that owns an application, looked up by id alone: a bank token is tied to a partner,
 * not to an account, so the verification finds the application across accounts and then checks
 * that the partner serves that account. Reads the applications table (owned by
 * src/store/applications.ts) for this one column; the record itself comes from findApplication.
 */
export async function applicationOwner(db: SqlExecutor, mortgageId: string): Promise<string | undefined> {
  const row = await db.get<{ account_id: string }>('SELECT account_id FROM applications WHERE id = ?', [mortgageId]);
  return row?.account_id;
}
