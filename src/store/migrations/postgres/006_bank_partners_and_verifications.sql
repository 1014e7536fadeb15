-- PostgreSQL twin of src/store/migrations/sqlite/006. No full account number is ever stored.
CREATE TABLE bank_partners (
  id                    TEXT PRIMARY KEY,
  name                  TEXT NOT NULL,
  connector             TEXT NOT NULL CHECK (connector IN ('sandbox', 'http')),
  base_url              TEXT,
  credential_encrypted  TEXT,
  restricted            SMALLINT NOT NULL DEFAULT 0 CHECK (restricted IN (0, 1)),
  disabled_at           TIMESTAMPTZ,
  created_at            TIMESTAMPTZ NOT NULL,
  updated_at            TIMESTAMPTZ NOT NULL
);

CREATE TABLE bank_partner_accounts (
  partner_id  TEXT NOT NULL REFERENCES bank_partners(id),
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  created_at  TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (partner_id, account_id)
);

CREATE TABLE bank_verifications (
  id                   TEXT PRIMARY KEY,
  account_id           TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id          TEXT NOT NULL,
  partner_id           TEXT NOT NULL REFERENCES bank_partners(id),
  verified             SMALLINT NOT NULL CHECK (verified IN (0, 1)),
  account_mask         TEXT NOT NULL,
  account_number_hash  TEXT NOT NULL,
  linked_account_hash  TEXT NOT NULL,
  name_score           NUMERIC(4, 3) NOT NULL CHECK (name_score BETWEEN 0 AND 1),
  name_outcome         TEXT NOT NULL CHECK (name_outcome IN ('match', 'partial', 'mismatch')),
  failed_checks        JSONB NOT NULL,
  checked_at           TIMESTAMPTZ NOT NULL
);
CREATE INDEX bank_verifications_by_application ON bank_verifications (account_id, mortgage_id, checked_at);
CREATE INDEX bank_verifications_failures ON bank_verifications (mortgage_id, linked_account_hash, verified, checked_at);
