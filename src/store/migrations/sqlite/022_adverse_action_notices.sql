-- Adverse action notices (ECOA, 12 CFR 1002.9): one per declined application, made in the
-- decline's transaction. content_json is the notice's content (reasons, score disclosure, lender
-- as it was then); html and pdf_base64 are the files rendered from it then, kept as sent.
-- status: due | delivered. reminded_at: when application.adverse_action_reminder was published
-- (once, at remind_at = 25 days after the decision, on the environment's clock).
CREATE TABLE adverse_action_notices (
  id               TEXT PRIMARY KEY,
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id      TEXT NOT NULL REFERENCES applications(id),
  status           TEXT NOT NULL CHECK (status IN ('due', 'delivered')),
  content_json     TEXT NOT NULL,
  html             TEXT NOT NULL,
  pdf_base64       TEXT NOT NULL,
  decided_at       TEXT NOT NULL,
  due_at           TEXT NOT NULL,
  remind_at        TEXT NOT NULL,
  reminded_at      TEXT,
  delivery_method  TEXT CHECK (delivery_method IN ('mail', 'email', 'in_person')),
  delivered_at     TEXT,
  created_at       TEXT NOT NULL
);
CREATE INDEX adverse_action_notices_by_application ON adverse_action_notices (account_id, mortgage_id, id);
-- The reminder sweep and the desk: what is still due, soonest first.
CREATE INDEX adverse_action_notices_due ON adverse_action_notices (status, remind_at);
