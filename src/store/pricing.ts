/** Rate sheets: one row per account that set its own; the sheet is stored as its JSON text. */
import type { SqlExecutor } from './store.ts';

export interface StoredRateSheet {
  /** The sheet's JSON, as the account set it. */
  sheetJson: string;
  updatedAt: string;
}

export interface PricingContextRow {
  currency: string;
  sheetJson: string | null;
  updatedAt: string | null;
}

/** The memo's key (see RowMemo) for an account's pricing context; every write of rate_sheets forgets it. */
const contextKey = (accountId: string) => `pricing-context:${accountId}`;

/**
 * What pricing a loan needs from the store in one read: the account's currency and its own rate
 * sheet (null when it has none). Undefined when the account does not exist.
 *
 * Remembered where the engine offers a memo (sql.js): the read was a sixth of POST /v1/quotes's
 * CPU (issue 17). An account's currency never changes; its sheet changes only here, through
 * saveRateSheet and deleteRateSheet, which forget it.
 */
export async function findPricingContext(db: SqlExecutor, accountId: string): Promise<PricingContextRow | undefined> {
  const remembered = db.memo?.get<PricingContextRow>(contextKey(accountId));
  if (remembered) return remembered;
  const row = await db.get<{ currency: string; sheet: string | null; updated_at: string | null }>(
    `SELECT a.currency AS currency, r.sheet AS sheet, r.updated_at AS updated_at
       FROM accounts a LEFT JOIN rate_sheets r ON r.account_id = a.id
      WHERE a.id = ?`,
    [accountId],
  );
  if (!row) return undefined;
  const context: PricingContextRow = Object.freeze({ currency: row.currency, sheetJson: row.sheet, updatedAt: row.updated_at });
  db.memo?.set(contextKey(accountId), context);
  return context;
}

export async function findRateSheet(db: SqlExecutor, accountId: string): Promise<StoredRateSheet | undefined> {
  const row = await db.get<{ sheet: string; updated_at: string }>('SELECT sheet, updated_at FROM rate_sheets WHERE account_id = ?', [accountId]);
  return row && { sheetJson: row.sheet, updatedAt: row.updated_at };
}

/** Inserts or replaces the account's sheet (portable upsert: PostgreSQL and SQLite both take ON CONFLICT). */
export async function saveRateSheet(tx: SqlExecutor, accountId: string, sheetJson: string, updatedAt: string): Promise<void> {
  tx.memo?.forget(contextKey(accountId));
  await tx.run(
    `INSERT INTO rate_sheets (account_id, sheet, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET sheet = excluded.sheet, updated_at = excluded.updated_at`,
    [accountId, sheetJson, updatedAt],
  );
}

/** Removes the account's own sheet (it prices with the default again); returns how many rows went (0 or 1). */
export async function deleteRateSheet(tx: SqlExecutor, accountId: string): Promise<number> {
  tx.memo?.forget(contextKey(accountId));
  return (await tx.run('DELETE FROM rate_sheets WHERE account_id = ?', [accountId])).changes;
}
