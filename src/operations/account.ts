/** GET /v1/account */
import type { OperationHandlers } from '../contract/handlers.ts';
import { getAccount } from '../services/accounts.ts';

export const accountOperations = {
  getAccount: async (_input, ctx) => ({ status: 200, body: await getAccount(ctx, ctx.principal.accountId, ctx.principal.apiVersion) }),
} satisfies OperationHandlers;
