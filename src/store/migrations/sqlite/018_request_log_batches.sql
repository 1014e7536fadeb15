-- The request log as batches (src/store/requestLogs.ts): one row per environment per flush, the
-- entries a JSON array of arrays, beside the sets ('|a|b|') a filtered read matches with LIKE to
-- skip batches without decoding them (a request id is matched in the entries' text itself). A row per request cost the embedded engine a third of a
-- quote's own work; a row per batch costs a few per cent. Rows written before become batches of
-- one (their entry ids gain '.0000', so old cursors still order before every newer entry).
CREATE TABLE request_log_batches (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL,
  first_at       TEXT NOT NULL,
  last_at        TEXT NOT NULL,
  entry_count    INTEGER NOT NULL CHECK (entry_count > 0),
  statuses       TEXT NOT NULL,
  key_ids        TEXT NOT NULL,
  operation_ids  TEXT NOT NULL,
  key_names      TEXT NOT NULL,
  entries        TEXT NOT NULL
);
-- The log newest first; retention by the newest entry's time.
CREATE INDEX request_log_batches_by_account ON request_log_batches (account_id, id);
CREATE INDEX request_log_batches_by_time ON request_log_batches (last_at);

INSERT INTO request_log_batches (id, account_id, first_at, last_at, entry_count, statuses, key_ids, operation_ids, key_names, entries)
SELECT id, account_id, created_at, created_at, 1,
       '|' || status || '|', '|' || key_id || '|', '|' || operation_id || '|',
       CASE WHEN key_name IS NULL THEN '[]' ELSE json_array(json_array(key_id, key_name)) END,
       json_array(json_array(request_id, key_id, method, operation_id, path, status, latency_ms, client_address,
                             idempotency_key, idempotent_replayed, problem,
                             CAST(round((julianday(created_at) - 2440587.5) * 86400000) AS INTEGER)))
FROM request_logs;

DROP TABLE request_logs;
