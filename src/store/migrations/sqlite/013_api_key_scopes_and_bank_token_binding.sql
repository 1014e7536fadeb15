-- Restricted API keys and bank tokens bound at issue (issue 27, "Trust").

-- A key has a role (admin, member) or, as role 'restricted', scopes: a JSON object from resource
-- family to 'read' or 'write' (src/domain/accounts/scopes.ts). SQLite cannot change a CHECK in
-- place, so the table is rebuilt (nothing references api_keys); scopes is added last, as on PostgreSQL.
CREATE TABLE api_keys_013 (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  name          TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('admin', 'member', 'restricted')),
  secret_hash   TEXT NOT NULL UNIQUE,
  hint          TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  last_used_at  TEXT,
  revoked_at    TEXT,
  scopes        TEXT,
  CHECK ((role = 'restricted') = (scopes IS NOT NULL))
);
INSERT INTO api_keys_013 (id, account_id, name, role, secret_hash, hint, created_at, last_used_at, revoked_at, scopes)
  SELECT id, account_id, name, role, secret_hash, hint, created_at, last_used_at, revoked_at, NULL FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_013 RENAME TO api_keys;
CREATE INDEX api_keys_by_account ON api_keys (account_id, id);

-- A bank token's reach, fixed when the service first accepts it (or mints it, for the sandbox
-- banks): the accounts its partner served then. token_hash is the SHA-256 (hex) of the whole
-- bearer token, never the token. every_account = 1: the partner served every account, so the
-- token reaches the accounts that existed at bound_at; 0: only those in bank_token_accounts.
-- Later changes to the partner's accounts never widen a token (a narrowing applies at once).
CREATE TABLE bank_tokens (
  token_hash     TEXT PRIMARY KEY,
  partner_id     TEXT NOT NULL REFERENCES bank_partners(id),
  every_account  INTEGER NOT NULL CHECK (every_account IN (0, 1)),
  bound_at       TEXT NOT NULL,
  expires_at     TEXT
);
CREATE INDEX bank_tokens_by_expiry ON bank_tokens (expires_at);

CREATE TABLE bank_token_accounts (
  token_hash  TEXT NOT NULL REFERENCES bank_tokens(token_hash) ON DELETE CASCADE,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  PRIMARY KEY (token_hash, account_id)
);
