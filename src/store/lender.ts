/**
 * The lender's identity (accounts.lender_json), on the live account's row: one lender for both
 * environments. Read fresh each time rather than with the remembered account rows of
 * src/services/accounts.ts, which hold only what never changes.
 */
import type { Lender } from '../domain/accounts/lender.ts';
import type { SqlExecutor } from './store.ts';

export async function findLender(db: SqlExecutor, liveAccountId: string): Promise<Lender | null> {
  const row = await db.get<{ lender_json: string | null }>('SELECT lender_json FROM accounts WHERE id = ?', [liveAccountId]);
  return row?.lender_json ? (JSON.parse(row.lender_json) as Lender) : null;
}

export async function setLender(tx: SqlExecutor, liveAccountId: string, lender: Lender): Promise<void> {
  await tx.run('UPDATE accounts SET lender_json = ? WHERE id = ?', [JSON.stringify(lender), liveAccountId]);
}
