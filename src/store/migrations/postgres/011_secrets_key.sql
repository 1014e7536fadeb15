-- PostgreSQL only: the id of the key that seals secrets at rest (webhook signing secrets, bank
-- partner credentials), so that an instance started with another SECRETS_KEY refuses to start
-- instead of answering 500 for every secret another instance sealed. The id is a fingerprint of
-- the key (src/store/core/sealing.ts), never the key. sql.js keeps its key file in DATA_DIR.
CREATE TABLE secrets_key (
  singleton    BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
  key_id       TEXT NOT NULL,
  recorded_at  TIMESTAMPTZ NOT NULL
);
