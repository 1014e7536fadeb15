-- Webhook endpoints, the transactional outbox (events and one delivery per subscribed endpoint)
-- and the delivery log (one row per attempt).
-- Timestamps are ISO 8601 UTC text bound by the application; nothing is computed in SQL, so the
-- journal replays to the same database and the schema stays portable to PostgreSQL.

-- An endpoint an account registered. The signing secret is stored as is (it must sign); it is
-- shown in full only when created or rotated. During a rotation the previous secret keeps
-- signing beside the new one until previous_secret_expires_at.
CREATE TABLE webhook_endpoints (
  id                          TEXT PRIMARY KEY,
  account_id                  TEXT NOT NULL REFERENCES accounts(id),
  url                         TEXT NOT NULL,
  description                 TEXT NOT NULL DEFAULT '',
  enabled                     INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  -- why the service disabled it: 'gone' (the receiver answered 410), 'failing' (5 days of failure), 'manual'
  disabled_reason             TEXT,
  disabled_at                 TEXT,
  secret                      TEXT NOT NULL,
  previous_secret             TEXT,
  previous_secret_expires_at  TEXT,
  -- start of the current run of failed attempts (NULL after a success)
  failing_since               TEXT,
  created_at                  TEXT NOT NULL,
  updated_at                  TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, id);

-- The event names an endpoint chose.
CREATE TABLE webhook_subscriptions (
  webhook_id  TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  account_id  TEXT NOT NULL,
  event_type  TEXT NOT NULL,
  PRIMARY KEY (webhook_id, event_type)
);
CREATE INDEX webhook_subscriptions_by_event ON webhook_subscriptions (account_id, event_type);

-- The outbox: every event, written in the transaction of the change that caused it. payload is
-- the exact JSON text sent (signatures cover these bytes).
CREATE TABLE webhook_events (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  type         TEXT NOT NULL,
  payload      TEXT NOT NULL,
  occurred_at  TEXT NOT NULL,
  is_test      INTEGER NOT NULL DEFAULT 0 CHECK (is_test IN (0, 1))
);
CREATE INDEX webhook_events_by_account ON webhook_events (account_id, id);

-- One delivery per (endpoint, event). state 'pending' is due at next_attempt_at; while a
-- dispatcher has it in flight, next_attempt_at is pushed to locked_until (the lease), so a
-- delivery claimed by a process that died becomes due again when the lease runs out.
CREATE TABLE webhook_deliveries (
  webhook_id       TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         TEXT NOT NULL REFERENCES webhook_events(id),
  account_id       TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT,
  locked_until     TEXT,
  lease_token      TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  PRIMARY KEY (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_lease ON webhook_deliveries (lease_token) WHERE lease_token IS NOT NULL;

-- The delivery log: one row per attempt (id 'dlv-'), newest first by id.
CREATE TABLE webhook_delivery_attempts (
  id               TEXT PRIMARY KEY,
  webhook_id       TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         TEXT NOT NULL,
  account_id       TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  attempted_at     TEXT NOT NULL,
  outcome          TEXT NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
  status_code      INTEGER,
  error            TEXT,
  duration_ms      INTEGER NOT NULL,
  next_attempt_at  TEXT
);
CREATE INDEX webhook_delivery_attempts_by_webhook ON webhook_delivery_attempts (webhook_id, id);
