/** GET /v1/account */
import { fail } from '../errors.ts';
import { findAccount } from '../store/accounts.ts';
import type { OperationHandlers } from './types.ts';

export const accountOperations = {
  getAccount: async (_input, ctx) => {
    const account = await ctx.services.store.read((db) => findAccount(db, ctx.principal.accountId));
    // A key outlives nothing: an account without a row means a broken database, not a caller error.
    if (!account) throw fail.notFound('The account of this API key no longer exists.');
    return { status: 200, body: account };
  },
} satisfies OperationHandlers;
