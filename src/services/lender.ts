/**
 * The lender's identity on the account (name and address; notices to applicants give them): read
 * by GET /v1/account and the notices, written by an admin in the dashboard's settings, with an
 * audit entry on the live account (the lender is the same in both environments).
 */
import type { AppContext } from '../context.ts';
import { liveAccountId } from '../domain/accounts/environments.ts';
import { lenderFromForm, type Lender, type LenderForm } from '../domain/accounts/lender.ts';
import { throwIfIssues } from '../errors.ts';
import { findLender, setLender } from '../store/lender.ts';
import { recordAudit } from './audit.ts';

/** The account's lender, or null until an admin sets it (either environment's id). */
export async function getLender(ctx: AppContext, accountId: string): Promise<Lender | null> {
  return ctx.store.read((db) => findLender(db, liveAccountId(accountId)));
}

/** Replaces the lender with what the form says (400 with pointers when it is not valid). */
export async function updateLender(ctx: AppContext, accountId: string, form: LenderForm): Promise<Lender> {
  const parsed = lenderFromForm(form);
  if ('issues' in parsed) {
    throwIfIssues(parsed.issues);
    throw new Error('unreachable: issues were found');
  }
  const live = liveAccountId(accountId);
  await ctx.store.transaction(async (tx) => {
    const before = await findLender(tx, live);
    await setLender(tx, live, parsed.lender);
    await recordAudit(tx, ctx, { accountId: live, action: 'account.lenderUpdated', target: { type: 'account', id: live }, change: { before, after: parsed.lender } });
  });
  return parsed.lender;
}
