-- PostgreSQL twin of src/store/migrations/sqlite/017. Rate locks: a quote's rate and fees held until expires_at. Each lock keeps a snapshot of the
-- figures it was made with (money INTEGER cents, percentages TEXT decimals), so a later rate-sheet
-- change does not move it. status goes active → expired | cancelled, each a conditional update
-- (WHERE status = 'active'), so the expiry job and a cancel never both win.
-- expiring_notified_at records that rate_lock.expiring was sent (cleared by an extension).
CREATE TABLE rate_locks (
  id                            TEXT PRIMARY KEY,
  account_id                    TEXT NOT NULL REFERENCES accounts(id),
  quote_id                      TEXT NOT NULL REFERENCES quotes(id),
  mortgage_id                   TEXT REFERENCES applications(id),
  status                        TEXT NOT NULL CHECK (status IN ('active', 'expired', 'cancelled')),
  period_days                   INTEGER NOT NULL,
  amount_cents                  BIGINT  NOT NULL,
  term_years                    INTEGER NOT NULL,
  currency                      TEXT NOT NULL,
  interest_rate                 NUMERIC NOT NULL,
  rate_adjustment               NUMERIC NOT NULL,
  monthly_payment_cents         BIGINT  NOT NULL,
  fees                          JSONB NOT NULL,
  extension_fee_per_day_cents   BIGINT  NOT NULL,
  extended_days                 INTEGER NOT NULL DEFAULT 0,
  extension_fees_cents          BIGINT  NOT NULL DEFAULT 0,
  locked_at                     TIMESTAMPTZ NOT NULL,
  expires_at                    TIMESTAMPTZ NOT NULL,
  expiring_notified_at          TIMESTAMPTZ,
  ended_at                      TIMESTAMPTZ
);
CREATE INDEX rate_locks_by_account ON rate_locks (account_id, id);
CREATE INDEX rate_locks_by_account_status ON rate_locks (account_id, status, id);
CREATE INDEX rate_locks_active_by_expiry ON rate_locks (status, expires_at);
CREATE UNIQUE INDEX rate_locks_one_active_per_quote ON rate_locks (quote_id) WHERE status = 'active';
CREATE UNIQUE INDEX rate_locks_one_active_per_application ON rate_locks (mortgage_id) WHERE status = 'active' AND mortgage_id IS NOT NULL;

-- The simulated clock of a test environment: how far ahead of real time it runs. No row means
-- real time (live environments never have one; a reset deletes the row).
CREATE TABLE test_clocks (
  environment_id  TEXT PRIMARY KEY REFERENCES accounts(id),
  offset_ms       BIGINT  NOT NULL CHECK (offset_ms >= 0),
  updated_at      TIMESTAMPTZ NOT NULL
);
