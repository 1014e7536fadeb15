import { describe, expect, it } from 'vitest';
import { anchorMac, anchorMacKeyId, brokenAtOnMove, checkAnchor, describeAnchorBreak, type AnchorRecord } from '../../../../src/domain/audit/anchors.ts';
import { GENESIS_HASH } from '../../../../src/domain/audit/chain.ts';

const ACCOUNT = 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa';
const KEY = { keyId: 'aaaaaaaaaaaa', key: Buffer.alloc(32, 1) };
const OTHER = { keyId: 'bbbbbbbbbbbb', key: Buffer.alloc(32, 2) };
const lookup = (keyId: string) => (keyId === KEY.keyId ? KEY.key : keyId === OTHER.keyId ? OTHER.key : null);
const HASH_4 = 'a'.repeat(64);
const HASH_5 = 'b'.repeat(64);

function record(seq: number, hash: string, brokenAt: number | null = null, key = KEY, kind: 'head' | 'pruned' = 'head', account = ACCOUNT): AnchorRecord {
  return { seq, hash, brokenAt, mac: anchorMac(key, account, kind, { seq, hash }, brokenAt) };
}

describe('anchor MACs', () => {
  it('hold for what they were made over, under any key held', () => {
    expect(checkAnchor(ACCOUNT, 'head', record(5, HASH_5), lookup)).toBeNull();
    expect(checkAnchor(ACCOUNT, 'head', record(5, HASH_5, null, OTHER), lookup)).toBeNull();
    expect(anchorMacKeyId(record(5, HASH_5).mac!)).toBe(KEY.keyId);
  });

  it('do not hold once the seq or hash moves, nor for another chain or the other record', () => {
    const made = record(5, HASH_5);
    expect(checkAnchor(ACCOUNT, 'head', { ...made, seq: 4, hash: HASH_4 }, lookup)).toEqual({ reason: 'anchor_moved', kind: 'head', seq: 4 });
    expect(checkAnchor(ACCOUNT, 'head', { ...made, hash: HASH_4 }, lookup)).toMatchObject({ reason: 'anchor_moved' });
    expect(checkAnchor('acc-01jdz8k3n4q2v6x9b7c5t1r0bb', 'head', made, lookup)).toMatchObject({ reason: 'anchor_moved' });
    expect(checkAnchor(ACCOUNT, 'pruned', made, lookup)).toEqual({ reason: 'anchor_moved', kind: 'pruned', seq: 5 });
    // brokenAt is covered too: clearing it breaks the MAC.
    expect(checkAnchor(ACCOUNT, 'head', { ...record(5, HASH_5, 4), brokenAt: null }, lookup)).toMatchObject({ reason: 'anchor_moved' });
    expect(checkAnchor(ACCOUNT, 'head', { ...made, mac: 'not a mac' }, lookup)).toMatchObject({ reason: 'anchor_moved' });
    // Cut short in the database: named as moved, not a crash of `audit verify`.
    expect(checkAnchor(ACCOUNT, 'head', { ...made, mac: made.mac!.slice(0, -2) }, lookup)).toEqual({ reason: 'anchor_moved', kind: 'head', seq: 5 });
  });

  it('name their key only in their own form (v1, a key id, the MAC): anything else is not a MAC', () => {
    expect(anchorMacKeyId(`v1:${KEY.keyId}:${'0'.repeat(64)}`)).toBe(KEY.keyId);
    expect(anchorMacKeyId(`v2:${KEY.keyId}:${'0'.repeat(64)}`)).toBeNull();
    expect(anchorMacKeyId(`v1::${'0'.repeat(64)}`)).toBeNull();
    expect(anchorMacKeyId(`v1:${KEY.keyId}`)).toBeNull();
    expect(anchorMacKeyId(`v1:${KEY.keyId}:${'0'.repeat(64)}:extra`)).toBeNull();
    expect(anchorMacKeyId(`x:${KEY.keyId}:${'0'.repeat(64)}:extra`)).toBeNull();
  });

  it('report a missing MAC, a key not held, and a move found earlier', () => {
    expect(checkAnchor(ACCOUNT, 'pruned', { seq: 0, hash: GENESIS_HASH, mac: null, brokenAt: null }, lookup)).toEqual({ reason: 'anchor_missing', kind: 'pruned', seq: 0 });
    const unknown = { keyId: 'cccccccccccc', key: Buffer.alloc(32, 3) };
    expect(checkAnchor(ACCOUNT, 'head', record(5, HASH_5, null, unknown), lookup)).toEqual({ reason: 'anchor_key_unavailable', kind: 'head', seq: 5, keyId: unknown.keyId });
    expect(checkAnchor(ACCOUNT, 'head', record(5, HASH_5, 4), lookup)).toEqual({ reason: 'anchor_moved_before', kind: 'head', seq: 5, brokenAt: 4 });
  });

  it('a move by the service keeps a move found before it', () => {
    expect(brokenAtOnMove(ACCOUNT, 'head', record(4, HASH_4), lookup)).toBeNull();
    expect(brokenAtOnMove(ACCOUNT, 'head', { ...record(5, HASH_5), seq: 4, hash: HASH_4 }, lookup)).toBe(4);
    expect(brokenAtOnMove(ACCOUNT, 'head', { seq: 4, hash: HASH_4, mac: null, brokenAt: null }, lookup)).toBe(4);
    expect(brokenAtOnMove(ACCOUNT, 'head', record(7, HASH_5, 3), lookup)).toBe(3);
    // A MAC naming a key not held is not trusted: else naming an unknown key would launder a move.
    expect(brokenAtOnMove(ACCOUNT, 'head', record(4, HASH_4, null, { keyId: 'cccccccccccc', key: Buffer.alloc(32, 3) }), lookup)).toBe(4);
  });

  it('describes each break naming the record', () => {
    expect(describeAnchorBreak({ reason: 'anchor_moved', kind: 'head', seq: 4 })).toBe('its head (#4): moved in the database (its MAC does not match what it holds)');
    expect(describeAnchorBreak({ reason: 'anchor_missing', kind: 'pruned', seq: 2 })).toBe('its pruning anchor (#2): its MAC was removed in the database');
    expect(describeAnchorBreak({ reason: 'anchor_moved_before', kind: 'head', seq: 6, brokenAt: 4 })).toMatch(/^its head \(#6\): had been moved in the database when it stood at #4/);
    expect(describeAnchorBreak({ reason: 'anchor_key_unavailable', kind: 'head', seq: 1, keyId: 'cccccccccccc' })).toMatch(/cannot be checked: .*key of id cccccccccccc/);
    expect(describeAnchorBreak({ reason: 'chain_row_missing', kind: 'head', seq: 0 })).toMatch(/head row was deleted/);
  });
});
