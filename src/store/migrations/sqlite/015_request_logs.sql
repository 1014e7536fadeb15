-- The request log (GET /v1/request-logs): one row per /v1 request a key of an account made,
-- written in batches after the answers. account_id is the environment the key acts in (the
-- account's id, or its test environment's), so no foreign key. No request body, no secret:
-- problem is the problem+json text as sent, for 4xx and 5xx answers only. WITHOUT ROWID: the
-- table is its primary key's b-tree, one fewer to write per entry (the cost shows in npm run bench).
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
  latency_ms           REAL NOT NULL,
  client_address       TEXT NOT NULL,
  idempotency_key      TEXT,
  idempotent_replayed  INTEGER NOT NULL CHECK (idempotent_replayed IN (0, 1)),
  problem              TEXT,
  created_at           TEXT NOT NULL
) WITHOUT ROWID;
-- The log newest first, and by request id.
CREATE INDEX request_logs_by_account ON request_logs (account_id, id);
CREATE INDEX request_logs_by_request_id ON request_logs (account_id, request_id);
-- Retention: the rows older than the cutoff.
CREATE INDEX request_logs_by_time ON request_logs (created_at);
