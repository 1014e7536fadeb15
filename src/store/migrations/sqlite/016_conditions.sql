-- Conditions of an approval, and the status after approval: clear_to_close (every condition due
-- before closing satisfied or waived). See src/domain/applications/conditions.ts.

-- applications.status gains clear_to_close. SQLite cannot change a CHECK constraint in place, so
-- the table is rebuilt (https://www.sqlite.org/lang_altertable.html#otheralter) with its columns
-- in the same order. Foreign-key enforcement cannot be switched off inside the migration's
-- transaction, so the documents that reference applications are set aside while the old table
-- is dropped, and put back after the new one took its name.
CREATE TEMP TABLE documents_during_016 AS SELECT * FROM documents;
DELETE FROM documents;
CREATE TABLE applications_016 (
  id                    TEXT PRIMARY KEY,
  account_id            TEXT NOT NULL REFERENCES accounts(id),
  status                TEXT NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn', 'clear_to_close')),
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
INSERT INTO applications_016 SELECT * FROM applications;
DROP TABLE applications;
ALTER TABLE applications_016 RENAME TO applications;
CREATE INDEX applications_by_account ON applications (account_id, id);
CREATE INDEX applications_by_account_status ON applications (account_id, status, id);
INSERT INTO documents SELECT * FROM documents_during_016;
DROP TABLE documents_during_016;
-- The overview's decisions per day read applications by decision time.
CREATE INDEX applications_by_account_decided ON applications (account_id, decided_at);

-- resolved_kind: null while open; document | bank_verification | underwriter once satisfied or
-- waived, with the document, verification or actor (key-… or usr-…) and note that cleared it.
CREATE TABLE conditions (
  id                        TEXT PRIMARY KEY,
  account_id                TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id               TEXT NOT NULL REFERENCES applications(id),
  type                      TEXT NOT NULL,
  description               TEXT NOT NULL,
  due_before                TEXT NOT NULL CHECK (due_before IN ('closing', 'funding')),
  status                    TEXT NOT NULL CHECK (status IN ('open', 'satisfied', 'waived')),
  added_by                  TEXT NOT NULL CHECK (added_by IN ('underwriting_rules', 'underwriter')),
  resolved_kind             TEXT CHECK (resolved_kind IN ('document', 'bank_verification', 'underwriter')),
  resolved_document_id      TEXT,
  resolved_verification_id  TEXT,
  resolved_actor            TEXT,
  resolved_note             TEXT,
  resolved_at               TEXT,
  created_at                TEXT NOT NULL
);
CREATE INDEX conditions_by_application ON conditions (account_id, mortgage_id, id);
-- The desk's filter by condition state (applications with open conditions).
CREATE INDEX conditions_by_account_status ON conditions (account_id, status, mortgage_id);

-- The conditions the account attaches to every approval, as JSON ([{ type, description,
-- dueBefore }]); null while the account uses the default conditions.
ALTER TABLE underwriting_rules ADD COLUMN conditions_json TEXT;
