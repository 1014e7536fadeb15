/**
 * Account and API key use cases, shared by the HTTP operations and the admin command line so
 * both enforce the same rules.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { accountDetailIssues } from '../domain/accounts/accountDetails.ts';
import { apiKeyHint, generateApiKey, hashApiKey } from '../domain/accounts/apiKeyFormat.ts';
import { environmentId, isLivemode, liveAccountId, testEnvironmentId } from '../domain/accounts/environments.ts';
import { escalationIssue, requestedKey, type KeyHolder, type KeyRequest } from '../domain/accounts/scopes.ts';
import { fail } from '../errors.ts';
import { newId } from '../ids.ts';
import { CURRENT_VERSION } from '../domain/versions/registry.ts';
import { findAccount, insertAccount, insertTestEnvironment, lockAccount, type AccountRecord } from '../store/accounts.ts';
import {
  countActiveAdminKeys,
  countActiveApiKeys,
  findApiKey,
  findApiKeyById,
  listApiKeys as listApiKeyRecords,
  insertApiKey,
  markApiKeyRevoked,
  type ApiKeyRecord,
} from '../store/apiKeys.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import type { Store, Tx } from '../store/store.ts';
import { recordAudit, recordAuditNow } from './audit.ts';
import { getLender } from './lender.ts';

export type Account = components['schemas']['Account'];
export type ApiKey = components['schemas']['ApiKey'];

/** The public view of a key record: the account id is implied by the caller. */
export function toApiKey(record: ApiKeyRecord): ApiKey {
  const { accountId, ...key } = record;
  return { ...key, livemode: isLivemode(accountId) };
}

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The secret, returned to the caller once and never stored. */
  apiKey: string;
}

