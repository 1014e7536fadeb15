/**
 * The lender's identity (accounts.lender_json), on the live account's row: one lender for both
 * environments. Remembered where the engine offers a memo (see RowMemo): GET /v1/account reads it
 * on every call, and without the memo that read was most of the request's database time on
 * PostgreSQL (0.55× sql.js's requests a second, against 1.0× before the lender was added). Only
 * setLender writes the column, and it forgets the row. The text is remembered, not the object, so
 * every caller gets a lender of its own to change.
 */
import type { Lender } from '../domain/accounts/lender.ts';
import type { SqlExecutor } from './store.ts';

/** The memo's key for an account's lender (null remembered too: most accounts have none). */
const lenderKey = (liveAccountId: string) => `lender:${liveAccountId}`;

export async function findLender(db: SqlExecutor, liveAccountId: string): Promise<Lender | null> {
  let text = db.memo?.get<string | null>(lenderKey(liveAccountId));
  if (text === undefined) {
    const row = await db.get<{ lender_json: string | null }>('SELECT lender_json FROM accounts WHERE id = ?', [liveAccountId]);
    text = row?.lender_json ?? null;
    if (row) db.memo?.set(lenderKey(liveAccountId), text);
  }
  return text ? (JSON.parse(text) as Lender) : null;
}

export async function setLender(tx: SqlExecutor, liveAccountId: string, lender: Lender): Promise<void> {
  tx.memo?.forget(lenderKey(liveAccountId));
  await tx.run('UPDATE accounts SET lender_json = ? WHERE id = ?', [JSON.stringify(lender), liveAccountId]);
}
