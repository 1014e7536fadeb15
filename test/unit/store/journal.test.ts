import { crc32 } from 'node:zlib';
import fc from 'fast-check';
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

describe('journal encoding', () => {
  // The frame as it was first written (JSON.stringify of the whole record), kept as the reference:
  // journals written before and after must be the same bytes.
  function referenceFrame(record: JournalRecord): Buffer {
    const param = (v: unknown) =>
      v instanceof Uint8Array ? { b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') } : typeof v === 'number' && !Number.isFinite(v) ? { n: String(v) } : v;
    const ops = record.ops.map((op) => (op.kind === 'exec' ? { x: op.sql } : op.params.length ? { s: op.sql, p: op.params.map(param) } : { s: op.sql }));
    const payload = Buffer.from(JSON.stringify({ lsn: record.lsn, ops }), 'utf8');
    const frame = Buffer.alloc(8 + payload.length);
    frame.writeUInt32BE(payload.length, 0);
    frame.writeUInt32BE(crc32(payload), 4);
    payload.copy(frame, 8);
    return frame;
  }

  it('writes the same bytes as JSON.stringify of the record, for any statements and parameters', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.string({ unit: 'binary' }),
      fc.double(),
      fc.integer(),
      fc.uint8Array({ maxLength: 40 }),
    );
    const op = fc.oneof(
      fc.record({ kind: fc.constant('stmt' as const), sql: fc.oneof(fc.constantFrom('INSERT INTO t (a) VALUES (?)', 'UPDATE t SET a = ?\n  WHERE "b" = ?'), fc.string({ unit: 'binary' })), params: fc.array(value, { maxLength: 6 }) }),
      fc.record({ kind: fc.constant('exec' as const), sql: fc.string({ unit: 'binary' }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.array(op, { minLength: 1, maxLength: 5 }), (lsn, ops) => {
        const record = { lsn, ops } as JournalRecord;
        expect(encodeRecord(record).equals(referenceFrame(record))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });
});
