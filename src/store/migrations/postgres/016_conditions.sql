-- PostgreSQL twin of src/store/migrations/sqlite/016: conditions of an approval, and the status
-- clear_to_close. PostgreSQL changes the CHECK constraint in place (the table keeps its rows).
ALTER TABLE applications DROP CONSTRAINT applications_status_check;
ALTER TABLE applications ADD CONSTRAINT applications_status_check
  CHECK (status IN ('draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn', 'clear_to_close'));
CREATE INDEX applications_by_account_decided ON applications (account_id, decided_at);

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
  resolved_at               TIMESTAMPTZ,
  created_at                TIMESTAMPTZ NOT NULL
);
CREATE INDEX conditions_by_application ON conditions (account_id, mortgage_id, id);
CREATE INDEX conditions_by_account_status ON conditions (account_id, status, mortgage_id);

-- json (not jsonb): the conditions read back with their keys in the order they were written.
ALTER TABLE underwriting_rules ADD COLUMN conditions_json JSON;
