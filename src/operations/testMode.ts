/** /v1/test/…: test mode's own operations (admin, test keys only; a live key gets 404). */
import type { OperationHandlers } from '../contract/handlers.ts';
import { advanceTestClock, getTestClock, resetTestClock } from '../services/testClock.ts';
import { deleteTestData, issueTestBankToken } from '../services/testMode.ts';

export const testModeOperations = {
  createTestBankToken: async ({ body }, ctx) => ({
    status: 201,
    body: await issueTestBankToken(ctx, ctx.principal.accountId, body),
  }),

  deleteTestData: async (_input, ctx) => ({
    status: 200,
    body: await deleteTestData(ctx, ctx.principal.accountId),
  }),

  // The environment's simulated clock.
  getTestClock: async (_input, ctx) => ({ status: 200, body: await getTestClock(ctx, ctx.principal.accountId) }),

  advanceTestClock: async ({ body }, ctx) => ({ status: 200, body: await advanceTestClock(ctx, ctx.principal.accountId, body.by) }),

  resetTestClock: async (_input, ctx) => ({ status: 200, body: await resetTestClock(ctx, ctx.principal.accountId) }),
} satisfies OperationHandlers;
