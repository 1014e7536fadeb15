-- The request log as batches (src/store/requestLogs.ts): one row per environment per flush, the
-- entries a JSON array of arrays (the values they share in the batch's dictionary), beside the
-- sets ('|a|b|') a filtered read matches with LIKE to skip batches without decoding them (a
-- request id is matched in the entries' text itself). A row per request cost the embedded engine a third of a
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
  dictionary     TEXT NOT NULL,
  entries        TEXT NOT NULL
);
-- The log newest first; retention by the newest entry's time.
CREATE INDEX request_log_batches_by_account ON request_log_batches (account_id, id);
CREATE INDEX request_log_batches_by_time ON request_log_batches (last_at);

INSERT INTO request_log_batches (id, account_id, first_at, last_at, entry_count, statuses, key_ids, operation_ids, dictionary, entries)
SELECT id, account_id, created_at, created_at, 1,
       '|' || status || '|', '|' || key_id || '|', '|' || operation_id || '|',
       json_array(json_array(json_array(key_id, key_name)), json_array(json_array(method, operation_id)), json_array(path),
                  json_array(client_address), CAST(round((julianday(created_at) - 2440587.5) * 86400000) AS INTEGER)),
       json_array(json_array(request_id, 0, 0, 0, status, latency_ms, 0, idempotency_key, idempotent_replayed, problem, 0))
FROM request_logs;

DROP TABLE request_logs;
