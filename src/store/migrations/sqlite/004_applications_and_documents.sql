-- Mortgage applications, their documents and each account's underwriting rules.
-- Money is INTEGER cents, percentages TEXT decimal strings, timestamps ISO 8601 UTC text bound by
-- the application (never computed in SQL).

-- status: draft | submitted | approved | declined | referred | withdrawn (the state machine lives
-- in src/domain/applications/stateMachine.ts). decision_json holds the decision object
-- ({ outcome, decidedAt, decidedBy, reasons[] }) once one is made; null before.
CREATE TABLE applications (
  id                    TEXT PRIMARY KEY,
  account_id            TEXT NOT NULL REFERENCES accounts(id),
  status                TEXT NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn')),
  applicant_name        TEXT NOT NULL,
  applicant_email       TEXT,
  amount_cents          INTEGER NOT NULL,
  annual_income_cents   INTEGER,
  monthly_debts_cents   INTEGER,
  credit_score          INTEGER,
  term_years            INTEGER NOT NULL,
  property_value_cents  INTEGER,
  quote_id              TEXT,
  decision_json         TEXT,
  submitted_at          TEXT,
  decided_at            TEXT,
  withdrawn_at          TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);
CREATE INDEX applications_by_account ON applications (account_id, id);
CREATE INDEX applications_by_account_status ON applications (account_id, status, id);

-- Document metadata. The bytes live in DATA_DIR/documents/<id>, named by id, never by the
-- client's file name; file_name is kept only as metadata.
CREATE TABLE documents (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id    TEXT NOT NULL REFERENCES applications(id),
  document_type  TEXT NOT NULL,
  content_type   TEXT NOT NULL,
  size_bytes     INTEGER NOT NULL,
  sha256         TEXT NOT NULL,
  file_name      TEXT,
  created_at     TEXT NOT NULL
);
CREATE INDEX documents_by_application ON documents (account_id, mortgage_id, id);

-- Underwriting rules of an account; an account without a row uses the defaults of
-- src/domain/underwriting/rules.ts. Each rule has an approve limit and a referral limit:
-- within the first the rule passes, between the two it refers, beyond the second it declines.
CREATE TABLE underwriting_rules (
  account_id                 TEXT PRIMARY KEY REFERENCES accounts(id),
  max_dti_percent            TEXT NOT NULL,
  refer_max_dti_percent      TEXT NOT NULL,
  max_ltv_percent            TEXT NOT NULL,
  refer_max_ltv_percent      TEXT NOT NULL,
  min_credit_score           INTEGER NOT NULL,
  refer_min_credit_score     INTEGER NOT NULL,
  max_amount_cents           INTEGER NOT NULL,
  refer_max_amount_cents     INTEGER NOT NULL,
  updated_at                 TEXT NOT NULL
);
