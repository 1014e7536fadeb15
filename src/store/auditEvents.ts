/**
 * The audit log's entries and chain heads. Append-only by construction: this repository inserts
 * entries, lists them, and deletes a chain's oldest entries for retention (recording the anchor
 * where checking then starts); it has no statement that updates or deletes an entry by id, and the
 * migration's trigger refuses any UPDATE of one.
 */
import type { AnchorRecord } from '../domain/audit/anchors.ts';
import { GENESIS_HASH, type AuditEntry } from '../domain/audit/chain.ts';
import { movedAnchor, type ChainRow } from './auditAnchors.ts';
import { filteredPage, type Page, type PageRequest } from './pagination.ts';
import { forUpdate, type SqlExecutor, type Tx } from './store.ts';

/** A chain's head and pruning anchor, each with its MAC (src/domain/audit/anchors.ts). */
export interface ChainState {
  head: AnchorRecord;
  anchor: AnchorRecord;
}


const CHAIN_COLUMNS = 'last_seq, last_hash, head_mac, head_broken_at, pruned_seq, pruned_hash, pruned_mac, pruned_broken_at';

const orNull = (n: number | null): number | null => (n === null ? null : Number(n));

const toState = (row: ChainRow): ChainState => ({
  head: { seq: Number(row.last_seq), hash: row.last_hash, mac: row.head_mac, brokenAt: orNull(row.head_broken_at) },
  anchor: { seq: Number(row.pruned_seq), hash: row.pruned_hash, mac: row.pruned_mac, brokenAt: orNull(row.pruned_broken_at) },
});

/**
 * The chain of `accountId`, locked until the transaction ends (PostgreSQL: the head row's lock,
 * taken after making sure the row exists, so two instances appending to one chain take turns and
 * never fork it; sql.js runs one transaction at a time already). A new chain's head and anchor
 * are anchored (MACs) from the start.
 */
export async function lockChain(tx: Tx, accountId: string): Promise<ChainState> {
  const select = `SELECT ${CHAIN_COLUMNS} FROM audit_chains WHERE account_id = ?${forUpdate(tx)}`;
  let row = await tx.get<ChainRow>(select, [accountId]);
  if (!row) {
    // The chain's first entry: make its head (a concurrent first entry's insert is waited for, then nothing).
    const genesis = { seq: 0, hash: GENESIS_HASH };
    const head = movedAnchor(tx.sealer, accountId, 'head', null, genesis);
    const pruned = movedAnchor(tx.sealer, accountId, 'pruned', null, genesis);
    await tx.run(
      'INSERT INTO audit_chains (account_id, last_seq, last_hash, head_mac, pruned_seq, pruned_hash, pruned_mac) VALUES (?, 0, ?, ?, 0, ?, ?) ON CONFLICT (account_id) DO NOTHING',
      [accountId, GENESIS_HASH, head.mac, GENESIS_HASH, pruned.mac],
    );
    row = await tx.get<ChainRow>(select, [accountId]);
  }
  if (!row) throw new Error(`the audit chain of ${accountId} could not be created`);
  return toState(row);
}

/** The chain of `accountId` as committed; null when it has no chain row. */
export async function readChain(db: SqlExecutor, accountId: string): Promise<ChainState | null> {
  const row = await db.get<ChainRow>(`SELECT ${CHAIN_COLUMNS} FROM audit_chains WHERE account_id = ?`, [accountId]);
  return row ? toState(row) : null;
}

/** True when `accountId` has at least one entry (a chain row deleted from under its entries is found so). */
export async function hasEntries(db: SqlExecutor, accountId: string): Promise<boolean> {
  return (await db.get('SELECT 1 AS found FROM audit_events WHERE account_id = ? LIMIT 1', [accountId])) !== undefined;
}

/** Every environment that has a chain, in id order, after `afterId`, `limit` at a time. */
export async function listChains(db: SqlExecutor, afterId: string | null, limit: number): Promise<string[]> {
  const rows = await db.all<{ account_id: string }>('SELECT account_id FROM audit_chains WHERE account_id > ? ORDER BY account_id LIMIT ?', [afterId ?? '', limit]);
  return rows.map((r) => r.account_id);
}

/**
 * Appends `entry` to its chain (locked by lockChain in this transaction, which read `head`) and
 * moves the head to it, with the head's new MAC.
 */
