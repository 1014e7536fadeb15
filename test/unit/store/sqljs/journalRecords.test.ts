import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageWriteError, StoreCorruptionError, StoreUnavailableError } from '../../../../src/store/core/errors.ts';
import { Journal, recoverJournal } from '../../../../src/store/sqljs/journal.ts';
import { StatementNumbers, encodeRecord, parseJournal } from '../../../../src/store/sqljs/journalRecords.ts';
import type { JournalRecord } from '../../../../src/store/sqljs/journalRecords.ts';

const rec = (lsn: number): JournalRecord => ({
  lsn,
  ops: [
    { kind: 'stmt', sql: 'INSERT INTO t (a, b, c) VALUES (?, ?, ?)', params: [lsn, `text-${lsn}`, new Uint8Array([lsn, 0, 255])] },
    { kind: 'stmt', sql: 'DELETE FROM t WHERE a < 0', params: [] },
    { kind: 'exec', sql: 'CREATE TABLE x (a); CREATE TABLE y (b);' },
  ],
});

/** The frames of rec(lsn) for each lsn, as one journal file holds them (statements numbered across it). */
function journalOf(...lsns: number[]): Buffer {
  const numbers = new StatementNumbers();
  return Buffer.concat(
    lsns.map((lsn) => {
      const encoded = encodeRecord(rec(lsn), numbers);
      numbers.adopt(encoded.defines);
      return encoded.frame;
    }),
  );
}

/**
 * A record as replay binds it: JSON writes -0 as 0, and sql.js binds both as the integer 0, so
 * the database a journal rebuilds is the same either way.
 */
const asReplayed = (records: JournalRecord[]) =>
  records.map((r) => ({ ...r, ops: r.ops.map((op) => (op.kind === 'stmt' ? { ...op, params: op.params.map((v) => (Object.is(v, -0) ? 0 : v)) } : op)) }));

