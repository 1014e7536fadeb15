-- PostgreSQL twin of src/store/migrations/sqlite/019: the MACs of each audit chain's head and
-- pruning anchor, and the one-time request to anchor the chains recorded before this step.
ALTER TABLE audit_chains ADD COLUMN head_mac TEXT;
ALTER TABLE audit_chains ADD COLUMN head_broken_at BIGINT;
ALTER TABLE audit_chains ADD COLUMN pruned_mac TEXT;
ALTER TABLE audit_chains ADD COLUMN pruned_broken_at BIGINT;

CREATE TABLE audit_anchor_backfill (
  migration  TEXT PRIMARY KEY
);
INSERT INTO audit_anchor_backfill (migration) VALUES ('019');
