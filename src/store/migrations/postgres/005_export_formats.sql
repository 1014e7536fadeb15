-- PostgreSQL twin of src/store/migrations/sqlite/005.
CREATE TABLE export_formats (
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  name          TEXT NOT NULL,
  base          TEXT NOT NULL CHECK (base IN ('csv', 'mismo')),
  description   TEXT,
  options_json  JSONB,
  created_at    TIMESTAMPTZ NOT NULL,
  updated_at    TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (account_id, name)
);
