-- PostgreSQL twin of src/store/migrations/sqlite/003. Flags stay smallint 0/1 (as in SQLite) so the
-- repositories' SQL (`enabled = 1`) and values are the same on both engines.
CREATE TABLE webhook_endpoints (
  id                          TEXT PRIMARY KEY,
  account_id                  TEXT NOT NULL REFERENCES accounts(id),
  url                         TEXT NOT NULL,
  description                 TEXT NOT NULL DEFAULT '',
  enabled                     SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  disabled_reason             TEXT CHECK (disabled_reason IN ('gone', 'failing', 'manual')),
  disabled_at                 TIMESTAMPTZ,
  secret                      TEXT NOT NULL,
  previous_secret             TEXT,
  previous_secret_expires_at  TIMESTAMPTZ,
  failing_since               TIMESTAMPTZ,
  created_at                  TIMESTAMPTZ NOT NULL,
  updated_at                  TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, id);

CREATE TABLE webhook_subscriptions (
  webhook_id  TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  account_id  TEXT NOT NULL,
  event_type  TEXT NOT NULL,
  PRIMARY KEY (webhook_id, event_type)
);
CREATE INDEX webhook_subscriptions_by_event ON webhook_subscriptions (account_id, event_type);

-- payload stays text: signatures cover these exact bytes.
CREATE TABLE webhook_events (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  type         TEXT NOT NULL,
  payload      TEXT NOT NULL,
  occurred_at  TIMESTAMPTZ NOT NULL,
  is_test      SMALLINT NOT NULL DEFAULT 0 CHECK (is_test IN (0, 1))
);
CREATE INDEX webhook_events_by_account ON webhook_events (account_id, id);

-- Claimed with SELECT … FOR UPDATE OF d SKIP LOCKED, then leased (next_attempt_at pushed to
-- locked_until under lease_token): an instance that dies leaves the delivery due again when the
-- lease runs out, and any other instance takes it.
CREATE TABLE webhook_deliveries (
  webhook_id       TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         TEXT NOT NULL REFERENCES webhook_events(id),
  account_id       TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TIMESTAMPTZ,
  locked_until     TIMESTAMPTZ,
  lease_token      TEXT,
  created_at       TIMESTAMPTZ NOT NULL,
  updated_at       TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_lease ON webhook_deliveries (lease_token) WHERE lease_token IS NOT NULL;

CREATE TABLE webhook_delivery_attempts (
  id               TEXT PRIMARY KEY,
  webhook_id       TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         TEXT NOT NULL,
  account_id       TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  attempted_at     TIMESTAMPTZ NOT NULL,
  outcome          TEXT NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
  status_code      INTEGER,
  error            TEXT,
  duration_ms      INTEGER NOT NULL,
  next_attempt_at  TIMESTAMPTZ
);
CREATE INDEX webhook_delivery_attempts_by_webhook ON webhook_delivery_attempts (webhook_id, id);
