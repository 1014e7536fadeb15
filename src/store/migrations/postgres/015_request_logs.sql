-- PostgreSQL twin of src/store/migrations/sqlite/015: the request log, written in batches after
-- the answers; account_id is the key's environment (no foreign key); problem is the text as sent.
CREATE TABLE request_logs (
  id                   TEXT PRIMARY KEY,
  account_id           TEXT NOT NULL,
  request_id           TEXT NOT NULL,
  key_id               TEXT NOT NULL,
  key_name             TEXT,
  method               TEXT NOT NULL,
  operation_id         TEXT NOT NULL,
  path                 TEXT NOT NULL,
  status               INTEGER NOT NULL,
  latency_ms           DOUBLE PRECISION NOT NULL,
  client_address       TEXT NOT NULL,
  idempotency_key      TEXT,
  idempotent_replayed  SMALLINT NOT NULL CHECK (idempotent_replayed IN (0, 1)),
  problem              TEXT,
  created_at           TIMESTAMPTZ NOT NULL
);
CREATE INDEX request_logs_by_account ON request_logs (account_id, id);
CREATE INDEX request_logs_by_request_id ON request_logs (account_id, request_id);
CREATE INDEX request_logs_by_time ON request_logs (created_at);
