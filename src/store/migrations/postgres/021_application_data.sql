-- PostgreSQL twin of src/store/migrations/sqlite/021: the application's property and loan data,
-- its demographic information apart from it, and the lender's identity.
ALTER TABLE applications ADD COLUMN property_address_json JSON;
ALTER TABLE applications ADD COLUMN loan_purpose TEXT;
ALTER TABLE applications ADD COLUMN occupancy TEXT;
ALTER TABLE applications ADD COLUMN property_type TEXT;
ALTER TABLE applications ADD COLUMN total_units INTEGER;
ALTER TABLE applications ADD COLUMN lien_status TEXT;
ALTER TABLE applications ADD COLUMN loan_type TEXT;

CREATE TABLE application_demographics (
  mortgage_id        TEXT PRIMARY KEY REFERENCES applications(id),
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  -- json (not jsonb): read back with its keys in the order they were written
  demographics_json  JSON NOT NULL,
  updated_at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX application_demographics_by_account ON application_demographics (account_id, mortgage_id);

ALTER TABLE accounts ADD COLUMN lender_json JSON;
