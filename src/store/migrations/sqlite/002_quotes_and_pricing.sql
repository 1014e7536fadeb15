-- Rate sheets (one per account that set its own; the others use the documented default) and
-- quotes. A quote stores every figure it was given, so it reads back identically whatever the
-- sheet becomes. Money is INTEGER cents, percentages TEXT decimal strings, times ISO 8601 UTC text
-- bound by the application. Quotes are read by id (scoped to the account); no list reads them by
-- account, so no secondary index slows every insert down.
CREATE TABLE rate_sheets (
  account_id  TEXT PRIMARY KEY REFERENCES accounts(id),
  sheet       TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

CREATE TABLE quotes (
  id                       TEXT PRIMARY KEY,
  account_id               TEXT NOT NULL REFERENCES accounts(id),
  amount_cents             INTEGER NOT NULL,
  term_years               INTEGER NOT NULL,
  currency                 TEXT NOT NULL,
  property_value_cents     INTEGER,
  credit_score             INTEGER,
  interest_rate            TEXT NOT NULL,
  apr                      TEXT NOT NULL,
  monthly_payment_cents    INTEGER NOT NULL,
  number_of_payments       INTEGER NOT NULL,
  final_payment_cents      INTEGER NOT NULL,
  total_interest_cents     INTEGER NOT NULL,
  total_of_payments_cents  INTEGER NOT NULL,
  amount_financed_cents    INTEGER NOT NULL,
  finance_charge_cents     INTEGER NOT NULL,
  ltv                      TEXT,
  fees                     TEXT NOT NULL,
  lock_period_days         INTEGER NOT NULL,
  created_at               TEXT NOT NULL,
  expires_at               TEXT NOT NULL
);
