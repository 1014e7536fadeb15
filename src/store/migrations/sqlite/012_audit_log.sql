-- The audit log (src/services/audit.ts): one hash chain per account environment (the live
-- account id, or its test environment's `….test` id). Entries are only ever inserted, and deleted
-- oldest first by retention; the trigger below refuses any UPDATE of an entry.
--
-- audit_chains is each chain's head: the last entry's seq and hash (so a deleted newest entry is
-- found), and the anchor retention leaves (the last deleted entry's seq and hash, where checking
-- starts). Inserting an entry updates its head in the same transaction (on PostgreSQL under the
-- head's row lock, so concurrent instances never fork a chain).
CREATE TABLE audit_chains (
  account_id    TEXT PRIMARY KEY,
  last_seq      INTEGER NOT NULL,
  last_hash     TEXT NOT NULL,
  pruned_seq    INTEGER NOT NULL,
  pruned_hash   TEXT NOT NULL
);

-- change is canonical JSON text ({"before": …, "after": …}) or NULL; hash covers every column
-- but itself (src/domain/audit/chain.ts).
CREATE TABLE audit_events (
  id              TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  seq             INTEGER NOT NULL,
  occurred_at     TEXT NOT NULL,
  actor_type      TEXT NOT NULL CHECK (actor_type IN ('user', 'apiKey', 'cli', 'system')),
  actor_id        TEXT,
  actor_name      TEXT,
  action          TEXT NOT NULL,
  target_type     TEXT NOT NULL,
  target_id       TEXT,
  outcome         TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
  client_address  TEXT,
  user_agent      TEXT,
  request_id      TEXT,
  change          TEXT,
  prev_hash       TEXT NOT NULL,
  hash            TEXT NOT NULL,
  UNIQUE (account_id, seq)
);
-- The list, newest first, and its filters.
CREATE INDEX audit_events_by_account ON audit_events (account_id, id);
CREATE INDEX audit_events_by_account_action ON audit_events (account_id, action, id);
-- Retention: the environments with entries older than the cutoff.
CREATE INDEX audit_events_by_time ON audit_events (occurred_at);

CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
BEGIN
  SELECT RAISE(ABORT, 'audit_events is append-only: entries are never updated');
END;
