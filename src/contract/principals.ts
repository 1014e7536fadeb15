/**
 * Who is calling: what the edge's credential checks hand an operation. Owned by the contract (the
 * spec's security schemes), made by the authentication use cases, read by handlers.
 *
 * Declared here, not borrowed from the layers below: the bank partner register's record
 * (store/bankPartners.ts) and a connector's grant (banks/connector.ts) satisfy these shapes
 * structurally. The compiler holds them together both ways, since the authenticator hands a record
 * in as `partner` and the verification use case hands `partner` back to the store and the connector.
 */
import type { components } from '../../generated/api.d.ts';

type ApiKeyRole = components['schemas']['ApiKeyRole'];
type ApiKeyScopes = components['schemas']['ApiKeyScopes'];

/** An API key that passed the `apiKey` scheme. */
export interface ApiKeyPrincipal {
  kind: 'apiKey';
  /**
   * The environment the key acts in: the account's id in live mode, its test environment's id in
   * test mode (src/domain/accounts/environments.ts). Every record is owned, and found, by it.
   */
  accountId: string;
  /** True for a live key, false for a test key. */
  livemode: boolean;
  keyId: string;
  role: ApiKeyRole;
  /** Role `restricted` only: what the key may do per resource family (its scopes alone decide). */
  scopes: ApiKeyScopes | null;
  /** The API version the key's account is pinned to: what its requests are answered in without `Mos-Version`. */
  apiVersion: string;
}

/** What the partner said of a token it vouched for. */
interface BankGrant {
  /** The partner's reference for the account (never the account number). */
  accountRef: string;
  /** When the token stops being valid, if the partner says; ISO 8601. */
  expiresAt: string | null;
  /** Set only by the test-mode sandbox bank: the test environment whose applications the token may verify. */
  testEnvironmentId?: string;
}

/** The enabled bank partner a token names, as the operator registered it. */
interface BankPartner {
  partnerId: string;
  name: string;
  connector: 'sandbox' | 'http';
  baseUrl: string | null;
  /** The partner's credential, sealed (never logged). */
  credentialSealed: string | null;
  /** True: serves only the accounts the operator listed; false: every account. */
  restricted: boolean;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The accounts a bank token reaches, fixed at issue (src/services/bankTokens.ts). */
interface BankTokenBinding {
  /** SHA-256 of the token (the token itself is never kept). */
  tokenHash: string;
  partnerId: string;
  /** True: the partner served every account at issue, so the token reaches the accounts that existed at `boundAt`. */
  everyAccount: boolean;
  boundAt: string;
  expiresAt: string | null;
}

/** A bank partner's token that passed the `bankToken` scheme (and the partner's own check). */
export interface BankTokenPrincipal {
  kind: 'bankToken';
  partner: BankPartner;
  /** The partner's own token (never logged). */
  partnerToken: string;
  grant: BankGrant;
  /** The accounts the partner served when the token was issued: the token never reaches beyond them. */
  binding: BankTokenBinding;
}
