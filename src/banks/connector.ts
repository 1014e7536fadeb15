/**
 * What every bank partner connector does, whatever the partner: authenticate a token the partner
 * issued, then say who holds the account the token grants and what its number is. The service
 * compares; a connector never decides whether details verify.
 */

/** What a live token grants: one account at the partner. */
export interface BankGrant {
  /** The partner's reference for the account (never the account number). */
  accountRef: string;
  /** When the token stops being valid, if the partner says; ISO 8601. */
  expiresAt: string | null;
  /**
   * Set only by the test-mode sandbox bank: the test environment whose applications the token may
   * verify. A grant without it verifies live applications only.
   */
  testEnvironmentId?: string;
}

/** The account as the partner knows it. Holds a full account number: never log or store it. */
export interface PartnerAccount {
  holderName: string;
  accountNumber: string;
}

export interface BankConnector {
  /**
   * true when `authenticate` proves a token here, at no cost to anyone (the sandbox's sealed
   * tokens); false when it asks the partner (an HTTP call the partner pays for).
   */
  readonly provesLocally: boolean;
  /** Rejects with BankTokenRejected when the token is not live, BankPartnerUnavailable/BankPartnerBadResponse when the partner fails. */
  authenticate(partnerToken: string): Promise<BankGrant>;
  /** Rejects with BankTokenRejected when the account is gone, BankPartnerUnavailable/BankPartnerBadResponse when the partner fails. */
  fetchAccount(grant: BankGrant, partnerToken: string): Promise<PartnerAccount>;
}

/** The partner does not (or no longer) vouch for this token: the caller gets 401. */
export class BankTokenRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BankTokenRejected';
  }
}

/** The partner could not be reached, timed out, or kept failing (5xx): 502, worth retrying later. */
export class BankPartnerUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BankPartnerUnavailable';
  }
}

/** The partner answered something that is not its contract (wrong status, shape, type or size): 502. */
export class BankPartnerBadResponse extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BankPartnerBadResponse';
  }
}
