-- API versions (src/domain/versions/): the version an account is pinned to, and each webhook
-- endpoint's. Accounts and endpoints that exist before this step were built against the first
-- release's contract, so they are pinned to the first version, 2026-11-21: nothing they read
-- changes under them. A new account is pinned to the current version when it is opened.
-- api_version_previous and api_version_changed_at let an upgrade be rolled back for 72 hours.
ALTER TABLE accounts ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-11-21';
ALTER TABLE accounts ADD COLUMN api_version_previous TEXT;
ALTER TABLE accounts ADD COLUMN api_version_changed_at TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-11-21';
