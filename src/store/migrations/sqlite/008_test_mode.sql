-- Test mode: every account has a test environment beside its live one. Records of the test
-- environment are owned by a second accounts row whose id is the account's id + '.test' and whose
-- live_account_id names the account (src/domain/accounts/environments.ts); live rows have NULL.
-- Every table already scopes by account_id, so this one row keeps test and live data apart.
ALTER TABLE accounts ADD COLUMN live_account_id TEXT REFERENCES accounts(id)
  CHECK (live_account_id IS NULL OR id = live_account_id || '.test');
CREATE UNIQUE INDEX accounts_one_test_environment ON accounts (live_account_id);

INSERT INTO accounts (id, name, email, currency, created_at, live_account_id)
  SELECT id || '.test', name, email, currency, created_at, id FROM accounts WHERE live_account_id IS NULL;

-- The built-in sandbox bank of test mode: it issues the tokens of POST /v1/test/bank-tokens
-- (src/services/testMode.ts). A fixed id, so every instance and every database names it alike.
INSERT INTO bank_partners (id, name, connector, base_url, credential_encrypted, restricted, disabled_at, created_at, updated_at)
  VALUES ('bnk-testmodesandbox00000000000', 'Test-mode sandbox bank', 'sandbox', NULL, NULL, 0, NULL,
          '2026-11-24T00:00:00.000Z', '2026-11-24T00:00:00.000Z');
