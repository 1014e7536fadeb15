-- Applicants' demographic information is stored sealed (src/store/applicationDemographics.ts):
-- `sealed:v1:<key id>:<base64url>`, which is not JSON. The column becomes TEXT; a value stored
-- before keeps its text exactly (json keeps its input as written), and the pass that runs after
-- the migrations at open seals it (src/store/sealedColumns.ts). Twin of sqlite/024.
ALTER TABLE application_demographics ALTER COLUMN demographics_json TYPE TEXT USING demographics_json::text;
