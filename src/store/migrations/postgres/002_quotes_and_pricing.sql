-- PostgreSQL twin of src/store/migrations/sqlite/002. Money is bigint cents, percentages numeric.
CREATE TABLE rate_sheets (
  account_id  TEXT PRIMARY KEY REFERENCES accounts(id),
  -- json (not jsonb): the sheet reads back exactly as the account set it
  sheet       JSON NOT NULL,
  updated_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE quotes (
  id                       TEXT PRIMARY KEY,
  account_id               TEXT NOT NULL REFERENCES accounts(id),
  amount_cents             BIGINT NOT NULL,
  term_years               INTEGER NOT NULL,
  currency                 TEXT NOT NULL,
  property_value_cents     BIGINT,
  credit_score             INTEGER,
  interest_rate            NUMERIC NOT NULL,
  apr                      NUMERIC NOT NULL,
  monthly_payment_cents    BIGINT NOT NULL,
  number_of_payments       INTEGER NOT NULL,
  final_payment_cents      BIGINT NOT NULL,
  total_interest_cents     BIGINT NOT NULL,
  total_of_payments_cents  BIGINT NOT NULL,
  amount_financed_cents    BIGINT NOT NULL,
  finance_charge_cents     BIGINT NOT NULL,
  ltv                      NUMERIC,
  fees                     JSONB NOT NULL,
  lock_period_days         INTEGER NOT NULL,
  created_at               TIMESTAMPTZ NOT NULL,
  expires_at               TIMESTAMPTZ NOT NULL
);
