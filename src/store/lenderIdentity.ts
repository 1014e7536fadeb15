/**
 * The lender's identity for the HMDA transmittal sheet, from the account's settings: one lender
 * for both environments (a test register names the same lender as the live one).
 */
import { liveAccountId } from '../domain/accounts/environments.ts';
import type { LenderIdentity } from '../domain/hmda/source.ts';
import type { SqlExecutor } from './store.ts';

export async function findLenderIdentity(db: SqlExecutor, accountId: string): Promise<LenderIdentity> {
  const row = await db.get<{ name: string }>('SELECT name FROM accounts WHERE id = ?', [liveAccountId(accountId)]);
  return { name: row?.name ?? null, address: null, lei: null, contact: null, taxId: null, agencyCode: null };
}
