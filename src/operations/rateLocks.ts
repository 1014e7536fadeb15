/** Rate locks: lock a quote's rate (POST /v1/quotes/{quoteId}/lock), read, list, extend and cancel locks. */
import { decodeCursor, listBody } from '../http/pagination.ts';
import { cancelRateLock, extendRateLock, getRateLock, listRateLocks, lockQuote } from '../services/rateLocks.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const rateLockOperations = {
  lockQuote: async ({ path, body }, ctx) => ({
    status: 201,
    body: await lockQuote(ctx, ctx.principal.accountId, path.quoteId, body),
  }),

  listRateLocks: async ({ query }, ctx) => {
    const page = await listRateLocks(ctx, ctx.principal.accountId, { status: query.status, mortgageId: query.mortgageId }, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, 'lck') });
    return { status: 200, body: listBody(page) };
  },

  getRateLock: async ({ path }, ctx) => ({ status: 200, body: await getRateLock(ctx, ctx.principal.accountId, path.lockId) }),

  extendRateLock: async ({ path, body }, ctx) => ({
    status: 200,
    body: await extendRateLock(ctx, ctx.principal.accountId, path.lockId, body.days),
  }),

  cancelRateLock: async ({ path }, ctx) => ({ status: 200, body: await cancelRateLock(ctx, ctx.principal.accountId, path.lockId) }),
} satisfies OperationHandlers;
