-- Custom export formats of an account (issue 6), used as `format=<name>` on GET /v1/mortgages/export.
-- The name is the format's identity within its account (the API addresses formats by name).
-- base: csv | mismo. options_json: the CSV options with their defaults filled in (JSON), null for
-- mismo. Timestamps are ISO 8601 UTC text bound by the application (never computed in SQL).
CREATE TABLE export_formats (
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  name          TEXT NOT NULL,
  base          TEXT NOT NULL CHECK (base IN ('csv', 'mismo')),
  description   TEXT,
  options_json  TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  PRIMARY KEY (account_id, name)
);
