/** /v1/api-keys: list, create and revoke the account's keys (admin only, per the spec's x-required-role). */
import { decodeCursor, encodeCursor } from '../http/pagination.ts';
import { createApiKey, revokeApiKey } from '../services/accounts.ts';
import { listApiKeys, type ApiKeyRecord } from '../store/apiKeys.ts';
import type { OperationHandlers } from './types.ts';

const KEY_ID = /^key-[0-9a-z]{26}$/;

/** The public view of a key record: the account id is implied by the caller. */
function toApiKey(record: ApiKeyRecord) {
  const { accountId: _accountId, ...key } = record;
  return key;
}

export const apiKeyOperations = {
  listApiKeys: async ({ query }, ctx) => {
    const page = await ctx.services.store.read((db) =>
      listApiKeys(db, ctx.principal.accountId, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, KEY_ID) }),
    );
    return { status: 200, body: { data: page.items.map(toApiKey), nextCursor: encodeCursor(page.lastId) } };
  },

  createApiKey: async ({ body }, ctx) => {
    const { services } = ctx;
    const created = await createApiKey(services.store, services.clock, ctx.principal.accountId, body);
    ctx.log.info({ keyId: created.record.keyId, role: created.record.role }, 'API key created');
    return { status: 201, body: { ...toApiKey(created.record), apiKey: created.apiKey } };
  },

  revokeApiKey: async ({ path }, ctx) => {
    const { services } = ctx;
    const revoked = await revokeApiKey(services.store, services.clock, ctx.principal.accountId, path.keyId);
    ctx.log.info({ keyId: revoked.keyId }, 'API key revoked');
    return { status: 200, body: toApiKey(revoked) };
  },
} satisfies OperationHandlers;
