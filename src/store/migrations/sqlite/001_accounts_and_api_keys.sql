-- Accounts own every record; API keys authenticate calls on behalf of one account.
-- Timestamps are ISO 8601 UTC text bound by the application (never computed in SQL), so the
-- journal replays to the same database and the schema stays portable to PostgreSQL.
CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  email       TEXT NOT NULL,
  currency    TEXT NOT NULL DEFAULT 'USD',
  created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  name          TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  secret_hash   TEXT NOT NULL UNIQUE,
  hint          TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  last_used_at  TEXT,
  revoked_at    TEXT
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, id);

-- Responses stored for Idempotency-Key replays (24 hours). request_hash fingerprints the method,
-- path and body, so a reused key with a different request is told apart from a retry.
CREATE TABLE idempotency_keys (
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  idempotency_key   TEXT NOT NULL,
  request_hash      TEXT NOT NULL,
  response_status   INTEGER NOT NULL,
  response_headers  TEXT NOT NULL,
  response_body     TEXT NOT NULL,
  created_at        TEXT NOT NULL,
  PRIMARY KEY (account_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
