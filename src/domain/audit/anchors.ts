/**
 * What the database alone cannot vouch for: where a chain ends (its head) and where checking it
 * starts (its pruning anchor). A writer of the database could otherwise delete the newest entries
 * and move the head back, or delete the oldest and move the anchor up, and the chain would still
 * hold. So each of the two carries a MAC (HMAC-SHA-256 under a key derived from the sealing key,
 * src/domain/keys/derivedKeys.ts) over the chain's id, which of the two it is, its seq and hash,
 * and `brokenAt`, written in the same transaction as every move of it.
 *
 * A move the service finds before it moves the record itself (an append to a head whose MAC does
 * not hold, a retention run on such an anchor) is not laundered by the new MAC: the new MAC covers
 * `brokenAt`, the seq the record stood at when the service found it moved, and `audit verify`
 * reports it from then on.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson, type ChainAnchor } from './chain.ts';

/** The chain's head (its newest entry) or its pruning anchor (the last entry retention deleted). */
export type AnchorKind = 'head' | 'pruned';

/** A head or pruning anchor as stored: where it points, its MAC (null when none), and when it was found moved. */
export interface AnchorRecord extends ChainAnchor {
  mac: string | null;
  brokenAt: number | null;
}

/** A derived key and the id of the sealing key it comes from. */
export interface AnchorKey {
  keyId: string;
  key: Buffer;
}

/** The derived key of the sealing key of id `keyId`, or null when this process does not hold it. */
export type AnchorKeyLookup = (keyId: string) => Buffer | null;

const MAC_VERSION = 'v1';

function macHex(key: Buffer, accountId: string, kind: AnchorKind, anchor: ChainAnchor, brokenAt: number | null): string {
  const message = canonicalJson({ accountId, kind, seq: anchor.seq, hash: anchor.hash, brokenAt });
  return createHmac('sha256', key).update(`mos-audit-anchor\0${message}`).digest('hex');
}

/** The MAC of a head or pruning anchor: `v1:<sealing key id>:<hex HMAC-SHA-256>`. */
export function anchorMac(key: AnchorKey, accountId: string, kind: AnchorKind, anchor: ChainAnchor, brokenAt: number | null): string {
  return `${MAC_VERSION}:${key.keyId}:${macHex(key.key, accountId, kind, anchor, brokenAt)}`;
}

/** The id of the sealing key a MAC was made under; null when the text is not a MAC. */
export function anchorMacKeyId(mac: string): string | null {
  const parts = mac.split(':');
  return parts.length === 3 && parts[0] === MAC_VERSION && parts[1] !== '' ? parts[1]! : null;
}

export type AnchorBreak =
  /** The record's MAC does not cover what it holds: moved (or its MAC replaced) in the database. */
  | { reason: 'anchor_moved'; kind: AnchorKind; seq: number }
  /** The record has no MAC: removed in the database (every record has one since it was anchored). */
  | { reason: 'anchor_missing'; kind: AnchorKind; seq: number }
  /** The service found the record moved when it stood at `brokenAt`, and kept that under the MAC. */
  | { reason: 'anchor_moved_before'; kind: AnchorKind; seq: number; brokenAt: number }
  /** The chain's row (its head and anchor) was deleted from under its entries. */
  | { reason: 'chain_row_missing'; kind: 'head'; seq: 0 }
  /** The MAC was made under a sealing key this process does not hold: it cannot be checked. */
  | { reason: 'anchor_key_unavailable'; kind: AnchorKind; seq: number; keyId: string };

/** Checks one record's MAC; null when it holds. */
export function checkAnchor(accountId: string, kind: AnchorKind, record: AnchorRecord, keyFor: AnchorKeyLookup): AnchorBreak | null {
  const { seq } = record;
  if (record.mac === null) return { reason: 'anchor_missing', kind, seq };
  const keyId = anchorMacKeyId(record.mac);
  if (keyId === null) return { reason: 'anchor_moved', kind, seq };
  const key = keyFor(keyId);
  if (key === null) return { reason: 'anchor_key_unavailable', kind, seq, keyId };
  const expected = Buffer.from(anchorMac({ keyId, key }, accountId, kind, record, record.brokenAt));
  const found = Buffer.from(record.mac);
  if (expected.length !== found.length || !timingSafeEqual(expected, found)) return { reason: 'anchor_moved', kind, seq };
  if (record.brokenAt !== null) return { reason: 'anchor_moved_before', kind, seq, brokenAt: record.brokenAt };
  return null;
}

/**
 * The `brokenAt` a record keeps when the service moves it: what it had, or, when its MAC does not
 * hold now (moved, removed, or made under a key this process does not hold), the seq it stands at.
 * A MAC under a key not held counts as not holding: else a writer could name an unknown key in the
 * MAC and have the service's next move anchor what they did.
 */
export function brokenAtOnMove(accountId: string, kind: AnchorKind, record: AnchorRecord, keyFor: AnchorKeyLookup): number | null {
  if (record.brokenAt !== null) return record.brokenAt;
  const found = checkAnchor(accountId, kind, record, keyFor);
  return found === null ? null : record.seq;
}

const NAMES: Record<AnchorKind, string> = { head: 'its head', pruned: 'its pruning anchor' };

/** Words for the operator: which record and why. */
export function describeAnchorBreak(found: AnchorBreak): string {
  const name = `${NAMES[found.kind]} (#${found.seq})`;
  switch (found.reason) {
    case 'anchor_moved':
      return `${name}: moved in the database (its MAC does not match what it holds)`;
    case 'anchor_missing':
      return `${name}: its MAC was removed in the database`;
    case 'anchor_moved_before':
      return `${name}: had been moved in the database when it stood at #${found.brokenAt} (found when the service next moved it; or its MAC was then made under a sealing key the service did not hold)`;
    case 'chain_row_missing':
      return `its head: the chain's head row was deleted from the database (its entries remain)`;
    case 'anchor_key_unavailable':
      return `${name}: cannot be checked: its MAC was made under the sealing key of id ${found.keyId}, which this process does not hold (run it with the service's SECRETS_KEY or key file)`;
  }
}
