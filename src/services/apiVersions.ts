/**
 * The account's API version: what it is pinned to, the changes an upgrade to the current version
 * brings (from the change modules), the upgrade itself and its rollback within 72 hours. Both are
 * one action of an admin, recorded in the audit log. The dashboard's settings page and overview
 * call these; requests follow the new version as soon as it commits (the key cache forgets, and on
 * PostgreSQL every instance hears it at commit).
 */
import type { AppContext } from '../context.ts';
import { liveAccountId } from '../domain/accounts/environments.ts';
import type { VersionChange } from '../domain/versions/change.ts';
import { CURRENT_VERSION, changesBetween } from '../domain/versions/registry.ts';
import { fail } from '../errors.ts';
import { findAccount, lockAccount, setAccountApiVersion } from '../store/accounts.ts';
import { recordAudit } from './audit.ts';

/** How long after an upgrade it may be rolled back. */
const ROLLBACK_WINDOW_MS = 72 * 60 * 60 * 1000;

export interface AccountApiVersion {
  apiVersion: string;
  currentVersion: string;
  /** The changes an upgrade to the current version brings, newest first (empty when pinned to it). */
  pendingChanges: VersionChange[];
  /** The version a rollback returns to, and until when it may be done; null when there is none. */
  rollback: { toVersion: string; until: string } | null;
}

export async function accountApiVersion(ctx: AppContext, accountId: string): Promise<AccountApiVersion> {
  const account = await ctx.store.read((db) => findAccount(db, liveAccountId(accountId)));
  if (!account) throw fail.notFound('The account no longer exists.');
  const until = account.apiVersionChangedAt === null ? null : Date.parse(account.apiVersionChangedAt) + ROLLBACK_WINDOW_MS;
  const rollback =
    account.previousApiVersion !== null && until !== null && ctx.clock.now().getTime() <= until
      ? { toVersion: account.previousApiVersion, until: new Date(until).toISOString() }
      : null;
  return { apiVersion: account.apiVersion, currentVersion: CURRENT_VERSION, pendingChanges: changesBetween(account.apiVersion, CURRENT_VERSION), rollback };
}

/** Pins the account to the current version; 409 `api_version_current` when it already is. */
export async function upgradeApiVersion(ctx: AppContext, accountId: string): Promise<string> {
  const live = liveAccountId(accountId);
  await ctx.store.transaction(async (tx) => {
    await lockAccount(tx, live);
    const account = (await findAccount(tx, live))!;
    if (account.apiVersion === CURRENT_VERSION) throw fail.conflict('api_version_current', `The account is already on the current version, ${CURRENT_VERSION}.`);
    await setAccountApiVersion(tx, live, { apiVersion: CURRENT_VERSION, previousApiVersion: account.apiVersion, changedAt: ctx.clock.now().toISOString() });
    await recordAudit(tx, ctx, {
      accountId: live,
      action: 'account.apiVersionUpgraded',
      target: { type: 'account', id: live },
      change: { before: { apiVersion: account.apiVersion }, after: { apiVersion: CURRENT_VERSION } },
    });
  });
  // Committed: this process's remembered keys carry the old version (other instances hear it by NOTIFY).
  ctx.authenticate.apiKeyRevoked();
  return CURRENT_VERSION;
}

/** Back to the version before the last upgrade, within 72 hours of it; 409 `api_version_rollback_unavailable` otherwise. */
export async function rollBackApiVersion(ctx: AppContext, accountId: string): Promise<string> {
  const live = liveAccountId(accountId);
  const restored = await ctx.store.transaction(async (tx) => {
    await lockAccount(tx, live);
    const account = (await findAccount(tx, live))!;
    const changedAt = account.apiVersionChangedAt === null ? null : Date.parse(account.apiVersionChangedAt);
    if (account.previousApiVersion === null || changedAt === null || ctx.clock.now().getTime() - changedAt > ROLLBACK_WINDOW_MS) {
      throw fail.conflict('api_version_rollback_unavailable', 'There is no upgrade of the last 72 hours to roll back.');
    }
    await setAccountApiVersion(tx, live, { apiVersion: account.previousApiVersion, previousApiVersion: null, changedAt: null });
    await recordAudit(tx, ctx, {
      accountId: live,
      action: 'account.apiVersionRolledBack',
      target: { type: 'account', id: live },
      change: { before: { apiVersion: account.apiVersion }, after: { apiVersion: account.previousApiVersion } },
    });
    return account.previousApiVersion;
  });
  ctx.authenticate.apiKeyRevoked();
  return restored;
}
