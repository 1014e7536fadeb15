-- PostgreSQL twin of src/store/migrations/sqlite/014 (same tables and columns; native types).
-- A second factor for the dashboard's users (issue 27): TOTP (RFC 6238) with one-time recovery
-- codes, an account-wide requirement, and sessions that remember when the factor was last checked.

-- totp_secret and totp_pending_secret are sealed (AES-256-GCM under the secrets key, like webhook
-- secrets; src/store/sealedColumns.ts): the pending one while the user scans it, the other once a
-- first code confirmed it. totp_last_step is the RFC 6238 time step of the last code accepted: a
-- code of that step or an earlier one is refused (a code cannot be replayed).
ALTER TABLE users ADD COLUMN totp_secret TEXT;
ALTER TABLE users ADD COLUMN totp_pending_secret TEXT;
ALTER TABLE users ADD COLUMN totp_enrolled_at TIMESTAMPTZ;
ALTER TABLE users ADD COLUMN totp_last_step INTEGER;

-- An admin may require every user of the account to have a second factor.
ALTER TABLE accounts ADD COLUMN mfa_required SMALLINT NOT NULL DEFAULT 0 CHECK (mfa_required IN (0, 1));

-- 'second_factor': the password was right, the code is still to come (the session can do nothing
-- else). second_factor_at: when this session last checked a code (sensitive actions ask again after a while).
ALTER TABLE sessions ADD COLUMN stage TEXT NOT NULL DEFAULT 'signed_in' CHECK (stage IN ('signed_in', 'second_factor'));
ALTER TABLE sessions ADD COLUMN second_factor_at TIMESTAMPTZ;

-- Ten one-time codes per user, shown once: only the SHA-256 of each (bound to its user) is kept.
CREATE TABLE mfa_recovery_codes (
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash   TEXT NOT NULL,
  created_at  TIMESTAMPTZ NOT NULL,
  used_at     TIMESTAMPTZ,
  PRIMARY KEY (user_id, code_hash)
);
