/** /v1/pricing: the account's rate sheet, fees and quote validity (admin only, per the spec's x-required-role). */
import { getPricingSettings, setRateSheet } from '../services/pricing.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const pricingOperations = {
  getPricing: async (_input, ctx) => {
    return { status: 200, body: await getPricingSettings(ctx, ctx.principal.accountId) };
  },

  updatePricing: async ({ body }, ctx) => {
    const settings = await setRateSheet(ctx, ctx.principal.accountId, body);
    ctx.log.info({ updatedAt: settings.updatedAt }, 'rate sheet replaced');
    return { status: 200, body: settings };
  },
} satisfies OperationHandlers;