/** A key of the environment `accountId` names: its secret's prefix says the environment's mode. */
async function addKey(tx: Tx, ctx: AppContext, accountId: string, holder: KeyHolder, name: string): Promise<CreatedApiKey> {
  const apiKey = generateApiKey(isLivemode(accountId));
  const record: ApiKeyRecord = {
    keyId: newId('key'),
    accountId,
    name,
    role: holder.role,
    scopes: holder.scopes,
    hint: apiKeyHint(apiKey),
    createdAt: ctx.clock.now().toISOString(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await insertApiKey(tx, record, hashApiKey(apiKey));
  return { record, apiKey };
}

/**
 * Opens an account with its live and test environments, and a first admin API key in each, inside
 * the caller's transaction: the one rule for every way an account is made (the operator's
 * `account create`, the dashboard's sign-up, which adds the account's first user in the same
 * transaction). Throws 400 `validation_failed` with pointers `/name` and `/email` when the details
 * break the rules of domain/accounts/accountDetails.ts.
 */
export async function openAccount(
  tx: Tx,
  ctx: AppContext,
  input: { name: string; email: string; currency?: string },
): Promise<{ account: AccountRecord; firstKey: CreatedApiKey; firstTestKey: CreatedApiKey }> {
  const name = input.name.trim();
  const email = input.email.trim();
  const issues = accountDetailIssues({ name, email });
  if (issues.length > 0) {
    const errors = issues.map((issue) => ({ pointer: `/${issue.field}`, message: issue.message }));
    throw fail.validation(`${errors[0]!.pointer} ${errors[0]!.message}`, errors);
  }
  const account: AccountRecord = {
    accountId: newId('acc'),
    name,
    email,
    currency: input.currency ?? 'USD',
    createdAt: ctx.clock.now().toISOString(),
    // Pinned when it is made: a new account speaks today's contract until an admin upgrades it.
    apiVersion: CURRENT_VERSION,
    previousApiVersion: null,
    apiVersionChangedAt: null,
  };
  await insertAccount(tx, account);
  await insertTestEnvironment(tx, account.accountId, testEnvironmentId(account.accountId));
  const firstKey = await addKey(tx, ctx, account.accountId, ADMIN, 'First admin key');
  const firstTestKey = await addKey(tx, ctx, testEnvironmentId(account.accountId), ADMIN, 'First test admin key');
  return { account, firstKey, firstTestKey };
}

/** Opens an account (see openAccount) in a transaction of its own. */
export async function createAccount(
  ctx: AppContext,
  input: { name: string; email: string; currency?: string },
): Promise<{ account: AccountRecord; firstKey: CreatedApiKey; firstTestKey: CreatedApiKey }> {
  return ctx.store.transaction(async (tx) => {
    const opened = await openAccount(tx, ctx, input);
    await recordAudit(tx, ctx, {
      accountId: opened.account.accountId,
      action: 'account.created',
      target: { type: 'account', id: opened.account.accountId },
      change: { before: null, after: { name: opened.account.name, email: opened.account.email } },
    });
    return opened;
  });
}

/** What an admin key, an admin user and the operator hold: everything. */
export const ADMIN: KeyHolder = Object.freeze({ role: 'admin', scopes: null });

/**
 * A key of the environment `accountId` (the caller's: a test key makes test keys), with a role or
 * scopes. `creator` is who makes it (the calling key, the signed-in user, or ADMIN for the
 * operator): a key never grants more than its creator holds (403 `scope_escalation`, see
 * escalationIssue in src/domain/accounts/scopes.ts).
 */
export async function createApiKey(
  ctx: AppContext,
  accountId: string,
  input: KeyRequest & { name: string },
  creator: KeyHolder,
): Promise<CreatedApiKey> {
  const wanted = requestedKey(input);
  if ('pointer' in wanted) throw fail.validation(`${wanted.pointer} ${wanted.message}`, [wanted]);
  const escalation = escalationIssue(creator, wanted);
  if (escalation) {
    // An attempt to widen access is kept (in a transaction of its own) although the request fails.
    await recordAuditNow(ctx, {
      accountId,
      action: 'apiKey.escalationRefused',
      target: { type: 'apiKey', id: null },
      outcome: 'failure',
      change: { before: null, after: { attempt: 'create', name: input.name, role: wanted.role, scopes: wanted.scopes } },
    }).catch((err: unknown) => ctx.log.warn({ err, accountId }, 'could not record a refused key escalation'));
    throw fail.denied('scope_escalation', escalation);
  }
  return ctx.store.transaction(async (tx) => {
    // The account's row lock (PostgreSQL) makes key creations of one account take turns, so the cap holds.
    if (!(await lockAccount(tx, accountId))) throw fail.notFound(`No account ${accountId}.`);
    // Rate limits are per key: a cap keeps an account from multiplying its allowance by minting keys.
    const limit = ctx.config.apiKeysPerAccount;
    const active = await countActiveApiKeys(tx, accountId);
    if (active >= limit) {
      throw fail.refused(
        'api_key_limit_reached',
        `This account has ${active} active API keys, the most it may hold (${limit}); revoke one it no longer uses before creating another.`,
        { limit },
      );
    }
    const created = await addKey(tx, ctx, accountId, wanted, input.name);
    await recordAudit(tx, ctx, {
      accountId,
      action: 'apiKey.created',
      target: { type: 'apiKey', id: created.record.keyId },
      change: { before: null, after: { name: created.record.name, role: created.record.role, scopes: created.record.scopes, hint: created.record.hint } },
    });
    return created;
  });
}

/**
 * Revokes a key. `accountId` scopes the look-up for API callers (another account's key is 404);
 * the operator's command line passes null. Revoking is idempotent. The last active admin key
 * cannot be revoked, so an account can always manage itself. `actor` (the calling key; admins and
 * the operator pass ADMIN) may revoke only keys it could have created: a restricted key with
 * `apiKeys:write` cannot revoke an admin or member key, nor one holding scopes it does not hold
 * (403 `scope_escalation`), so a leaked narrow key cannot take an account's wider keys away.
 */
export async function revokeApiKey(ctx: AppContext, accountId: string | null, keyId: string, actor: KeyHolder): Promise<ApiKeyRecord> {
  const outcome = await ctx.store.transaction(async (tx): Promise<{ revoked: ApiKeyRecord } | { refused: string; key: ApiKeyRecord }> => {
    const found = accountId === null ? await findApiKeyById(tx, keyId) : await findApiKey(tx, accountId, keyId);
    if (!found) throw fail.notFound(`No API key ${keyId} in this account.`);
    // Several instances: revocations of one account's keys take turns, and read the key again once it is their turn.
    await lockAccount(tx, found.accountId);
    const key = (await findApiKeyById(tx, keyId)) ?? found;
    const escalation = escalationIssue(actor, key, 'revoke');
    if (escalation) return { refused: escalation, key };
    if (key.revokedAt) return { revoked: key };
    if (key.role === 'admin' && (await countActiveAdminKeys(tx, key.accountId)) <= 1) {
      throw fail.refused(
        'last_admin_key',
        `${keyId} is the account's last active admin key; create another admin key before revoking it.`,
      );
    }
    const revokedAt = ctx.clock.now().toISOString();
    await markApiKeyRevoked(tx, keyId, revokedAt);
    await recordAudit(tx, ctx, { accountId: key.accountId, action: 'apiKey.revoked', target: { type: 'apiKey', id: keyId }, change: { before: { revokedAt: null }, after: { revokedAt } } });
    return { revoked: { ...key, revokedAt } };
  });
  if ('refused' in outcome) {
    // Nothing changed; the attempt to take a wider key away is kept (in a transaction of its own).
    const { key } = outcome;
    await recordAuditNow(ctx, {
      accountId: key.accountId,
      action: 'apiKey.escalationRefused',
      target: { type: 'apiKey', id: key.keyId },
      outcome: 'failure',
      change: { before: null, after: { attempt: 'revoke', name: key.name, role: key.role, scopes: key.scopes } },
    }).catch((err: unknown) => ctx.log.warn({ err, keyId }, 'could not record a refused key escalation'));
    throw fail.denied('scope_escalation', outcome.refused);
  }
  const { revoked } = outcome;
  // Committed: this process's authenticator must not let the key through once more (other instances hear it by NOTIFY).
  ctx.authenticate.apiKeyRevoked();
  return revoked;
}

/**
 * The account of the caller's environment, under the account's own id in either mode. A key
 * outlives nothing: an account without a row means a broken database, not a caller error.
 */
export async function getAccount(ctx: AppContext, accountId: string, apiVersion: string): Promise<Account> {
  const account = await accountRecord(ctx, liveAccountId(accountId));
  if (!account) throw fail.notFound('The account of this API key no longer exists.');
  const { accountId: id, name, email, currency, createdAt } = account;
  return { accountId: id, name, email, currency, createdAt, livemode: isLivemode(accountId), apiVersion, lender: await getLender(ctx, accountId) };
}

/** Accounts remembered at most per store; the oldest is dropped beyond (one not remembered is read again). */
const REMEMBERED_ACCOUNTS_MAX = 10_000;
const rememberedAccounts = new WeakMap<Store, Map<string, AccountRecord>>();

/**
 * An account's row, remembered by this process once read: no statement updates or deletes a row of
 * `accounts` once it is inserted (but for its API version columns, which getAccount takes from its
 * caller instead: the key's principal, or a fresh read), so what was read stays exact on either engine, however many
 * instances share the database. Remembered only once the read has answered, that is once the row
 * is durable. The read was a sixth of GET /v1/account's CPU (issue 17).
 */
async function accountRecord(ctx: AppContext, accountId: string): Promise<AccountRecord | undefined> {
  let remembered = rememberedAccounts.get(ctx.store);
  const known = remembered?.get(accountId);
  if (known) return known;
  const account = await ctx.store.read((db) => findAccount(db, accountId));
  if (account) {
    if (!remembered) rememberedAccounts.set(ctx.store, (remembered = new Map()));
    if (remembered.size >= REMEMBERED_ACCOUNTS_MAX) remembered.delete(remembered.keys().next().value!);
    remembered.set(accountId, account);
  }
  return account;
}

/** The environment of an account for a mode, as the operator's command line names it. */
export function accountEnvironment(accountId: string, mode: 'live' | 'test'): string {
  return environmentId(accountId, mode === 'live');
}

export async function listApiKeys(ctx: AppContext, accountId: string, page: PageRequest): Promise<Page<ApiKey>> {
  const found = await ctx.store.read((db) => listApiKeyRecords(db, accountId, page));
  return { ...found, items: found.items.map(toApiKey) };
}

/** One key of the account; another account's key is 404. */
export async function getApiKey(ctx: AppContext, accountId: string, keyId: string): Promise<ApiKey> {
  const key = await ctx.store.read((db) => findApiKey(db, accountId, keyId));
  if (!key) throw fail.notFound(`No API key ${keyId} in this account.`);
  return toApiKey(key);
}
