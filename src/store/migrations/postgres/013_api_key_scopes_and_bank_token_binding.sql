-- PostgreSQL twin of src/store/migrations/sqlite/013: restricted API keys and bank tokens bound at issue.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('admin', 'member', 'restricted'));
ALTER TABLE api_keys ADD COLUMN scopes JSONB;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_only_restricted CHECK ((role = 'restricted') = (scopes IS NOT NULL));

CREATE TABLE bank_tokens (
  token_hash     TEXT PRIMARY KEY,
  partner_id     TEXT NOT NULL REFERENCES bank_partners(id),
  every_account  SMALLINT NOT NULL CHECK (every_account IN (0, 1)),
  bound_at       TIMESTAMPTZ NOT NULL,
  expires_at     TIMESTAMPTZ
);
CREATE INDEX bank_tokens_by_expiry ON bank_tokens (expires_at);

CREATE TABLE bank_token_accounts (
  token_hash  TEXT NOT NULL REFERENCES bank_tokens(token_hash) ON DELETE CASCADE,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  PRIMARY KEY (token_hash, account_id)
);
