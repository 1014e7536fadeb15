/**
 * Account and API key use cases, shared by the HTTP operations and the admin command line so
 * both enforce the same rules.
 */
import type { Clock } from '../clock.ts';
import { apiKeyHint, generateApiKey, hashApiKey } from '../domain/accounts/apiKeyFormat.ts';
import { problems } from '../http/problem.ts';
import { newId } from '../ids.ts';
import { findAccount, insertAccount, lockAccount, type AccountRecord } from '../store/accounts.ts';
import {
  countActiveAdminKeys,
  findApiKey,
  findApiKeyById,
  insertApiKey,
  markApiKeyRevoked,
  type ApiKeyRecord,
  type ApiKeyRole,
} from '../store/apiKeys.ts';
import type { Store, Tx } from '../store/store.ts';

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The secret, returned to the caller once and never stored. */
  apiKey: string;
}

async function addKey(tx: Tx, clock: Clock, accountId: string, role: ApiKeyRole, name: string): Promise<CreatedApiKey> {
  const apiKey = generateApiKey();
  const record: ApiKeyRecord = {
    keyId: newId('key'),
    accountId,
    name,
    role,
    hint: apiKeyHint(apiKey),
    createdAt: clock.now().toISOString(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await insertApiKey(tx, record, hashApiKey(apiKey));
  return { record, apiKey };
}

export async function createAccount(
  store: Store,
  clock: Clock,
  input: { name: string; email: string; currency?: string },
): Promise<{ account: AccountRecord; firstKey: CreatedApiKey }> {
  return store.transaction(async (tx) => {
    const account: AccountRecord = {
      accountId: newId('acc'),
      name: input.name,
      email: input.email,
      currency: input.currency ?? 'USD',
      createdAt: clock.now().toISOString(),
    };
    await insertAccount(tx, account);
    const firstKey = await addKey(tx, clock, account.accountId, 'admin', 'First admin key');
    return { account, firstKey };
  });
}

export async function createApiKey(
  store: Store,
  clock: Clock,
  accountId: string,
  input: { role: ApiKeyRole; name: string },
): Promise<CreatedApiKey> {
  return store.transaction(async (tx) => {
    if (!(await findAccount(tx, accountId))) throw problems.notFound(`No account ${accountId}.`);
    return addKey(tx, clock, accountId, input.role, input.name);
  });
}

/**
 * Revokes a key. `accountId` scopes the look-up for API callers (another account's key is 404);
 * the operator's command line passes null. Revoking is idempotent. The last active admin key
 * cannot be revoked, so an account can always manage itself.
 */
export async function revokeApiKey(store: Store, clock: Clock, accountId: string | null, keyId: string): Promise<ApiKeyRecord> {
  return store.transaction(async (tx) => {
    const found = accountId === null ? await findApiKeyById(tx, keyId) : await findApiKey(tx, accountId, keyId);
    if (!found) throw problems.notFound(`No API key ${keyId} in this account.`);
    // Several instances: revocations of one account's keys take turns, and read the key again once it is their turn.
    await lockAccount(tx, found.accountId);
    const key = (await findApiKeyById(tx, keyId)) ?? found;
    if (key.revokedAt) return key;
    if (key.role === 'admin' && (await countActiveAdminKeys(tx, key.accountId)) <= 1) {
      throw problems.unprocessable(
        'last_admin_key',
        `${keyId} is the account's last active admin key; create another admin key before revoking it.`,
      );
    }
    const revokedAt = clock.now().toISOString();
    await markApiKeyRevoked(tx, keyId, revokedAt);
    return { ...key, revokedAt };
  });
}
