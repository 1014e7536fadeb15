/**
 * The journal's records: how a committed write transaction is encoded into a frame and how a
 * journal image is parsed back into records (journal.ts writes and recovers the file).
 *
 * Frame: [u32 BE payload length][u32 BE crc32(payload)][payload], payload = UTF-8 JSON
 * `{"lsn":N,"ops":[...]}`. An op is one prepared statement with its parameters, or `{"x":sql}`
 * (multi-statement text run with `db.exec`, used for migrations). A statement's text is written
 * once per journal file: its first op there is `{"d":n,"s":sql,"p":[params]}`, defining statement n
 * of the file, and later ones `{"k":n,"p":[params]}` (a quote's insert is 430 of its 900 bytes
 * otherwise). Reading a file in order, a `d` holds until another `d` of the same n (a journal
 * reopened after a crash, or restarted at a checkpoint's cut, numbers its statements afresh). The
 * older `{"s":sql,"p":[params]}` op is still read. Params that JSON cannot carry are tagged: a
 * Uint8Array is `{"b":base64}`, a non-finite number `{"n":"NaN"|"Infinity"|"-Infinity"}`.
 */
import { crc32 } from 'node:zlib';
import { StoreCorruptionError } from '../core/errors.ts';
import type { SqlValue } from '../store.ts';
export type JournalOp =
  | { kind: 'stmt'; sql: string; params: SqlValue[] }
  | { kind: 'exec'; sql: string };

export interface JournalRecord {
  lsn: number;
  ops: JournalOp[];
}

const HEADER_BYTES = 8;
const PAYLOAD_PREFIX = Buffer.from('{"lsn":');

type EncodedParam = string | number | null | { b: string } | { n: string };
interface EncodedOp {
  s?: string;
  d?: number;
  k?: number;
  p?: EncodedParam[];
  x?: string;
}

function encodeParam(v: SqlValue): EncodedParam {
  if (v instanceof Uint8Array) return { b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  if (typeof v === 'number' && !Number.isFinite(v)) return { n: String(v) };
  return v;
}

function decodeParam(v: EncodedParam): SqlValue {
  if (v === null || typeof v !== 'object') return v;
  if ('b' in v) return new Uint8Array(Buffer.from(v.b, 'base64'));
  return Number(v.n);
}

/** JSON text of a statement's SQL, by SQL: the same few statements are journalled over and over. */
const sqlJson = new Map<string, string>();
const SQL_JSON_MAX = 1024;

function quotedSql(sql: string): string {
  let quoted = sqlJson.get(sql);
  if (quoted === undefined) {
    quoted = JSON.stringify(sql);
    if (sqlJson.size >= SQL_JSON_MAX) sqlJson.clear();
    sqlJson.set(sql, quoted);
  }
  return quoted;
}

/** True when every parameter is one JSON carries as it is (no bytes, no non-finite number). */
function plainParams(params: SqlValue[]): boolean {
  for (const v of params) if (v instanceof Uint8Array || (typeof v === 'number' && !Number.isFinite(v))) return false;
  return true;
}

/**
 * The statements a journal file has defined so far, by text (see the frame format above). Only
 * records that reach the file count: encodeRecord proposes definitions, and the journal adopts
 * them when the record is appended (a transaction whose COMMIT fails after encoding defines nothing).
 */
export class StatementNumbers {
  private readonly numbers = new Map<string, number>();

  numberOf(sql: string): number | undefined {
    return this.numbers.get(sql);
  }

  get size(): number {
    return this.numbers.size;
  }

  /** The statements a record appended to the file defined, in the order it numbered them. */
  adopt(defined: readonly string[]): void {
    for (const sql of defined) this.numbers.set(sql, this.numbers.size);
  }

  /** Numbers afresh from the next record on: an emptied file, or a cut that keeps only what follows. */
  restart(): void {
    this.numbers.clear();
  }
}

/** A record encoded and framed, with the statements it defines for its file. */
export interface EncodedRecord {
  frame: Buffer;
  defines: string[];
}

const NO_DEFINITIONS: string[] = [];

/**
 * Encodes and frames one record for a file whose statements so far are `numbers`: the bytes of
 * `JSON.stringify({ lsn, ops })` with each op as `{x}`, `{d,s,p}` or `{k,p}` (`p` left out when
 * there are no parameters), written straight into the frame (the quoted SQL of each statement
 * text kept, the parameters encoded only when they need it). Encoding was 4 % of a quote's CPU.
 */
export function encodeRecord(record: JournalRecord, numbers: StatementNumbers): EncodedRecord {
  let text = `{"lsn":${JSON.stringify(record.lsn)},"ops":[`;
  let defines = NO_DEFINITIONS;
  for (let i = 0; i < record.ops.length; i++) {
    const op = record.ops[i]!;
    if (i > 0) text += ',';
    if (op.kind === 'exec') {
      text += `{"x":${quotedSql(op.sql)}}`;
      continue;
    }
    let n = numbers.numberOf(op.sql);
    if (n === undefined) {
      const earlier = defines.indexOf(op.sql); // defined by an earlier op of this record
      if (earlier >= 0) n = numbers.size + earlier;
    }
    if (n !== undefined) {
      text += `{"k":${n}`;
    } else {
      if (defines === NO_DEFINITIONS) defines = [];
      text += `{"d":${numbers.size + defines.length},"s":${quotedSql(op.sql)}`;
      defines.push(op.sql);
    }
    text += op.params.length === 0 ? '}' : `,"p":${JSON.stringify(plainParams(op.params) ? op.params : op.params.map(encodeParam))}}`;
  }
  text += ']}';
  const length = Buffer.byteLength(text, 'utf8');
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length);
  frame.write(text, HEADER_BYTES, 'utf8');
  frame.writeUInt32BE(length, 0);
  frame.writeUInt32BE(crc32(frame.subarray(HEADER_BYTES)), 4);
  return { frame, defines };
}