describe('journal framing', () => {
  it('round-trips records, including blobs and non-finite numbers', () => {
    const odd: JournalRecord = { lsn: 9, ops: [{ kind: 'stmt', sql: '?', params: [Number.NEGATIVE_INFINITY, null, '', new Uint8Array(0)] }] };
    const oddFrame = encodeRecord(odd, new StatementNumbers()).frame; // a journal reopened: numbering afresh
    const parsed = parseJournal(Buffer.concat([journalOf(1, 2), oddFrame]));
    expect(parsed.records).toEqual([rec(1), rec(2), odd]);
    expect(parsed.goodBytes).toBe(journalOf(1, 2).length + oddFrame.length);
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
  const value = fc.oneof(fc.constant(null), fc.string({ unit: 'binary' }), fc.double(), fc.integer(), fc.uint8Array({ maxLength: 40 }));
  const statement = fc.constantFrom('INSERT INTO quotes (id, a, b) VALUES (?, ?, ?)', 'UPDATE t SET a = ?\n  WHERE "b" = ?', 'DELETE FROM t', 'SELECT "é 😀"');
  const op = fc.oneof(
    fc.record({ kind: fc.constant('stmt' as const), sql: fc.oneof(statement, fc.string({ unit: 'binary' })), params: fc.array(value, { maxLength: 6 }) }),
    fc.record({ kind: fc.constant('exec' as const), sql: fc.string({ unit: 'binary' }) }),
  );

  /**
   * The frame of JSON.stringify({ lsn, ops }) with each statement op as the reference says:
   * `{s,p}`, as every journal was written before statements were numbered, or, `numbered`,
   * `{d,s,p}` for a statement's first op in the record and `{k,p}` for a repeat (a record that is
   * the first of its file).
   */
  function referenceFrame(record: JournalRecord, numbered: boolean): Buffer {
    const param = (v: unknown) =>
      v instanceof Uint8Array ? { b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') } : typeof v === 'number' && !Number.isFinite(v) ? { n: String(v) } : v;
    const seen = new Map<string, number>();
    const ops = record.ops.map((op) => {
      if (op.kind === 'exec') return { x: op.sql };
      const p = op.params.length ? { p: op.params.map(param) } : {};
      if (!numbered) return { s: op.sql, ...p };
      const n = seen.get(op.sql);
      if (n !== undefined) return { k: n, ...p };
      seen.set(op.sql, seen.size);
      return { d: seen.size - 1, s: op.sql, ...p };
    });
    const payload = Buffer.from(JSON.stringify({ lsn: record.lsn, ops }), 'utf8');
    const frame = Buffer.alloc(8 + payload.length);
    frame.writeUInt32BE(payload.length, 0);
    frame.writeUInt32BE(crc32(payload), 4);
    payload.copy(frame, 8);
    return frame;
  }

  it('writes the same bytes as JSON.stringify of the record, for any statements and parameters', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.array(op, { minLength: 1, maxLength: 5 }), (lsn, ops) => {
        const record = { lsn, ops } as JournalRecord;
        expect(encodeRecord(record, new StatementNumbers()).frame.equals(referenceFrame(record, true))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });

  it('reads journals written before statements were numbered', () => {
    fc.assert(
      fc.property(fc.array(fc.array(op, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }), (opLists) => {
        const records = opLists.map((ops, i) => ({ lsn: i + 1, ops }) as JournalRecord);
        expect(parseJournal(Buffer.concat(records.map((record) => referenceFrame(record, false)))).records).toEqual(asReplayed(records));
      }),
      { numRuns: 1_000 },
    );
  });

  it('names each statement by number after its first record in a file, and reads every record back, across restarts and reopened files', () => {
    // A step appends a record, restarts the numbering (a checkpoint's cut), or starts a new
    // StatementNumbers on the same file (a journal reopened after a crash).
    const step = fc.oneof(
      { weight: 8, arbitrary: fc.array(op, { minLength: 1, maxLength: 4 }).map((ops) => ({ ops })) },
      { weight: 1, arbitrary: fc.constant({ restart: true as const }) },
      { weight: 1, arbitrary: fc.constant({ reopen: true as const }) },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        let numbers = new StatementNumbers();
        const frames: Buffer[] = [];
        const records: JournalRecord[] = [];
        for (const s of steps) {
          if ('restart' in s) numbers.restart();
          else if ('reopen' in s) numbers = new StatementNumbers();
          else {
            const record = { lsn: records.length + 1, ops: s.ops } as JournalRecord;
            const encoded = encodeRecord(record, numbers);
            numbers.adopt(encoded.defines);
            frames.push(encoded.frame);
            records.push(record);
          }
        }
        const whole = Buffer.concat(frames);
        expect(parseJournal(whole).records).toEqual(asReplayed(records));
        expect(parseJournal(whole).goodBytes).toBe(whole.length);
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes a statement\'s text once per file: a repeated insert is a fraction of its first record', () => {
    const numbers = new StatementNumbers();
    const sql = 'INSERT INTO quotes (id, account_id, amount_cents, term_years, currency, interest_rate, apr) VALUES (?, ?, ?, ?, ?, ?, ?)';
    const record = (lsn: number): JournalRecord => ({ lsn, ops: [{ kind: 'stmt', sql, params: [`qte_${lsn}`, 'acc_1', 35_000_000, 30, 'USD', '6.125', '6.193'] }] });
    const first = encodeRecord(record(1), numbers);
    numbers.adopt(first.defines);
    const second = encodeRecord(record(2), numbers);
    expect(first.defines).toEqual([sql]);
    expect(second.defines).toEqual([]);
    expect(second.frame.length).toBeLessThan(first.frame.length - sql.length);
    expect(second.frame.subarray(8).toString()).toBe(`{"lsn":2,"ops":[{"k":0,"p":["qte_2","acc_1",35000000,30,"USD","6.125","6.193"]}]}`);
  });

  it('defines nothing for a record that is never appended: the next one defines the statement itself', () => {
    const numbers = new StatementNumbers();
    const sql = 'INSERT INTO t (a) VALUES (?)';
    encodeRecord({ lsn: 1, ops: [{ kind: 'stmt', sql, params: [1] }] }, numbers); // its COMMIT failed: not appended
    const next = encodeRecord({ lsn: 1, ops: [{ kind: 'stmt', sql, params: [2] }, { kind: 'stmt', sql, params: [3] }] }, numbers);
    expect(next.frame.subarray(8).toString()).toBe(`{"lsn":1,"ops":[{"d":0,"s":${JSON.stringify(sql)},"p":[2]},{"k":0,"p":[3]}]}`);
    expect(parseJournal(next.frame).records[0]!.ops).toEqual([
      { kind: 'stmt', sql, params: [2] },
      { kind: 'stmt', sql, params: [3] },
    ]);
  });

  it('refuses a record that names a statement its file never defined (a cut that kept too little, or damage)', () => {
    const numbers = new StatementNumbers();
    const first = encodeRecord(rec(1), numbers);
    numbers.adopt(first.defines);
    const second = encodeRecord(rec(2), numbers);
    expect(() => parseJournal(second.frame)).toThrow(StoreCorruptionError);
    expect(() => parseJournal(second.frame)).toThrow(/cannot be decoded/);
    expect(parseJournal(Buffer.concat([first.frame, second.frame])).records).toEqual([rec(1), rec(2)]);
  });
});

/** One frame around `payload` (any text), with its true length and checksum. */
function frameOf(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt32BE(body.length, 0);
  header.writeUInt32BE(crc32(body), 4);
  return Buffer.concat([header, body]);
}

describe('journal framing: what is a record, a torn tail, or damage', () => {
  it('a record whose checksum holds but whose content is no record is corruption, with what was wrong as its cause', () => {
    for (const [payload, cause] of [
      ['{"lsn":1.5,"ops":[]}', 'malformed record'],
      ['{"lsn":1,"ops":{}}', 'malformed record'],
      ['{"lsn":1,"ops":[{"d":1.5,"s":"SELECT 1"}]}', 'malformed statement number'],
      ['{"lsn":1,"ops":[{"p":[1]}]}', 'malformed op'],
      ['{"lsn":1,"ops":[{"k":3,"p":[1]}]}', 'statement 3 is used before the journal defines it'],
    ] as const) {
      const error = (() => {
        try {
          parseJournal(Buffer.concat([journalOf(1), frameOf(payload)]), '/data/journal.log');
        } catch (err) {
          return err as StoreCorruptionError;
        }
        throw new Error(`${payload} was read`);
      })();
      expect(error, payload).toBeInstanceOf(StoreCorruptionError);
      expect(error.message).toBe(`/data/journal.log: record at byte ${journalOf(1).length} has a valid checksum but cannot be decoded`);
      expect((error.cause as Error).message, payload).toBe(cause);
    }
  });

  it('a frame whose checksum holds but whose payload does not start as a record is a torn tail, not a record', () => {
    const good = journalOf(1);
    const parsed = parseJournal(Buffer.concat([good, frameOf('not a record at all')]));
    expect(parsed.records.map((r) => r.lsn)).toEqual([1]);
    expect(parsed.goodBytes).toBe(good.length);
  });

  it('a last record written whole whose checksum fails is damage, refused with how to cut it off; a last record cut short is a torn tail', () => {
    const good = journalOf(1, 2);
    const last = frameOf(JSON.stringify({ lsn: 3, ops: [] }));
    const damaged = Buffer.from(last);
    damaged[last.length - 2]! ^= 0x01; // inside the payload, after its start
    expect(() => parseJournal(Buffer.concat([good, damaged]), '/data/journal.log')).toThrow(
      `/data/journal.log: the last record (bytes ${good.length} to ${good.length + last.length}) is complete but fails its checksum: it was written whole, so it ` +
        `was probably acknowledged, and it is damaged. Refusing to open. To start without it, keep a copy of the journal and cut it ` +
        `at byte ${good.length} (cp /data/journal.log /data/journal.log.bak && truncate -s ${good.length} /data/journal.log); see README "Recovering a data directory"`,
    );
    // Its checksum damaged instead: the same.
    const badChecksum = Buffer.from(last);
    badChecksum[5]! ^= 0x01;
    expect(() => parseJournal(Buffer.concat([good, badChecksum]))).toThrow(/^journal: the last record .* is complete but fails its checksum/);
    // One byte short of whole, or one byte past what its header says: a write cut short, or garbage after it.
    expect(parseJournal(Buffer.concat([good, damaged.subarray(0, damaged.length - 1)])).goodBytes).toBe(good.length);
    expect(parseJournal(Buffer.concat([good, damaged, Buffer.from([0])])).goodBytes).toBe(good.length);
    // A header that promises nothing (length 0) is no record either.
    expect(parseJournal(Buffer.concat([good, frameOf('')])).goodBytes).toBe(good.length);
  });

  it('damage followed by a valid record is refused with where each is and what to do', () => {
    const buf = journalOf(1, 2);
    buf.writeUInt8(buf.readUInt8(20) ^ 0x01, 20);
    expect(() => parseJournal(buf)).toThrow(
      `journal: damaged record at byte 0 is followed by a valid record at byte ${journalOf(1).length}; refusing to open ` +
        `(the records after it were acknowledged). Restore the data directory from a backup, or see README "Recovering a data directory"`,
    );
  });
});

describe('recoverJournal', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'journal-recover-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a journal that does not exist is an empty one that did not exist; one that cannot be read is an error', async () => {
    expect(await recoverJournal(join(dir, 'none.log'))).toEqual({ records: [], goodBytes: 0, tornBytes: 0, setAsidePath: null, existed: false });
    await mkdir(join(dir, 'a-directory.log'));
    await expect(recoverJournal(join(dir, 'a-directory.log'))).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('keeps a whole journal as it is; sets a torn tail aside (named by the time) before cutting it off', async () => {
    const whole = join(dir, 'whole.log');
    await writeFile(whole, journalOf(1, 2));
    expect(await recoverJournal(whole)).toMatchObject({ goodBytes: journalOf(1, 2).length, tornBytes: 0, setAsidePath: null, existed: true });
    expect((await readdir(dir)).filter((name) => name.startsWith('whole.log.damaged'))).toEqual([]);
    expect((await readFile(whole)).equals(journalOf(1, 2))).toBe(true);

    const torn = join(dir, 'torn.log');
    const tail = Buffer.from([0, 0, 0, 60, 0x7b, 0x22]);
    await writeFile(torn, Buffer.concat([journalOf(1), tail]));
    const recovered = await recoverJournal(torn, undefined, new Date('2026-11-21T18:00:00.123Z'));
    expect(recovered).toMatchObject({ goodBytes: journalOf(1).length, tornBytes: tail.length, existed: true, setAsidePath: `${torn}.damaged-2026-11-21T18-00-00-123Z` });
    expect(recovered.records.map((r) => r.lsn)).toEqual([1]);
    expect((await readFile(`${torn}.damaged-2026-11-21T18-00-00-123Z`)).equals(tail)).toBe(true);
    expect((await readFile(torn)).equals(journalOf(1))).toBe(true);
  });
});

describe('Journal', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'journal-file-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const record = (lsn: number): JournalRecord => ({ lsn, ops: [{ kind: 'stmt', sql: 'INSERT INTO t (a) VALUES (?)', params: [lsn] }] });

  it('appends records durably: each statement defined once per file, the bytes counted, and the file made 0600 even if it was not', async () => {
    const path = join(dir, 'appended.log');
    await writeFile(path, '', { mode: 0o644 });
    await chmod(path, 0o644);
    const journal = await Journal.open(path, 0, 0, { onFailure: () => {} });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const first = journal.encode(record(1));
    const pending = journal.append(1, first);
    expect(journal.pendingBytes).toBe(first.frame.length);
    await pending;
    const second = journal.encode(record(2));
    await journal.append(2, second);
    expect(journal.pendingBytes).toBe(0);
    expect(journal.bytes).toBe(first.frame.length + second.frame.length);
    expect(journal.durableLsn).toBe(2);
    expect(journal.failed).toBe(false);
    await journal.close();
    const text = (await readFile(path)).toString('utf8');
    expect(text.match(/"s":"INSERT INTO t/g)).toHaveLength(1); // the second record names it by number
    expect(text).toContain('{"k":0,"p":[2]}');
    expect(parseJournal(await readFile(path)).records).toEqual([record(1), record(2)]);
  });

  it('after a write fails: the waiters and every later append or flush are refused (by default as StoreUnavailableError), and onFailure is told once', async () => {
    const path = join(dir, 'failing.log');
    const failures: Error[] = [];
    let failNext = false;
    const faults = {
      beforeWrite() {
        if (failNext) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      },
    };
    const journal = await Journal.open(path, 0, 0, { onFailure: (err) => failures.push(err), faults });
    await journal.append(1, journal.encode(record(1)));
    failNext = true;
    const refused = await journal.append(2, journal.encode(record(2))).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toBe('store failed: a journal write could not be made durable');
    expect((refused as Error).cause).toBeInstanceOf(StorageWriteError);
    expect(journal.failed).toBe(true);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(StorageWriteError);
    failNext = false;
    await expect(journal.append(3, journal.encode(record(3)))).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(journal.flushed()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(failures).toHaveLength(1);
    expect(journal.durableLsn).toBe(1);
    await journal.close();
    expect(parseJournal(await readFile(path)).records).toEqual([record(1)]);
  });
});
