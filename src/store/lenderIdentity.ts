/**
 * The lender's identity for the HMDA transmittal sheet: the account's lender settings
 * (accounts.lender_json, on the live account's row: one lender for both environments, so a test
 * register names the same lender as the live one).
 */
import { liveAccountId } from '../domain/accounts/environments.ts';
import type { LenderIdentity } from '../domain/hmda/source.ts';
import { findLender } from './lender.ts';
import type { SqlExecutor } from './store.ts';

export async function findLenderIdentity(db: SqlExecutor, accountId: string): Promise<LenderIdentity> {
  const lender = await findLender(db, liveAccountId(accountId));
  return {
    name: lender?.name ?? null,
    address: lender?.address ?? null,
    lei: lender?.lei ?? null,
    contact: lender?.contact ?? null,
    taxId: lender?.taxId ?? null,
    agencyCode: lender?.agencyCode ?? null,
  };
}
