-- The dashboard's people: users (each belongs to one account, with a role), their sign-in
-- sessions, and invitations to join an account. Timestamps are ISO 8601 UTC text bound by the
-- application, as everywhere (the journal replays to the same database).

-- email is stored lower-cased and is unique over every account: it is what a person signs in with.
-- password_hash is a self-describing scrypt string ($scrypt$ln=17,r=8,p=1$salt$hash), never the password.
CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL REFERENCES accounts(id),
  email          TEXT NOT NULL UNIQUE,
  role           TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  password_hash  TEXT NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE INDEX users_by_account ON users (account_id, id);

-- A session is found by the SHA-256 of the id in its cookie (a copy of the table opens no session).
-- It ends at expires_at (absolute) or when last_seen_at is older than the idle limit, whichever is first.
CREATE TABLE sessions (
  id_hash       TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token    TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  -- The environment the pages show and change: 'live' or the account's 'test' environment.
  environment   TEXT NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'test'))
);
CREATE INDEX sessions_by_user ON sessions (user_id);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- An invitation is a one-time link: only the SHA-256 of its token is kept. It is used once
-- (accepted_at) or lapses at expires_at (7 days); an admin may revoke it before (revoked_at).
CREATE TABLE invitations (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  email        TEXT NOT NULL,
  role         TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  token_hash   TEXT NOT NULL UNIQUE,
  invited_by   TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  accepted_at  TEXT,
  revoked_at   TEXT
);
CREATE INDEX invitations_by_account ON invitations (account_id, id);
