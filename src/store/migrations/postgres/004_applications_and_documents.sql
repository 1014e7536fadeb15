-- PostgreSQL twin of src/store/migrations/sqlite/004. Money bigint cents, percentages numeric.
CREATE TABLE applications (
  id                    TEXT PRIMARY KEY,
  account_id            TEXT NOT NULL REFERENCES accounts(id),
  status                TEXT NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn')),
  applicant_name        TEXT NOT NULL,
  applicant_email       TEXT,
  amount_cents          BIGINT NOT NULL,
  annual_income_cents   BIGINT,
  monthly_debts_cents   BIGINT,
  credit_score          INTEGER,
  term_years            INTEGER NOT NULL,
  property_value_cents  BIGINT,
  quote_id              TEXT,
  -- json (not jsonb): the decision reads back with its keys in the order they were written
  decision_json         JSON,
  submitted_at          TIMESTAMPTZ,
  decided_at            TIMESTAMPTZ,
  withdrawn_at          TIMESTAMPTZ,
  created_at            TIMESTAMPTZ NOT NULL,
  updated_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX applications_by_account ON applications (account_id, id);
CREATE INDEX applications_by_account_status ON applications (account_id, status, id);

-- Document metadata. On PostgreSQL the bytes live in document_chunks (007), so any instance serves any document.
CREATE TABLE documents (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id    TEXT NOT NULL REFERENCES applications(id),
  document_type  TEXT NOT NULL,
  content_type   TEXT NOT NULL,
  size_bytes     BIGINT NOT NULL CHECK (size_bytes >= 0),
  sha256         TEXT NOT NULL,
  file_name      TEXT,
  created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX documents_by_application ON documents (account_id, mortgage_id, id);

CREATE TABLE underwriting_rules (
  account_id                 TEXT PRIMARY KEY REFERENCES accounts(id),
  max_dti_percent            NUMERIC NOT NULL,
  refer_max_dti_percent      NUMERIC NOT NULL,
  max_ltv_percent            NUMERIC NOT NULL,
  refer_max_ltv_percent      NUMERIC NOT NULL,
  min_credit_score           INTEGER NOT NULL,
  refer_min_credit_score     INTEGER NOT NULL,
  max_amount_cents           BIGINT NOT NULL,
  refer_max_amount_cents     BIGINT NOT NULL,
  updated_at                 TIMESTAMPTZ NOT NULL
);
