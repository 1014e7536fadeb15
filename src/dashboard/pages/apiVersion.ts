/**
 * The account's API version on the settings page (admins): upgrade to the current version in one
 * action, and roll it back within 72 hours. Both are recorded in the audit log by the use case.
 */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { rollBackApiVersion, upgradeApiVersion } from '../../services/apiVersions.ts';
import { actingAs, accountOf, redirect, requireRoleFor } from '../page.ts';

export const API_VERSION_DONE: Record<string, string> = {
  apiVersionUpgraded: 'The account is on the current API version: requests without Mos-Version are answered in it. You can roll back for 72 hours.',
  apiVersionRolledBack: 'The upgrade is rolled back: requests without Mos-Version are answered in the earlier version again.',
};

export function apiVersionRoutes(router: Router, ctx: AppContext): void {
  // Admin only, as every write of the settings page (the role of the underwriting rules' update).
  router.post('settings.api-version.upgrade', '/settings/api-version/upgrade', async (koa) => {
    const session = requireRoleFor(koa, 'updateUnderwritingRules');
    await upgradeApiVersion(actingAs(ctx, koa, session), accountOf(session));
    redirect(koa, '/dashboard/settings?done=apiVersionUpgraded#api-version');
  });
  router.post('settings.api-version.rollback', '/settings/api-version/rollback', async (koa) => {
    const session = requireRoleFor(koa, 'updateUnderwritingRules');
    await rollBackApiVersion(actingAs(ctx, koa, session), accountOf(session));
    redirect(koa, '/dashboard/settings?done=apiVersionRolledBack#api-version');
  });
}
