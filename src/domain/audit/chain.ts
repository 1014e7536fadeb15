/**
 * The audit log's hash chain, with no I/O: what an entry is, how its hash is made, and how a run of
 * entries is checked.
 *
 * Each account environment (an account's live id, or its test environment's id) has one chain.
 * Entry n carries `prevHash` = the hash of entry n-1 (GENESIS_HASH for the first) and `hash` =
 * SHA-256 over the canonical JSON of every field of the entry plus `prevHash`. Changing any field
 * of a stored entry changes what its hash should be; deleting an entry leaves its successor's
 * `prevHash` (and `seq`) pointing at nothing. Retention deletes a chain's oldest entries only, and
 * records the last deleted entry's `seq` and `hash` as the chain's anchor, where checking starts.
 */
import { createHash } from 'node:crypto';

/** Who did it: a dashboard user, an API key, the operator's command line, or the service itself. */
type AuditActorType = 'user' | 'apiKey' | 'cli' | 'system';

export interface AuditActor {
  type: AuditActorType;
  /** The user's `usr-` id or the key's `key-` id; null for the command line and the service. */
  id: string | null;
  /** The user's email or the key's name; null for the command line and the service. */
  name: string | null;
}

/** Who and where: what the edge knows about the request a change came from. */
export interface AuditOrigin {
  actor: AuditActor;
  clientAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export type AuditOutcome = 'success' | 'failure';

/** The change an entry describes, where there is one: the values before and after (secrets never appear). */
export interface AuditChange {
  before: unknown;
  after: unknown;
}

/** Every field of an entry that its hash covers, except `prevHash`. */
export interface AuditEntryContent {
  auditEventId: string;
  /** The environment whose chain holds the entry (its live account id or `….test`). */
  accountId: string;
  /** Position in the chain: 1 for the first entry ever recorded for the environment. */
  seq: number;
  /** ISO 8601 UTC with milliseconds. */
  occurredAt: string;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string | null };
  outcome: AuditOutcome;
  clientAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  change: AuditChange | null;
}

export interface AuditEntry extends AuditEntryContent {
  prevHash: string;
  hash: string;
}

/** The `prevHash` of a chain's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * JSON with object keys in code-unit order at every depth, so the same content always gives the
 * same text (and hash) however it was built or read back. `undefined` members are left out, as
 * JSON.stringify leaves them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
}

/** The hash an entry with this content and this predecessor's hash must carry (lowercase hex SHA-256). */
export function entryHash(content: AuditEntryContent, prevHash: string): string {
  const { auditEventId, accountId, seq, occurredAt, actor, action, target, outcome, clientAddress, userAgent, requestId, change } = content;
  const covered = { auditEventId, accountId, seq, occurredAt, actor, action, target, outcome, clientAddress, userAgent, requestId, change, prevHash };
  return createHash('sha256').update(canonicalJson(covered)).digest('hex');
}

/** Where checking a chain starts: the last entry retention deleted (seq 0 and GENESIS_HASH when none). */
export interface ChainAnchor {
  seq: number;
  hash: string;
}

/** Where the chain ends, as its head row records it (seq 0 when nothing was ever recorded). */
export type ChainHead = ChainAnchor;

export type ChainBreak =
  | { reason: 'content_changed'; auditEventId: string; seq: number }
  | { reason: 'missing_predecessor'; auditEventId: string; seq: number; expectedSeq: number }
  | { reason: 'missing_newest'; expectedSeq: number; lastSeq: number };

/** Words for the operator: which entry and why. */
export function describeBreak(found: ChainBreak): string {
  switch (found.reason) {
    case 'content_changed':
      return `entry ${found.auditEventId} (#${found.seq}): content changed (its hash no longer matches what it holds)`;
    case 'missing_predecessor':
      return `entry ${found.auditEventId} (#${found.seq}): missing predecessor (entry #${found.expectedSeq} was deleted or altered)`;
    case 'missing_newest':
      return `the newest entry (#${found.expectedSeq}) is missing: the chain ends at #${found.lastSeq}`;
  }
}

/**
 * Checks a chain a run of entries at a time, in `seq` order from the anchor: each entry must
 * follow the one before (next seq, `prevHash` equal to its hash) and carry the hash of its own
 * content. `finish` checks that the last entry seen is the one the head names.
 */
export class ChainVerifier {
  private seq: number;
  private hash: string;
  private checked = 0;

  constructor(anchor: ChainAnchor) {
    this.seq = anchor.seq;
    this.hash = anchor.hash;
  }

  /** The first break among `entries` (which continue the ones checked before), or null. */
  check(entries: readonly AuditEntry[]): ChainBreak | null {
    for (const entry of entries) {
      if (entry.seq !== this.seq + 1 || entry.prevHash !== this.hash) {
        return { reason: 'missing_predecessor', auditEventId: entry.auditEventId, seq: entry.seq, expectedSeq: this.seq + 1 };
      }
      if (entryHash(entry, entry.prevHash) !== entry.hash) return { reason: 'content_changed', auditEventId: entry.auditEventId, seq: entry.seq };
      this.seq = entry.seq;
      this.hash = entry.hash;
      this.checked++;
    }
    return null;
  }

  /** After the last run: a break when the head names an entry past (or other than) the last one seen. */
  finish(head: ChainHead): ChainBreak | null {
    if (head.seq !== this.seq || head.hash !== this.hash) return { reason: 'missing_newest', expectedSeq: head.seq, lastSeq: this.seq };
    return null;
  }

  /** How many entries passed. */
  get entriesChecked(): number {
    return this.checked;
  }
}
