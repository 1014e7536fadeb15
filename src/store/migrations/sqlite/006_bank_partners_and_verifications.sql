-- Bank partners and the bank verifications made through them (issue 7).
-- Timestamps are ISO 8601 UTC text bound by the application (never computed in SQL).
-- Full account numbers are NEVER stored here: only the last four digits (account_mask) and a keyed
-- hash (HMAC-SHA-256 under the server secret, hex) of the number the applicant submitted.

-- connector: 'sandbox' (built in, tokens minted by the admin CLI) | 'http' (the partner's own API at
-- base_url). credential_encrypted: the credential the service presents to an http partner,
-- AES-256-GCM under a key derived from the server secret (base64url), null when none.
-- restricted = 0: the partner serves every account; 1: only the accounts in bank_partner_accounts.
-- disabled_at: set by the operator; a disabled partner's tokens are refused (401).
CREATE TABLE bank_partners (
  id                    TEXT PRIMARY KEY,
  name                  TEXT NOT NULL,
  connector             TEXT NOT NULL CHECK (connector IN ('sandbox', 'http')),
  base_url              TEXT,
  credential_encrypted  TEXT,
  restricted            INTEGER NOT NULL DEFAULT 0 CHECK (restricted IN (0, 1)),
  disabled_at           TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);

-- The accounts a restricted partner may serve.
CREATE TABLE bank_partner_accounts (
  partner_id  TEXT NOT NULL REFERENCES bank_partners(id),
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  created_at  TEXT NOT NULL,
  PRIMARY KEY (partner_id, account_id)
);

-- One row per completed check (history kept; the latest by checked_at is the current outcome).
-- verified: 1 when both checks passed, else 0. failed_checks: JSON array of
-- 'account_number' | 'holder_name' (empty when verified). name_score: decimal string 0..1 with
-- three decimals; name_outcome: match | partial | mismatch.
CREATE TABLE bank_verifications (
  id                   TEXT PRIMARY KEY,
  account_id           TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id          TEXT NOT NULL,
  partner_id           TEXT NOT NULL REFERENCES bank_partners(id),
  verified             INTEGER NOT NULL CHECK (verified IN (0, 1)),
  account_mask         TEXT NOT NULL,
  account_number_hash  TEXT NOT NULL,
  -- keyed hash of the number the partner holds for the token's account (the attempt limit's key)
  linked_account_hash  TEXT NOT NULL,
  name_score           TEXT NOT NULL,
  name_outcome         TEXT NOT NULL CHECK (name_outcome IN ('match', 'partial', 'mismatch')),
  failed_checks        TEXT NOT NULL,
  checked_at           TEXT NOT NULL
);
CREATE INDEX bank_verifications_by_application ON bank_verifications (account_id, mortgage_id, checked_at);
-- The failed-attempt limit counts one application's failures with one linked account in the last hour.
CREATE INDEX bank_verifications_failures ON bank_verifications (mortgage_id, linked_account_hash, verified, checked_at);
