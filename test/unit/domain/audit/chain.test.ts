import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  ChainVerifier,
  describeBreak,
  entryHash,
  GENESIS_HASH,
  type AuditEntry,
  type AuditEntryContent,
} from '../../../../src/domain/audit/chain.ts';
import { auditCsvHeader, auditCsvRow, recordedChange, withoutSecrets } from '../../../../src/domain/audit/entries.ts';

function content(seq: number, overrides: Partial<AuditEntryContent> = {}): AuditEntryContent {
  return {
    auditEventId: `aud-${String(seq).padStart(26, '0')}`,
    accountId: 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa',
    seq,
    occurredAt: `2026-11-21T18:30:0${seq % 10}.000Z`,
    actor: { type: 'apiKey', id: 'key-01jdz8k3n4q2v6x9b7c5t1r0aa', name: 'First admin key' },
    action: 'webhook.updated',
    target: { type: 'webhook', id: 'whk-01jdz8k3n4q2v6x9b7c5t1r0aa' },
    outcome: 'success',
    clientAddress: '127.0.0.1',
    userAgent: 'test',
    requestId: `req-${seq}`,
    change: { before: { enabled: true }, after: { enabled: false } },
    ...overrides,
  };
}

/** A chain of `n` entries starting after `anchor`. */
function chain(n: number, anchor = { seq: 0, hash: GENESIS_HASH }): AuditEntry[] {
  const entries: AuditEntry[] = [];
  let prevHash = anchor.hash;
  for (let i = 1; i <= n; i++) {
    const c = content(anchor.seq + i);
    const entry = { ...c, prevHash, hash: entryHash(c, prevHash) };
    entries.push(entry);
    prevHash = entry.hash;
  }
  return entries;
}

