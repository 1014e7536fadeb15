-- PostgreSQL twin of src/store/migrations/sqlite/022: adverse action notices.
CREATE TABLE adverse_action_notices (
  id               TEXT PRIMARY KEY,
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  mortgage_id      TEXT NOT NULL REFERENCES applications(id),
  status           TEXT NOT NULL CHECK (status IN ('due', 'delivered')),
  -- json (not jsonb): read back with its keys in the order they were written
  content_json     JSON NOT NULL,
  html             TEXT NOT NULL,
  pdf_base64       TEXT NOT NULL,
  decided_at       TIMESTAMPTZ NOT NULL,
  due_at           TIMESTAMPTZ NOT NULL,
  remind_at        TIMESTAMPTZ NOT NULL,
  reminded_at      TIMESTAMPTZ,
  delivery_method  TEXT CHECK (delivery_method IN ('mail', 'email', 'in_person')),
  delivered_at     TIMESTAMPTZ,
  created_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX adverse_action_notices_by_application ON adverse_action_notices (account_id, mortgage_id, id);
CREATE INDEX adverse_action_notices_due ON adverse_action_notices (status, remind_at);
