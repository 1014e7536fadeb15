-- PostgreSQL only: what sql.js keeps on disk or in its one process, shared here by every instance.

-- Document bytes, in chunks of at most 256 KiB, written in the transaction of the document's row
-- and read back one chunk at a time: a document is never whole in memory.
CREATE TABLE document_chunks (
  document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  seq          INTEGER NOT NULL CHECK (seq >= 0),
  data         BYTEA NOT NULL,
  PRIMARY KEY (document_id, seq)
);
-- PDFs and images are compressed already: store the chunks without trying again.
ALTER TABLE document_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- Rate-limit counters: one row per key and one-minute window, counted by every instance.
CREATE TABLE rate_limit_counters (
  bucket        TEXT NOT NULL,
  window_start  TIMESTAMPTZ NOT NULL,
  hits          INTEGER NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX rate_limit_counters_by_window ON rate_limit_counters (window_start);