describe('canonicalJson', () => {
  it('orders keys at every depth, so the same content gives the same text however it was built', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('leaves out undefined members, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
  });

  it('writes undefined in an array, or alone, as null, as JSON does in arrays', () => {
    expect(canonicalJson([1, undefined, 'x'])).toBe('[1,null,"x"]');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('entryHash', () => {
  it('is a hex SHA-256 that changes with any field and with the previous hash', () => {
    const c = content(1);
    const h = entryHash(c, GENESIS_HASH);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(entryHash({ ...c }, GENESIS_HASH)).toBe(h);
    expect(entryHash(c, 'f'.repeat(64))).not.toBe(h);
    for (const changed of [
      { action: 'webhook.deleted' },
      { outcome: 'failure' as const },
      { actor: { ...c.actor, name: 'Other' } },
      { target: { type: 'webhook', id: 'whk-other' } },
      { clientAddress: '10.0.0.1' },
      { change: { before: { enabled: true }, after: { enabled: true } } },
      { seq: 2 },
      { occurredAt: '2026-11-21T18:30:09.000Z' },
    ]) {
      expect(entryHash({ ...c, ...changed }, GENESIS_HASH), JSON.stringify(changed)).not.toBe(h);
    }
  });
});

describe('ChainVerifier', () => {
  it('passes an intact chain checked in runs, and counts its entries', () => {
    const entries = chain(5);
    const verifier = new ChainVerifier({ seq: 0, hash: GENESIS_HASH });
    expect(verifier.check(entries.slice(0, 2))).toBeNull();
    expect(verifier.check(entries.slice(2))).toBeNull();
    expect(verifier.finish({ seq: 5, hash: entries[4]!.hash })).toBeNull();
    expect(verifier.entriesChecked).toBe(5);
  });

  it('names an entry whose content changed', () => {
    const entries = chain(4);
    entries[2] = { ...entries[2]!, action: 'apiKey.created' };
    const found = new ChainVerifier({ seq: 0, hash: GENESIS_HASH }).check(entries);
    expect(found).toEqual({ reason: 'content_changed', auditEventId: entries[2]!.auditEventId, seq: 3 });
    expect(describeBreak(found!)).toContain('content changed');
  });

  it('names the successor of a deleted entry as missing its predecessor', () => {
    const entries = chain(4);
    const found = new ChainVerifier({ seq: 0, hash: GENESIS_HASH }).check([entries[0]!, entries[2]!, entries[3]!]);
    expect(found).toEqual({ reason: 'missing_predecessor', auditEventId: entries[2]!.auditEventId, seq: 3, expectedSeq: 2 });
    expect(describeBreak(found!)).toContain('missing predecessor');
  });

  it('finds a rehashed entry too: its successor no longer follows it', () => {
    const entries = chain(3);
    const forged = { ...entries[1]!, action: 'apiKey.created' };
    forged.hash = entryHash(forged, forged.prevHash);
    const found = new ChainVerifier({ seq: 0, hash: GENESIS_HASH }).check([entries[0]!, forged, entries[2]!]);
    expect(found).toMatchObject({ reason: 'missing_predecessor', auditEventId: entries[2]!.auditEventId });
  });

  it('finds a deleted newest entry from the head', () => {
    const entries = chain(3);
    const verifier = new ChainVerifier({ seq: 0, hash: GENESIS_HASH });
    expect(verifier.check(entries.slice(0, 2))).toBeNull();
    expect(verifier.finish({ seq: 3, hash: entries[2]!.hash })).toEqual({ reason: 'missing_newest', expectedSeq: 3, lastSeq: 2 });
  });

  it('finds a gap in the seqs even when the entries after it were rehashed to follow one another', () => {
    const entries = chain(2);
    // Entry #2 deleted, and #3 written (hash and all) to follow #1 directly.
    const after = content(3);
    const forged = { ...after, prevHash: entries[0]!.hash, hash: entryHash(after, entries[0]!.hash) };
    expect(new ChainVerifier({ seq: 0, hash: GENESIS_HASH }).check([entries[0]!, forged])).toEqual({
      reason: 'missing_predecessor',
      auditEventId: forged.auditEventId,
      seq: 3,
      expectedSeq: 2,
    });
  });

  it('finds a head naming an entry other than the last one, by its seq or by its hash', () => {
    const entries = chain(3);
    const verifier = new ChainVerifier({ seq: 0, hash: GENESIS_HASH });
    expect(verifier.check(entries)).toBeNull();
    // The head's seq moved past the last entry, its hash left as it was.
    expect(verifier.finish({ seq: 5, hash: entries[2]!.hash })).toEqual({ reason: 'missing_newest', expectedSeq: 5, lastSeq: 3 });
    // The newest entry replaced by a forged one that follows the chain: the head still names the original.
    const forgedContent = content(3, { action: 'apiKey.created' });
    const forged = { ...forgedContent, prevHash: entries[1]!.hash, hash: entryHash(forgedContent, entries[1]!.hash) };
    const second = new ChainVerifier({ seq: 0, hash: GENESIS_HASH });
    expect(second.check([entries[0]!, entries[1]!, forged])).toBeNull();
    expect(second.finish({ seq: 3, hash: entries[2]!.hash })).toEqual({ reason: 'missing_newest', expectedSeq: 3, lastSeq: 3 });
  });

  it('starts from a retention anchor, and refuses a chain whose oldest kept entries were deleted past it', () => {
    const all = chain(6);
    const anchor = { seq: 2, hash: all[1]!.hash };
    expect(new ChainVerifier(anchor).check(all.slice(2))).toBeNull();
    expect(new ChainVerifier(anchor).check(all.slice(3))).toMatchObject({ reason: 'missing_predecessor', seq: 4, expectedSeq: 3 });
  });
});

describe('entries', () => {
  it('redacts members named like secrets at any depth', () => {
    expect(withoutSecrets({ secret: 'whsec_x', nested: [{ apiKey: 'mos_live_x', accountNumber: '123', name: 'ok' }], password: 'p' })).toEqual({
      secret: '[redacted]',
      nested: [{ apiKey: '[redacted]', accountNumber: '[redacted]', name: 'ok' }],
      password: '[redacted]',
    });
    expect(withoutSecrets({ totpSecret: 'JBSW', recoveryCodes: ['ABCD-EFGH'], scopes: { apiKeys: 'write', events: 'read' }, apiKeys: 'x' })).toEqual({
      totpSecret: '[redacted]',
      recoveryCodes: '[redacted]',
      scopes: { apiKeys: 'write', events: 'read' },
      apiKeys: '[redacted]',
    });
    expect(recordedChange(undefined)).toBeNull();
    expect(recordedChange({ after: { bankToken: 'bnk_tok_x' } })).toEqual({ before: null, after: { bankToken: '[redacted]' } });
  });

  it('writes CSV rows that quote commas and quotes and neutralise formulas', () => {
    const [entry] = chain(1);
    const row = auditCsvRow({ ...entry!, userAgent: '=cmd, "x"' });
    expect(auditCsvHeader().split(',')).toHaveLength(15);
    expect(row).toContain(`"'=cmd, ""x"""`);
    expect(row.endsWith('\r\n')).toBe(true);
  });
});
