import { describe, expect, it } from 'vitest';
import { StoreCorruptionError } from '../../../src/store/engine/errors.ts';
import { encodeRecord, parseJournal } from '../../../src/store/engine/journal.ts';
import type { JournalRecord } from '../../../src/store/engine/journal.ts';

const rec = (lsn: number): JournalRecord => ({
  lsn,
  ops: [
    { kind: 'stmt', sql: 'INSERT INTO t (a, b, c) VALUES (?, ?, ?)', params: [lsn, `text-${lsn}`, new Uint8Array([lsn, 0, 255])] },
    { kind: 'stmt', sql: 'DELETE FROM t WHERE a < 0', params: [] },
    { kind: 'exec', sql: 'CREATE TABLE x (a); CREATE TABLE y (b);' },
  ],
});

const journalOf = (...lsns: number[]) => Buffer.concat(lsns.map((l) => encodeRecord(rec(l))));

describe('journal framing', () => {
  it('round-trips records, including blobs and non-finite numbers', () => {
    const odd: JournalRecord = { lsn: 9, ops: [{ kind: 'stmt', sql: '?', params: [Number.NEGATIVE_INFINITY, null, '', new Uint8Array(0)] }] };
    const parsed = parseJournal(Buffer.concat([journalOf(1, 2), encodeRecord(odd)]));
    expect(parsed.records).toEqual([rec(1), rec(2), odd]);
    expect(parsed.goodBytes).toBe(journalOf(1, 2).length + encodeRecord(odd).length);
  });

  it('stops at a torn tail at every possible cut point', () => {
    const full = journalOf(1, 2, 3);
    const twoRecords = journalOf(1, 2).length;
    for (let cut = twoRecords; cut < full.length; cut++) {
      const parsed = parseJournal(full.subarray(0, cut));
      expect(parsed.records.map((r) => r.lsn)).toEqual([1, 2]);
      expect(parsed.goodBytes).toBe(twoRecords);
    }
  });

  it('treats trailing zeros and random garbage as a torn tail', () => {
    const good = journalOf(1);
    expect(parseJournal(Buffer.concat([good, Buffer.alloc(8192)])).records).toHaveLength(1);
    const garbage = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919 + 13) % 256));
    expect(parseJournal(Buffer.concat([good, garbage])).goodBytes).toBe(good.length);
  });

  it('refuses a damaged record followed by a valid one', () => {
    for (const damage of [
      (b: Buffer) => b.writeUInt8(b.readUInt8(20) ^ 0x01, 20), // payload of record 1
      (b: Buffer) => b.writeUInt8(b.readUInt8(5) ^ 0x80, 5), // crc of record 1
      (b: Buffer) => b.writeUInt32BE(0xffffff, 0), // length of record 1
    ]) {
      const buf = journalOf(1, 2, 3);
      damage(buf);
      expect(() => parseJournal(buf)).toThrow(StoreCorruptionError);
    }
  });
});
