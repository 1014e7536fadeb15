/**
 * The operator's management of bank partners (admin command line): register, list, restrict to
 * accounts, disable, set the credential of an `http` partner, mint sandbox tokens.
 */
import type { AppContext } from '../context.ts';
import { sealCredential } from '../banks/credentials.ts';
import { mintSandboxToken, MAX_HOLDER_NAME_LENGTH, TEST_MODE_PARTNER_ID } from '../banks/sandbox.ts';
import { bankKeys } from '../banks/secrets.ts';
import { bankTokenPrefixFor } from '../banks/tokenFormat.ts';
import { isWellFormedAccountNumber } from '../domain/banks/accountNumber.ts';
import { partnerBaseUrlDecision } from '../domain/banks/partnerUrl.ts';
import { fail } from '../errors.ts';
import { isId, newId } from '../ids.ts';
import { findAccount } from '../store/accounts.ts';
import {
  addPartnerAccount,
  clearPartnerAccounts,
  findBankPartner,
  insertBankPartner,
  listBankPartners,
  listPartnerAccounts,
  removePartnerAccount,
  updateBankPartner,
  type BankConnectorKind,
  type BankPartnerRecord,
} from '../store/bankPartners.ts';
import type { Tx } from '../store/store.ts';
import { bindBankTokenAtIssue } from './bankTokens.ts';

/** What the operator sees of a partner: never the credential itself. */
export interface PartnerView {
  partnerId: string;
  name: string;
  connector: BankConnectorKind;
  baseUrl: string | null;
  /** What the partner prefixes to the tokens it issues (`bnk_tok_<key>_`). */
  tokenPrefix: string;
  hasCredential: boolean;
  /** `all`, or the accounts a restricted partner serves. */
  serves: 'all' | string[];
  disabledAt: string | null;
  createdAt: string;
}

const MAX_NAME = 100;
const MAX_CREDENTIAL = 4096;

async function view(db: Tx, p: BankPartnerRecord): Promise<PartnerView> {
  return {
    partnerId: p.partnerId,
    name: p.name,
    connector: p.connector,
    baseUrl: p.baseUrl,
    tokenPrefix: bankTokenPrefixFor(p.partnerId),
    hasCredential: p.credentialSealed !== null,
    serves: p.restricted ? await listPartnerAccounts(db, p.partnerId) : 'all',
    disabledAt: p.disabledAt,
    createdAt: p.createdAt,
  };
}

function checkCredential(credential: string): void {
  if (credential.length === 0 || credential.length > MAX_CREDENTIAL || /[\s\u0000-\u001f]/.test(credential)) {
    throw fail.refused('bank_partner_credential_invalid', `the credential must be 1 to ${MAX_CREDENTIAL} printable characters without spaces`);
  }
}

export async function createBankPartner(
  ctx: AppContext,
  input: { name: string; connector: string; baseUrl?: string | undefined; credential?: string | undefined },
): Promise<PartnerView> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > MAX_NAME) throw fail.refused('bank_partner_name_invalid', `the name must be 1 to ${MAX_NAME} characters`);
  if (input.connector !== 'sandbox' && input.connector !== 'http') {
    throw fail.refused('bank_partner_connector_invalid', `the connector must be sandbox or http, not "${input.connector}"`);
  }
  let baseUrl: string | null = null;
  if (input.connector === 'http') {
    if (!input.baseUrl) throw fail.refused('bank_partner_url_invalid', 'an http partner needs --base-url (its API, https)');
    const decision = partnerBaseUrlDecision(input.baseUrl, ctx.config.bank.partnerAllowedHosts);
    if (!decision.ok) throw fail.refused('bank_partner_url_invalid', decision.reason);
    baseUrl = decision.url;
  } else if (input.baseUrl || input.credential) {
    throw fail.refused('bank_partner_url_invalid', 'the sandbox partner is built in: it takes no base URL or credential');
  }
  if (input.credential !== undefined) checkCredential(input.credential);
  const keys = await bankKeys(ctx.config);
  const now = ctx.clock.now().toISOString();
  const partnerId = newId('bnk');
  const record: BankPartnerRecord = {
    partnerId,
    name,
    connector: input.connector,
    baseUrl,
    credentialSealed: input.credential ? sealCredential(keys.partnerCredential, partnerId, input.credential) : null,
    restricted: false,
    disabledAt: null,
    createdAt: now,
    updatedAt: now,
  };
  return ctx.store.transaction(async (tx) => {
    await insertBankPartner(tx, record);
    return view(tx, record);
  });
}

export async function listPartners(ctx: AppContext): Promise<PartnerView[]> {
  return ctx.store.read(async (db) => Promise.all((await listBankPartners(db)).map((p) => view(db, p))));
}

