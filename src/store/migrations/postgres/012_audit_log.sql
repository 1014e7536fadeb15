-- PostgreSQL twin of src/store/migrations/sqlite/012: the audit log's chains and entries, with a
-- trigger that refuses any UPDATE of an entry (retention deletes the oldest; nothing updates).
CREATE TABLE audit_chains (
  account_id    TEXT PRIMARY KEY,
  last_seq      BIGINT NOT NULL,
  last_hash     TEXT NOT NULL,
  pruned_seq    BIGINT NOT NULL,
  pruned_hash   TEXT NOT NULL
);

CREATE TABLE audit_events (
  id              TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  seq             BIGINT NOT NULL,
  occurred_at     TIMESTAMPTZ NOT NULL,
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
CREATE INDEX audit_events_by_account ON audit_events (account_id, id);
CREATE INDEX audit_events_by_account_action ON audit_events (account_id, action, id);
CREATE INDEX audit_events_by_time ON audit_events (occurred_at);

CREATE FUNCTION audit_events_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only: entries are never updated';
END;
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_update();
