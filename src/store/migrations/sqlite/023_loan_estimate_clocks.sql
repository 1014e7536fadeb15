-- The Loan Estimate's clock of each application that became a TRID application (12 CFR
-- 1026.2(a)(3)(ii): name, income, property address, value, loan amount and a credit score):
-- when it did (completed_at, the environment's time), the business day the estimate is due by
-- (due_date in time_zone) and the instant that day ends (due_at). It runs until the lender marks
-- the estimate delivered or the application is withdrawn or declined (stopped_*); overdue_notified_at
-- records that disclosure.loan_estimate_overdue was published. Every change is conditional on the
-- clock still running, so a sweep and a delivery never both win.
CREATE TABLE loan_estimate_clocks (
  account_id           TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id          TEXT NOT NULL REFERENCES applications(id),
  completed_at         TEXT NOT NULL,
  received_date        TEXT NOT NULL,
  due_date             TEXT NOT NULL,
  due_at               TEXT NOT NULL,
  time_zone            TEXT NOT NULL,
  delivered_at         TEXT,
  delivery_method      TEXT CHECK (delivery_method IN ('in_person', 'mail', 'email')),
  stopped_at           TEXT,
  stopped_because      TEXT CHECK (stopped_because IN ('withdrawn', 'declined')),
  overdue_notified_at  TEXT,
  PRIMARY KEY (account_id, mortgage_id)
);
CREATE INDEX loan_estimate_clocks_running_by_due ON loan_estimate_clocks (due_at) WHERE delivered_at IS NULL AND stopped_at IS NULL AND overdue_notified_at IS NULL;
