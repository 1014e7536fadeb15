/** /v1/underwriting: the account's underwriting rules (admin only, per the spec's x-required-role). */
import { getUnderwritingRules, setUnderwritingRules } from '../services/underwriting.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const underwritingOperations = {
  getUnderwritingRules: async (_input, ctx) => {
    return { status: 200, body: await getUnderwritingRules(ctx, ctx.principal.accountId) };
  },

  updateUnderwritingRules: async ({ body }, ctx) => {
    const rules = await setUnderwritingRules(ctx, ctx.principal.accountId, body);
    ctx.log.info({ rules }, 'underwriting rules set');
    return { status: 200, body: rules };
  },
} satisfies OperationHandlers;
