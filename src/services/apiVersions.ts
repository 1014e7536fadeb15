/**
 * The account's API version: what it is pinned to, the changes an upgrade to the current version
 * brings (from the change modules), the upgrade itself and its rollback within 72 hours. Both are
 * one action of an admin, recorded in the audit log. The dashboard's settings page and overview
 * call these; requests follow the new version as soon as it commits (the key cache forgets, and on
 * PostgreSQL every instance hears it at commit).
 */
import type { AppContext } from '../context.ts';
import { isLivemode, liveAccountId } from '../domain/accounts/environments.ts';
import { chooseVersion } from '../domain/versions/header.ts';
import type { VersionChange } from '../domain/versions/change.ts';
import { CURRENT_VERSION, changesBetween, VERSIONS } from '../domain/versions/registry.ts';
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

/**
 * Back to the version before the last upgrade, within 72 hours of it; 409
 * `api_version_rollback_unavailable` otherwise, and when `to` is given and is not that version.
 */
export async function rollBackApiVersion(ctx: AppContext, accountId: string, to?: string): Promise<string> {
  const live = liveAccountId(accountId);
  const restored = await ctx.store.transaction(async (tx) => {
    await lockAccount(tx, live);
    const account = (await findAccount(tx, live))!;
    const changedAt = account.apiVersionChangedAt === null ? null : Date.parse(account.apiVersionChangedAt);
    if (account.previousApiVersion === null || changedAt === null || ctx.clock.now().getTime() - changedAt > ROLLBACK_WINDOW_MS) {
      const asked = to === undefined ? '' : ` The account moves to the current version, ${CURRENT_VERSION}, or back to the one before an upgrade within 72 hours of it; not to ${to}.`;
      throw fail.conflict('api_version_rollback_unavailable', `There is no upgrade of the last 72 hours to roll back.${asked}`);
    }
    if (to !== undefined && to !== account.previousApiVersion) {
      throw fail.conflict(
        'api_version_rollback_unavailable',
        `The account moves to the current version, ${CURRENT_VERSION}, or back to ${account.previousApiVersion} (the version before its upgrade, until 72 hours after it); not to ${to}.`,
      );
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

/**
 * Pins the account to `version`, as an API key asks (POST /v1/account/api-version): the current
 * version is an upgrade, an older one a rollback (allowed to the version before an upgrade of the
 * last 72 hours only). A version the API does not have is 400 `api_version_invalid`. The account's
 * version is shared by its live and test environments, so a test key may not change it.
 */
export async function changeApiVersion(ctx: AppContext, accountId: string, version: string): Promise<AccountApiVersion> {
  if (!isLivemode(accountId)) throw fail.denied('live_key_required', "The account's API version is shared by live and test mode: change it with a live key.");
  if (!VERSIONS.includes(version)) {
    const choice = chooseVersion(version, VERSIONS, ctx.clock.now().toISOString().slice(0, 10));
    const reason = 'refused' in choice ? choice.refused.replace('Mos-Version', 'version') : `${version} is not a version of this API.`;
    throw fail.invalid('api_version_invalid', `${reason} Supported versions: ${VERSIONS.join(', ')}.`, [{ pointer: '/version', message: 'is not a version of this API' }], {
      supportedVersions: [...VERSIONS],
    });
  }
  if (version === CURRENT_VERSION) await upgradeApiVersion(ctx, accountId);
  else await rollBackApiVersion(ctx, accountId, version);
  return accountApiVersion(ctx, accountId);
}
