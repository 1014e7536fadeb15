/**
 * Bank tokens' reach, fixed at issue: the accounts their partner served when the service first
 * saw the token (or minted it). A token is kept only as the SHA-256 of its text.
 */
import type { SqlExecutor } from './store.ts';

export interface BankTokenBinding {
  tokenHash: string;
  partnerId: string;
  /** True: the partner served every account, so the token reaches the accounts that existed at `boundAt`. */
  everyAccount: boolean;
  boundAt: string;
  expiresAt: string | null;
}

interface BankTokenRow {
  token_hash: string;
  partner_id: string;
  every_account: number;
  bound_at: string;
  expires_at: string | null;
}

const toBinding = (row: BankTokenRow): BankTokenBinding => ({
  tokenHash: row.token_hash,
  partnerId: row.partner_id,
  everyAccount: Number(row.every_account) === 1,
  boundAt: row.bound_at,
  expiresAt: row.expires_at,
});

export async function findBankTokenBinding(db: SqlExecutor, tokenHash: string): Promise<BankTokenBinding | undefined> {
  const row = await db.get<BankTokenRow>('SELECT token_hash, partner_id, every_account, bound_at, expires_at FROM bank_tokens WHERE token_hash = ?', [tokenHash]);
  return row && toBinding(row);
}

/**
 * Binds a token to what its partner serves now (every account, or the accounts listed for a
 * restricted partner), unless it is bound already: the first binding stands (true when this call
 * made it).
 */
export async function bindBankToken(tx: SqlExecutor, binding: BankTokenBinding): Promise<boolean> {
  const { changes } = await tx.run(
    `INSERT INTO bank_tokens (token_hash, partner_id, every_account, bound_at, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (token_hash) DO NOTHING`,
    [binding.tokenHash, binding.partnerId, binding.everyAccount ? 1 : 0, binding.boundAt, binding.expiresAt],
  );
  if (changes === 0) return false;
  if (!binding.everyAccount) {
    await tx.run('INSERT INTO bank_token_accounts (token_hash, account_id) SELECT ?, account_id FROM bank_partner_accounts WHERE partner_id = ?', [
      binding.tokenHash,
      binding.partnerId,
    ]);
  }
  return true;
}

/** Whether a bound token reaches the account `accountId` (a live account's id). */
export async function bindingReachesAccount(db: SqlExecutor, binding: BankTokenBinding, accountId: string): Promise<boolean> {
  const row = binding.everyAccount
    ? await db.get('SELECT 1 AS present FROM accounts WHERE id = ? AND created_at <= ?', [accountId, binding.boundAt])
    : await db.get('SELECT 1 AS present FROM bank_token_accounts WHERE token_hash = ? AND account_id = ?', [binding.tokenHash, accountId]);
  return row !== undefined;
}

/** Forgets the bindings of tokens that expired before `now` (a token past its expiry is refused by its partner anyway). */
export async function deleteExpiredBankTokens(tx: SqlExecutor, now: string): Promise<void> {
  await tx.run('DELETE FROM bank_tokens WHERE expires_at IS NOT NULL AND expires_at < ?', [now]);
}