async function changePartner(
  ctx: AppContext,
  partnerId: string,
  change: (tx: Tx, partner: BankPartnerRecord, now: string) => Promise<BankPartnerRecord>,
): Promise<PartnerView> {
  if (!isId('bnk', partnerId)) throw fail.notFound(`${partnerId} is not a bank partner id (bnk-…)`);
  return ctx.store.transaction(async (tx) => {
    const partner = await findBankPartner(tx, partnerId);
    if (!partner) throw fail.notFound(`No bank partner ${partnerId}.`);
    const now = ctx.clock.now().toISOString();
    const changed = { ...(await change(tx, partner, now)), updatedAt: now };
    await updateBankPartner(tx, changed);
    return view(tx, changed);
  });
}

/** Restricts the partner to the accounts allowed so far, adding this one. */
export function allowPartnerAccount(ctx: AppContext, partnerId: string, accountId: string): Promise<PartnerView> {
  // It serves test environments, each only through its own tokens: a list of live accounts means nothing to it.
  if (partnerId === TEST_MODE_PARTNER_ID) throw fail.conflict('bank_partner_built_in', 'the test-mode sandbox bank serves every test environment and cannot be restricted');
  return changePartner(ctx, partnerId, async (tx, partner, now) => {
    if (!(await findAccount(tx, accountId))) throw fail.notFound(`No account ${accountId}.`);
    if (!partner.restricted) await clearPartnerAccounts(tx, partnerId);
    await addPartnerAccount(tx, partnerId, accountId, now);
    return { ...partner, restricted: true };
  });
}

/** Removes an account from a restricted partner (which then serves one account fewer, possibly none). */
export function disallowPartnerAccount(ctx: AppContext, partnerId: string, accountId: string): Promise<PartnerView> {
  return changePartner(ctx, partnerId, async (tx, partner) => {
    if (!partner.restricted) throw fail.conflict('bank_partner_not_restricted', `${partnerId} serves every account; allow accounts one by one first, or disable it`);
    if (!(await removePartnerAccount(tx, partnerId, accountId))) throw fail.notFound(`${partnerId} does not serve ${accountId}.`);
    return partner;
  });
}

/** Lets the partner serve every account again. */
export function unrestrictPartner(ctx: AppContext, partnerId: string): Promise<PartnerView> {
  return changePartner(ctx, partnerId, async (tx, partner) => {
    await clearPartnerAccounts(tx, partnerId);
    return { ...partner, restricted: false };
  });
}

/** A disabled partner's tokens are refused (401) until it is enabled again. */
export function setPartnerDisabled(ctx: AppContext, partnerId: string, disabled: boolean): Promise<PartnerView> {
  return changePartner(ctx, partnerId, async (_tx, partner, now) => ({ ...partner, disabledAt: disabled ? (partner.disabledAt ?? now) : null }));
}

/** Replaces (or, with null, removes) the credential the service presents to an http partner. */
export async function setPartnerCredential(ctx: AppContext, partnerId: string, credential: string | null): Promise<PartnerView> {
  if (credential !== null) checkCredential(credential);
  const keys = await bankKeys(ctx.config);
  return changePartner(ctx, partnerId, async (_tx, partner) => {
    if (partner.connector !== 'http') throw fail.conflict('bank_partner_not_http', `${partnerId} is a ${partner.connector} partner; only http partners have a credential`);
    return { ...partner, credentialSealed: credential === null ? null : sealCredential(keys.partnerCredential, partnerId, credential) };
  });
}

/** Mints a sandbox token for a holder and account number at a sandbox partner. */
export async function issueSandboxToken(
  ctx: AppContext,
  input: { partnerId: string; holder: string; accountNumber: string },
): Promise<{ token: string; expiresAt: string }> {
  const partner = isId('bnk', input.partnerId) ? await ctx.store.read((db) => findBankPartner(db, input.partnerId)) : undefined;
  if (!partner) throw fail.notFound(`No bank partner ${input.partnerId}.`);
  if (partner.partnerId === TEST_MODE_PARTNER_ID) {
    throw fail.conflict('bank_partner_built_in', 'test-mode tokens are issued to a test environment: use POST /v1/test/bank-tokens with a test key');
  }
  if (partner.connector !== 'sandbox') throw fail.conflict('bank_partner_not_sandbox', `${partner.partnerId} is an ${partner.connector} partner: its tokens come from the partner itself`);
  if (partner.disabledAt) throw fail.conflict('bank_partner_disabled', `${partner.partnerId} is disabled`);
  const holder = input.holder.trim();
  if (holder.length === 0 || holder.length > MAX_HOLDER_NAME_LENGTH) throw fail.refused('holder_invalid', `--holder must be 1 to ${MAX_HOLDER_NAME_LENGTH} characters`);
  if (!isWellFormedAccountNumber(input.accountNumber)) throw fail.refused('account_number_invalid', '--account-number must be 4 to 34 digits or letters');
  const keys = await bankKeys(ctx.config);
  const minted = mintSandboxToken(keys.sandboxToken, partner.partnerId, { holder, accountNumber: input.accountNumber }, ctx.clock.now(), ctx.config.bank.sandboxTokenTtlSeconds);
  // Issued now: the token reaches what the partner serves now, never more (src/services/bankTokens.ts).
  await bindBankTokenAtIssue(ctx, partner, minted.token, minted.expiresAt);
  return minted;
}
