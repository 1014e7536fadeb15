/** GET /v1/account, POST /v1/account/api-version */
import type { OperationHandlers } from '../contract/handlers.ts';
import { getAccount } from '../services/accounts.ts';
import { changeApiVersion } from '../services/apiVersions.ts';

export const accountOperations = {
  getAccount: async (_input, ctx) => ({ status: 200, body: await getAccount(ctx, ctx.principal.accountId, ctx.principal.apiVersion) }),

  changeApiVersion: async ({ body }, ctx) => {
    const changed = await changeApiVersion(ctx, ctx.principal.accountId, body.version);
    ctx.log.info({ apiVersion: changed.apiVersion }, 'account API version changed');
    return { status: 200, body: { apiVersion: changed.apiVersion, currentVersion: changed.currentVersion, rollback: changed.rollback } };
  },
} satisfies OperationHandlers;
