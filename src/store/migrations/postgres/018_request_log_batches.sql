-- PostgreSQL twin of src/store/migrations/sqlite/018: the request log as batches, one row per
-- environment per flush; rows written before become batches of one.
CREATE TABLE request_log_batches (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL,
  first_at       TIMESTAMPTZ NOT NULL,
  last_at        TIMESTAMPTZ NOT NULL,
  entry_count    INTEGER NOT NULL CHECK (entry_count > 0),
  statuses       TEXT NOT NULL,
  key_ids        TEXT NOT NULL,
  operation_ids  TEXT NOT NULL,
  dictionary     TEXT NOT NULL,
  entries        TEXT NOT NULL
);
CREATE INDEX request_log_batches_by_account ON request_log_batches (account_id, id);
CREATE INDEX request_log_batches_by_time ON request_log_batches (last_at);

INSERT INTO request_log_batches (id, account_id, first_at, last_at, entry_count, statuses, key_ids, operation_ids, dictionary, entries)
SELECT id, account_id, created_at, created_at, 1,
       '|' || status || '|', '|' || key_id || '|', '|' || operation_id || '|',
       json_build_array(json_build_array(json_build_array(key_id, key_name)), json_build_array(json_build_array(method, operation_id)),
                        json_build_array(path), json_build_array(client_address), (extract(epoch FROM created_at) * 1000)::bigint)::text,
       json_build_array(json_build_array(request_id, 0, 0, 0, status, latency_ms, 0, idempotency_key, idempotent_replayed, problem, 0))::text
FROM request_logs;

DROP TABLE request_logs;
