/**
 * The built-in `sandbox` partner: deterministic, no network, for development, tests and partners'
 * integration testing. It plays the bank's part from the token alone.
 *
 * A sandbox token is `bnk_tok_<partner key>_<sealed>`, where `<sealed>` is base64url of
 * `iv (12) | AES-256-GCM ciphertext | tag (16)` over `{ v, h: holder, n: account number, iat, exp }`,
 * with the partner id as additional data. GCM both encrypts (the token travels through
 * applicants' browsers and lenders' logs: the account number must not be readable in it) and
 * authenticates (a changed byte, another partner's id or another server's key fails the tag).
 * Nothing is stored when a token is minted; it expires after BANK_SANDBOX_TOKEN_TTL_SECONDS.
 *
 * The test-mode sandbox bank (TEST_MODE_PARTNER_ID, built in by migration 008) is the same
 * connector with two differences: its tokens also carry `e`, the test environment they were
 * issued to (POST /v1/test/bank-tokens), and it honours the spec's documented test account
 * numbers (src/contract/testValues.ts). Other sandbox partners never do either.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { accountMask, isWellFormedAccountNumber } from '../domain/banks/accountNumber.ts';
import type { TestBankBehaviour } from '../contract/testValues.ts';
import { BankPartnerUnavailable, BankTokenRejected, type BankConnector, type BankGrant, type PartnerAccount } from './connector.ts';
import { formatBankToken } from './tokenFormat.ts';

/** The built-in sandbox bank of test mode (a fixed id: every database names it alike). */
export const TEST_MODE_PARTNER_ID = 'bnk-testmodesandbox00000000000';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const MAX_HOLDER_NAME_LENGTH = 200;

interface SandboxClaims {
  v: number;
  h: string;
  n: string;
  iat: number;
  exp: number;
  /** Test-mode tokens only: the test environment the token was issued to. */
  e?: string;
}

function additionalData(partnerId: string): Buffer {
  return Buffer.from(`bank-sandbox-token:v${VERSION}:${partnerId}`, 'utf8');
}

export interface SandboxAccount {
  holder: string;
  accountNumber: string;
}

/** Mints a sandbox token for a holder and account number; `ttlSeconds` from `now`. */
export function mintSandboxToken(
  key: Buffer,
  partnerId: string,
  account: SandboxAccount,
  now: Date,
  ttlSeconds: number,
  testEnvironmentId?: string,
): { token: string; expiresAt: string } {
  const holder = account.holder.trim();
  // Characters as the contract's maxLength counts them: code points, not UTF-16 units.
  const characters = [...holder].length;
  if (characters === 0 || characters > MAX_HOLDER_NAME_LENGTH) throw new RangeError(`the holder's name must be 1 to ${MAX_HOLDER_NAME_LENGTH} characters`);
  if (!isWellFormedAccountNumber(account.accountNumber)) throw new RangeError('the account number must be 4 to 34 digits or letters');
  const iat = Math.floor(now.getTime() / 1000);
  const claims: SandboxClaims = { v: VERSION, h: holder, n: account.accountNumber, iat, exp: iat + ttlSeconds };
  if (testEnvironmentId !== undefined) claims.e = testEnvironmentId;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(partnerId));
  const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(claims), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { token: formatBankToken(partnerId, sealed.toString('base64url')), expiresAt: new Date(claims.exp * 1000).toISOString() };
}

function isClaims(value: unknown): value is SandboxClaims {
  const c = value as Partial<SandboxClaims> | null;
  return (
    typeof c === 'object' && c !== null && c.v === VERSION && typeof c.h === 'string' && typeof c.n === 'string' &&
    Number.isInteger(c.iat) && Number.isInteger(c.exp) && (c.e === undefined || typeof c.e === 'string')
  );
}

/** The claims of a sandbox token, or null when it was not sealed by this key for this partner. */
export function openSandboxToken(key: Buffer, partnerId: string, sealedPart: string): SandboxClaims | null {
  const sealed = Buffer.from(sealedPart, 'base64url');
  if (sealed.length <= IV_BYTES + TAG_BYTES || sealed.toString('base64url') !== sealedPart) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(additionalData(partnerId));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    const claims: unknown = JSON.parse(plain.toString('utf8'));
    return isClaims(claims) ? claims : null;
  } catch {
    return null;
  }
}

/** How the test-mode bank treats a documented account number (null: like any account). */
export type TestAccountLookup = (accountNumber: string) => { behaviour: TestBankBehaviour; holderName?: string } | undefined;

export class SandboxConnector implements BankConnector {
  readonly provesLocally = true;
  readonly #key: Buffer;
  readonly #partnerId: string;
  readonly #clock: Clock;
  /** Set for the test-mode bank only. */
  readonly #testAccounts: TestAccountLookup | null;

  constructor(key: Buffer, partnerId: string, clock: Clock, testAccounts: TestAccountLookup | null = null) {
    this.#key = key;
    this.#partnerId = partnerId;
    this.#clock = clock;
    this.#testAccounts = testAccounts;
  }

  #open(partnerToken: string): SandboxClaims {
    const claims = openSandboxToken(this.#key, this.#partnerId, partnerToken);
    if (!claims) throw new BankTokenRejected('The bank token is not one this partner issued.');
    // A test-mode bank's token always names its environment, and no other sandbox's ever does.
    if ((claims.e !== undefined) !== (this.#testAccounts !== null)) throw new BankTokenRejected('The bank token is not one this partner issued.');
    if (claims.exp * 1000 <= this.#clock.now().getTime()) throw new BankTokenRejected('The bank token has expired.');
    return claims;
  }

  async authenticate(partnerToken: string): Promise<BankGrant> {
    const claims = this.#open(partnerToken);
    const grant: BankGrant = { accountRef: `sandbox-${accountMask(claims.n)}`, expiresAt: new Date(claims.exp * 1000).toISOString() };
    if (claims.e !== undefined) grant.testEnvironmentId = claims.e;
    return grant;
  }

  async fetchAccount(_grant: BankGrant, partnerToken: string): Promise<PartnerAccount> {
    const claims = this.#open(partnerToken);
    const test = this.#testAccounts?.(claims.n);
    switch (test?.behaviour) {
      case 'other_holder':
        return { holderName: test.holderName!, accountNumber: claims.n };
      case 'closed':
        throw new BankTokenRejected('The bank says the account this token names is closed.');
      case 'partner_unavailable':
        throw new BankPartnerUnavailable('test value: the test-mode bank plays unavailable for this account number');
      default:
        return { holderName: claims.h, accountNumber: claims.n };
    }
  }
}
