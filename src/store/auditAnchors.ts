/**
 * The MACs of the audit chains' heads and pruning anchors (src/domain/audit/anchors.ts), with the
 * store's sealing key: made whenever the head or the anchor moves, checked by `audit verify`, made
 * once for the chains recorded before they existed, and made again under a new sealing key.
 */
import { anchorMac, anchorMacKeyId, brokenAtOnMove, checkAnchor, type AnchorBreak, type AnchorKeyLookup, type AnchorKind, type AnchorRecord } from '../domain/audit/anchors.ts';
import type { ChainAnchor } from '../domain/audit/chain.ts';
import { KEY_PURPOSES } from '../domain/keys/derivedKeys.ts';
import type { SecretSealer, SqlExecutor, Tx } from './store.ts';

/** The derived key of each sealing key this process holds. */
function anchorKeyLookup(sealer: SecretSealer): AnchorKeyLookup {
  return (keyId) => sealer.purposeKey(KEY_PURPOSES.auditAnchor, keyId)?.key ?? null;
}

/** What a head or anchor moved to `next` by the service stores: its MAC under the current key, and its `brokenAt`. */
export function movedAnchor(sealer: SecretSealer, accountId: string, kind: AnchorKind, current: AnchorRecord | null, next: ChainAnchor): { mac: string; brokenAt: number | null } {
  const brokenAt = current === null ? null : brokenAtOnMove(accountId, kind, current, anchorKeyLookup(sealer));
  return { mac: anchorMac(sealer.purposeKey(KEY_PURPOSES.auditAnchor)!, accountId, kind, next, brokenAt), brokenAt };
}

/** A chain's row as read: its head, its pruning anchor, and the MACs over both (auditEvents.ts); with its account, an AnchorRow. */
export interface ChainRow {
  last_seq: number;
  last_hash: string;
  head_mac: string | null;
  head_broken_at: number | null;
  pruned_seq: number;
  pruned_hash: string;
  pruned_mac: string | null;
  pruned_broken_at: number | null;
}

interface AnchorRow extends ChainRow {
  account_id: string;
}

const RECORDS = [
  { kind: 'head', seq: 'last_seq', hash: 'last_hash', mac: 'head_mac', brokenAt: 'head_broken_at' },
  { kind: 'pruned', seq: 'pruned_seq', hash: 'pruned_hash', mac: 'pruned_mac', brokenAt: 'pruned_broken_at' },
] as const;

export interface Reanchored {
  /** Records given their first MAC (chains recorded before anchoring existed). */
  anchored: number;
  /** Records whose MAC was made again under the current sealing key. */
  reanchored: number;
  /** Of those, records whose old MAC did not hold: the new one keeps that they were moved (`brokenAt`). */
  foundMoved: number;
  /** Records whose MAC was made under a sealing key this process does not hold: left as they are. */
  unverifiable: number;
}

/**
 * Brings every MAC under the current sealing key, in `tx`: at open (after a rotation by
 * SECRETS_KEY_PREVIOUS, and once after the migration that added MACs) and by `secrets rotate-key`.
 * A record whose old MAC does not hold (or is missing) keeps that under the new one (`brokenAt`, as
 * when the service moves it), so a rotation never launders a move; one under a key this process
 * does not hold is left as it is, for `audit verify` to say it cannot check it.
 * Records without a MAC get a clean first one only while the migration's one-time request is present.
 */
export async function reanchorAuditChains(tx: Tx, tables: ReadonlySet<string>): Promise<Reanchored> {
  const done: Reanchored = { anchored: 0, reanchored: 0, foundMoved: 0, unverifiable: 0 };
  if (!tables.has('audit_chains') || !tables.has('audit_anchor_backfill')) return done;
  const backfill = (await tx.get('SELECT migration FROM audit_anchor_backfill')) !== undefined;
  const current = tx.sealer.purposeKey(KEY_PURPOSES.auditAnchor)!;
  const lookup = anchorKeyLookup(tx.sealer);
  const rows = await tx.all<AnchorRow>(
    'SELECT * FROM audit_chains WHERE head_mac IS NULL OR pruned_mac IS NULL OR head_mac NOT LIKE ? OR pruned_mac NOT LIKE ? ORDER BY account_id',
    [`v1:${current.keyId}:%`, `v1:${current.keyId}:%`],
  );
  for (const row of rows) {
    for (const r of RECORDS) {
      const record: AnchorRecord = { seq: Number(row[r.seq]), hash: row[r.hash], mac: row[r.mac], brokenAt: row[r.brokenAt] === null ? null : Number(row[r.brokenAt]) };
      const keyId = record.mac === null ? null : anchorMacKeyId(record.mac);
      if (keyId === current.keyId) continue;
      // Under a key this process does not hold (started with another key?): left for `audit verify` to report.
      if (keyId !== null && lookup(keyId) === null) {
        done.unverifiable++;
        continue;
      }
      const first = record.mac === null && backfill;
      const brokenAt = first ? null : brokenAtOnMove(row.account_id, r.kind, record, lookup);
      const mac = anchorMac(current, row.account_id, r.kind, record, brokenAt);
      // Only if the record is still the one read: on PostgreSQL another instance may have moved it since.
      const { changes } = await tx.run(
        `UPDATE audit_chains SET ${r.mac} = ?, ${r.brokenAt} = ? WHERE account_id = ? AND ${r.seq} = ? AND ${r.hash} = ? AND ${r.mac} ${record.mac === null ? 'IS NULL' : '= ?'}`,
        [mac, brokenAt, row.account_id, record.seq, record.hash, ...(record.mac === null ? [] : [record.mac])],
      );
      if (changes === 0) continue;
      if (first) done.anchored++;
      else done.reanchored++;
      if (brokenAt !== null && record.brokenAt === null) done.foundMoved++;
    }
  }
  if (backfill) await tx.run('DELETE FROM audit_anchor_backfill');
  return done;
}

/** Environments with entries but no chain row (a head deleted from the database), up to `limit`. */
export async function chainsWithoutHead(db: SqlExecutor, limit: number): Promise<string[]> {
  const rows = await db.all<{ account_id: string }>(
    'SELECT DISTINCT e.account_id FROM audit_events e LEFT JOIN audit_chains c ON c.account_id = e.account_id WHERE c.account_id IS NULL ORDER BY e.account_id LIMIT ?',
    [limit],
  );
  return rows.map((r) => r.account_id);
}

/** The first of a chain's head and pruning anchor whose MAC does not hold (the head first), or null. */
export function checkChainAnchors(db: SqlExecutor, accountId: string, head: AnchorRecord, anchor: AnchorRecord): AnchorBreak | null {
  const lookup = anchorKeyLookup(db.sealer);
  return checkAnchor(accountId, 'head', head, lookup) ?? checkAnchor(accountId, 'pruned', anchor, lookup);
}
