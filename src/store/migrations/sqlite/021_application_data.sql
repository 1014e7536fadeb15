-- Issue 44's application data: what the regulatory outputs (adverse action notices, the Loan
-- Estimate, the HMDA register) need to know about the property and the loan. Values are the
-- contract's enum words (src/domain/applications/applicationData.ts), validated before they are
-- written; property_address_json holds { street, city, state, zip, county, censusTract }.
ALTER TABLE applications ADD COLUMN property_address_json TEXT;
ALTER TABLE applications ADD COLUMN loan_purpose TEXT;
ALTER TABLE applications ADD COLUMN occupancy TEXT;
ALTER TABLE applications ADD COLUMN property_type TEXT;
ALTER TABLE applications ADD COLUMN total_units INTEGER;
ALTER TABLE applications ADD COLUMN lien_status TEXT;
ALTER TABLE applications ADD COLUMN loan_type TEXT;

-- The applicant's HMDA demographic information, apart from the application's row: no query that
-- reads applications (the API's view, the desk, exports, events) can carry it by accident. Read
-- only by the admin-only GET /v1/applications/{mortgageId}/demographics (and the HMDA register).
CREATE TABLE application_demographics (
  mortgage_id        TEXT PRIMARY KEY REFERENCES applications(id),
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  demographics_json  TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
CREATE INDEX application_demographics_by_account ON application_demographics (account_id, mortgage_id);

-- The lender's identity as notices name it ({ name, address: { street, city, state, zip } }, and
-- what the HMDA register adds), set by an admin in the dashboard's settings; on the live account's
-- row (one lender for both environments).
ALTER TABLE accounts ADD COLUMN lender_json TEXT;