/** Decodes one record's payload; `defined` holds the statements its file defined before it, and takes the ones it defines. */
function decodePayload(payload: Buffer, defined: Map<number, string>): JournalRecord {
  const raw = JSON.parse(payload.toString('utf8')) as { lsn: unknown; ops: unknown };
  if (!Number.isSafeInteger(raw.lsn) || !Array.isArray(raw.ops)) throw new Error('malformed record');
  const ops = (raw.ops as EncodedOp[]).map((op): JournalOp => {
    if (typeof op.x === 'string') return { kind: 'exec', sql: op.x };
    const params = (op.p ?? []).map(decodeParam);
    if (typeof op.s === 'string') {
      if (op.d !== undefined) {
        if (!Number.isSafeInteger(op.d)) throw new Error('malformed statement number');
        defined.set(op.d, op.s);
      }
      return { kind: 'stmt', sql: op.s, params };
    }
    if (op.k !== undefined) {
      const sql = defined.get(op.k);
      if (sql === undefined) throw new Error(`statement ${op.k} is used before the journal defines it`);
      return { kind: 'stmt', sql, params };
    }
    throw new Error('malformed op');
  });
  return { lsn: raw.lsn as number, ops };
}

/** The payload of a structurally valid frame at `off` (length fits, CRC matches), else null. */
function frameAt(buf: Buffer, off: number): Buffer | null {
  if (buf.length - off < HEADER_BYTES) return null;
  const len = buf.readUInt32BE(off);
  if (len === 0 || len > buf.length - off - HEADER_BYTES) return null;
  const payload = buf.subarray(off + HEADER_BYTES, off + HEADER_BYTES + len);
  if (!payload.subarray(0, PAYLOAD_PREFIX.length).equals(PAYLOAD_PREFIX)) return null;
  return crc32(payload) === buf.readUInt32BE(off + 4) ? payload : null;
}

/**
 * A record whose header and payload are all there (it ends exactly at the end of the file, and its
 * payload starts like a record) but whose checksum fails: damage to a written record, not a write
 * cut short by a crash (that leaves a record shorter than its header says).
 */
function isCompleteDamagedRecord(buf: Buffer, off: number): boolean {
  if (buf.length - off < HEADER_BYTES) return false;
  const len = buf.readUInt32BE(off);
  if (len === 0 || off + HEADER_BYTES + len !== buf.length) return false;
  return buf.subarray(off + HEADER_BYTES, off + HEADER_BYTES + PAYLOAD_PREFIX.length).equals(PAYLOAD_PREFIX);
}

export interface ParsedJournal {
  records: JournalRecord[];
  /** Length of the valid prefix; anything after it is a torn tail. */
  goodBytes: number;
}

/**
 * Parses a journal image. A bad frame with no valid frame anywhere after it is a torn tail
 * (the crash interrupted an unacknowledged write) and ends the journal; a bad frame
 * followed by a valid one is corruption of acknowledged data and throws.
 */
export function parseJournal(buf: Buffer, path = 'journal'): ParsedJournal {
  const records: JournalRecord[] = [];
  const defined = new Map<number, string>();
  let off = 0;
  while (off < buf.length) {
    const payload = frameAt(buf, off);
    if (payload === null) {
      for (let probe = off + 1; probe + HEADER_BYTES < buf.length; probe++) {
        if (frameAt(buf, probe) !== null) {
          throw new StoreCorruptionError(
            `${path}: damaged record at byte ${off} is followed by a valid record at byte ${probe}; refusing to open ` +
              `(the records after it were acknowledged). Restore the data directory from a backup, or see README "Recovering a data directory"`,
          );
        }
      }
      if (isCompleteDamagedRecord(buf, off)) {
        throw new StoreCorruptionError(
          `${path}: the last record (bytes ${off} to ${buf.length}) is complete but fails its checksum: it was written whole, so it ` +
            `was probably acknowledged, and it is damaged. Refusing to open. To start without it, keep a copy of the journal and cut it ` +
            `at byte ${off} (cp ${path} ${path}.bak && truncate -s ${off} ${path}); see README "Recovering a data directory"`,
        );
      }
      break;
    }
    try {
      records.push(decodePayload(payload, defined));
    } catch (err) {
      throw new StoreCorruptionError(`${path}: record at byte ${off} has a valid checksum but cannot be decoded`, { cause: err });
    }
    off += HEADER_BYTES + payload.length;
  }
  return { records, goodBytes: off };
}
