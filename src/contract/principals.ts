/**
 * Who is calling: what the edge's credential checks hand an operation. Owned by the contract (the
 * spec's security schemes), made by the authentication use cases, read by handlers.
 */
import type { components } from '../../generated/api.d.ts';
import type { BankGrant } from '../banks/connector.ts';
import type { BankPartnerRecord } from '../store/bankPartners.ts';

type ApiKeyRole = components['schemas']['ApiKeyRole'];

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
}

/** A bank partner's token that passed the `bankToken` scheme (and the partner's own check). */
export interface BankTokenPrincipal {
  kind: 'bankToken';
  partner: BankPartnerRecord;
  /** The partner's own token (never logged). */
  partnerToken: string;
  grant: BankGrant;
}
