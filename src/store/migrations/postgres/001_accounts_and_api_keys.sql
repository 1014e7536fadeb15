-- PostgreSQL twin of src/store/migrations/sqlite/001 (same tables and columns; native types).
-- Timestamps are timestamptz, bound by the application as ISO 8601 UTC text and read back as the
-- same text (src/store/postgres/sql.ts), so repositories see what sql.js gives them.
CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  email       TEXT NOT NULL,
  currency    TEXT NOT NULL DEFAULT 'USD',
  created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  name          TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  secret_hash   TEXT NOT NULL UNIQUE,
  hint          TEXT NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL,
  last_used_at  TIMESTAMPTZ,
  revoked_at    TIMESTAMPTZ
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, id);

-- Idempotency keys are claimed through the primary key: the first request inserts a row with
-- response_status -1 (in progress); a concurrent one on any instance finds it and gets 409.
-- 0 marks "took effect, response not recorded"; anything else is the stored response.
CREATE TABLE idempotency_keys (
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  idempotency_key   TEXT NOT NULL,
  request_hash      TEXT NOT NULL,
  response_status   INTEGER NOT NULL CHECK (response_status >= -1),
  response_headers  JSONB NOT NULL,
  response_body     TEXT NOT NULL,
  created_at        TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (account_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
