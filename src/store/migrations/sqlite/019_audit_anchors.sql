-- The MACs of each audit chain's head and pruning anchor (src/domain/audit/anchors.ts): made under
-- a key derived from the sealing key, which a writer of the database alone does not hold, and
-- written in the same transaction as every move of the head or the anchor. *_broken_at is the seq
-- the record stood at when the service found it moved (NULL while it never was).
--
-- Chains recorded before this step have no MACs yet: the row of audit_anchor_backfill asks the
-- store to make them, once, when it next opens (where it holds the key), in the transaction that
-- deletes the row. From then on a chain without a MAC is reported by `audit verify`.
ALTER TABLE audit_chains ADD COLUMN head_mac TEXT;
ALTER TABLE audit_chains ADD COLUMN head_broken_at INTEGER;
ALTER TABLE audit_chains ADD COLUMN pruned_mac TEXT;
ALTER TABLE audit_chains ADD COLUMN pruned_broken_at INTEGER;

CREATE TABLE audit_anchor_backfill (
  migration  TEXT PRIMARY KEY
);
INSERT INTO audit_anchor_backfill (migration) VALUES ('019');
