/**
 * The one answer every use case gives for an application id the caller's environment does not have
 * (another account's, the other mode's, or none at all): the same 404, so none of them tells which.
 */
import { fail } from '../errors.ts';
import { findApplication, type ApplicationRecord } from '../store/applications.ts';
import type { SqlExecutor } from '../store/store.ts';

export function applicationNotFound(mortgageId: string) {
  return fail.notFound(`No application ${mortgageId} in this account.`);
}

/** The application of the account, or that 404. */
export async function requireApplication(db: SqlExecutor, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  const application = await findApplication(db, accountId, mortgageId);
  if (!application) throw applicationNotFound(mortgageId);
  return application;
}