export async function appendEntry(tx: Tx, entry: AuditEntry, head: AnchorRecord): Promise<void> {
  await tx.run(
    `INSERT INTO audit_events (id, account_id, seq, occurred_at, actor_type, actor_id, actor_name, action, target_type, target_id, outcome,
                               client_address, user_agent, request_id, change, prev_hash, hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      entry.auditEventId,
      entry.accountId,
      entry.seq,
      entry.occurredAt,
      entry.actor.type,
      entry.actor.id,
      entry.actor.name,
      entry.action,
      entry.target.type,
      entry.target.id,
      entry.outcome,
      entry.clientAddress,
      entry.userAgent,
      entry.requestId,
      entry.change === null ? null : JSON.stringify(entry.change),
      entry.prevHash,
      entry.hash,
    ],
  );
  const moved = movedAnchor(tx.sealer, entry.accountId, 'head', head, entry);
  await tx.run('UPDATE audit_chains SET last_seq = ?, last_hash = ?, head_mac = ?, head_broken_at = ? WHERE account_id = ?', [
    entry.seq,
    entry.hash,
    moved.mac,
    moved.brokenAt,
    entry.accountId,
  ]);
}

interface EntryRow {
  id: string;
  account_id: string;
  seq: number;
  occurred_at: string;
  actor_type: AuditEntry['actor']['type'];
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  outcome: AuditEntry['outcome'];
  client_address: string | null;
  user_agent: string | null;
  request_id: string | null;
  change: string | null;
  prev_hash: string;
  hash: string;
}

const COLUMNS =
  'id, account_id, seq, occurred_at, actor_type, actor_id, actor_name, action, target_type, target_id, outcome, client_address, user_agent, request_id, change, prev_hash, hash';

const toEntry = (r: EntryRow): AuditEntry => ({
  auditEventId: r.id,
  accountId: r.account_id,
  seq: Number(r.seq),
  occurredAt: r.occurred_at,
  actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name },
  action: r.action,
  target: { type: r.target_type, id: r.target_id },
  outcome: r.outcome,
  clientAddress: r.client_address,
  userAgent: r.user_agent,
  requestId: r.request_id,
  change: r.change === null ? null : (JSON.parse(r.change) as AuditEntry['change']),
  prevHash: r.prev_hash,
  hash: r.hash,
});

export interface AuditQuery {
  accountId: string;
  /** The actor's id (`usr-…`, `key-…`) or, for the command line and the service, its type (`cli`, `system`). */
  actor?: string | undefined;
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  /** Inclusive lower bound on the entry's time. */
  createdFrom?: string | undefined;
  /** Exclusive upper bound on the entry's time. */
  createdTo?: string | undefined;
}

/** A page of the environment's entries, newest first (index audit_events_by_account or _by_account_action). */
export async function listEntries(db: SqlExecutor, query: AuditQuery, page: PageRequest): Promise<Page<AuditEntry>> {
  const byType = query.actor === 'cli' || query.actor === 'system';
  return filteredPage(
    db,
    `SELECT ${COLUMNS} FROM audit_events WHERE account_id = ?`,
    [query.accountId],
    [
      byType ? ['actor_type = ?', query.actor] : ['actor_id = ?', query.actor],
      ['action = ?', query.action],
      ['target_type = ?', query.targetType],
      ['target_id = ?', query.targetId],
      ['occurred_at >= ?', query.createdFrom],
      ['occurred_at < ?', query.createdTo],
    ],
    page,
    toEntry,
    (e) => e.auditEventId,
  );
}

/** Up to `limit` entries of the chain after `afterSeq` and up to `upToSeq`, in chain order (what `audit verify` walks). */
export async function chainEntries(db: SqlExecutor, accountId: string, afterSeq: number, upToSeq: number, limit: number): Promise<AuditEntry[]> {
  const rows = await db.all<EntryRow>(`SELECT ${COLUMNS} FROM audit_events WHERE account_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`, [
    accountId,
    afterSeq,
    upToSeq,
    limit,
  ]);
  return rows.map(toEntry);
}

/** Environments with at least one entry older than `cutoff`, up to `limit` of them. */
export async function chainsWithEntriesBefore(db: SqlExecutor, cutoff: string, limit: number): Promise<string[]> {
  const rows = await db.all<{ account_id: string }>('SELECT DISTINCT account_id FROM audit_events WHERE occurred_at < ? LIMIT ?', [cutoff, limit]);
  return rows.map((r) => r.account_id);
}

/**
 * Retention for one chain: deletes, oldest first, up to `limit` of its leading entries older than
 * `cutoff` (stopping at the first that is not, so what is kept stays one unbroken run) and moves
 * the chain's anchor (and its MAC) to the last one deleted. Locks the chain like an append.
 * Returns how many.
 */
export async function pruneChainBefore(tx: Tx, accountId: string, cutoff: string, limit: number): Promise<number> {
  const chain = await lockChain(tx, accountId);
  const oldest = await tx.all<{ seq: number; occurred_at: string; hash: string }>(
    'SELECT seq, occurred_at, hash FROM audit_events WHERE account_id = ? ORDER BY seq LIMIT ?',
    [accountId, limit],
  );
  let last: { seq: number; hash: string } | null = null;
  for (const row of oldest) {
    if (row.occurred_at >= cutoff) break;
    last = { seq: Number(row.seq), hash: row.hash };
  }
  if (last === null) return 0;
  const { changes } = await tx.run('DELETE FROM audit_events WHERE account_id = ? AND seq <= ?', [accountId, last.seq]);
  const moved = movedAnchor(tx.sealer, accountId, 'pruned', chain.anchor, last);
  await tx.run('UPDATE audit_chains SET pruned_seq = ?, pruned_hash = ?, pruned_mac = ?, pruned_broken_at = ? WHERE account_id = ?', [
    last.seq,
    last.hash,
    moved.mac,
    moved.brokenAt,
    accountId,
  ]);
  return changes;
}

/** Each chain's head (seq and hash), in id order after `afterId`, `limit` at a time: what is exported for an operator to keep. */
export async function listChainHeads(db: SqlExecutor, afterId: string | null, limit: number): Promise<Array<{ accountId: string; seq: number; hash: string }>> {
  const rows = await db.all<{ account_id: string; last_seq: number; last_hash: string }>(
    'SELECT account_id, last_seq, last_hash FROM audit_chains WHERE account_id > ? ORDER BY account_id LIMIT ?',
    [afterId ?? '', limit],
  );
  return rows.map((r) => ({ accountId: r.account_id, seq: Number(r.last_seq), hash: r.last_hash }));
}
