/** /v1/api-keys: list, create and revoke the account's keys (admin only, per the spec's x-required-role). */
import type { OperationHandlers } from '../contract/handlers.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import { createApiKey, listApiKeys, revokeApiKey, toApiKey } from '../services/accounts.ts';

export const apiKeyOperations = {
  listApiKeys: async ({ query }, ctx) => {
    const page = await listApiKeys(ctx, ctx.principal.accountId, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, 'key') });
    return { status: 200, body: listBody(page) };
  },

  createApiKey: async ({ body }, ctx) => {
    const created = await createApiKey(ctx, ctx.principal.accountId, body, ctx.principal);
    ctx.log.info({ keyId: created.record.keyId, role: created.record.role }, 'API key created');
    return { status: 201, body: { ...toApiKey(created.record), apiKey: created.apiKey } };
  },

  revokeApiKey: async ({ path }, ctx) => {
    const revoked = await revokeApiKey(ctx, ctx.principal.accountId, path.keyId, ctx.principal);
    ctx.log.info({ keyId: revoked.keyId }, 'API key revoked');
    return { status: 200, body: toApiKey(revoked) };
  },
} satisfies OperationHandlers;
