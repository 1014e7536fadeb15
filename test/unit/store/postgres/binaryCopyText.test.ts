/**
 * The reader of a binary COPY of one text column (src/store/postgres/copyOut.ts): whatever the
 * chunks the socket delivers, it gives each row's value back to back, counts the rows, and
 * refuses a stream that is not one text column to the trailer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BinaryCopyText } from '../../../../src/store/postgres/copyOut.ts';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A binary COPY stream as PostgreSQL writes it: header (with an optional extension), rows, trailer. */
function copyStream(values: Array<Buffer | null>, options: { fields?: number; extension?: Buffer; trailer?: boolean } = {}): Buffer {
  const extension = options.extension ?? Buffer.alloc(0);
  const header = Buffer.alloc(8);
  header.writeInt32BE(0, 0);
  header.writeInt32BE(extension.length, 4);
  const parts = [SIGNATURE, header, extension];
  for (const value of values) {
    const frame = Buffer.alloc(6);
    frame.writeInt16BE(options.fields ?? 1, 0);
    frame.writeInt32BE(value === null ? -1 : value.length, 2);
    parts.push(frame);
    if (value !== null) parts.push(value);
  }
  if (options.trailer !== false) parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

/** Feeds `stream` cut at `cuts` (copies: the reader writes into the chunks it is given) and returns what it gave. */
function read(stream: Buffer, cuts: number[]): { bytes: Buffer; rows: number; reader: BinaryCopyText } {
  const reader = new BinaryCopyText();
  const out: Buffer[] = [];
  let rows = 0;
  let from = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < stream.length).sort((a, b) => a - b), stream.length]) {
    const piece = reader.take(Buffer.from(stream.subarray(from, cut)));
    out.push(piece.bytes);
    rows += piece.rows;
    from = cut;
  }
  return { bytes: Buffer.concat(out), rows, reader };
}

describe('BinaryCopyText', () => {
  it('gives the values back to back and counts the rows, however the stream is cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }), { maxLength: 30 }),
        fc.uint8Array({ maxLength: 8 }),
        fc.array(fc.nat(2000), { maxLength: 12 }),
        (lines, extension, cuts) => {
          const values = lines.map((line) => Buffer.from(line + '\r\n', 'utf8'));
          const { bytes, rows, reader } = read(copyStream(values, { extension: Buffer.from(extension) }), cuts);
          expect(bytes.equals(Buffer.concat(values))).toBe(true);
          expect(rows).toBe(values.length);
          expect(() => reader.finish()).not.toThrow();
        },
      ),
    );
  });

  it('takes a stream cut into single bytes', () => {
    const values = ['a,b\r\n', '"x"\r\n', ''].map((v) => Buffer.from(v));
    const stream = copyStream(values);
    const { bytes, rows } = read(stream, Array.from({ length: stream.length }, (_, i) => i));
    expect(bytes.toString()).toBe('a,b\r\n"x"\r\n');
    expect(rows).toBe(3);
  });

  it('refuses a stream that ends before its trailer', () => {
    const stream = copyStream([Buffer.from('a\r\n'), Buffer.from('b\r\n')], { trailer: false });
    const { reader } = read(stream, []);
    expect(() => reader.finish()).toThrow(/before its trailer/);
    const cut = new BinaryCopyText();
    cut.take(Buffer.from(stream.subarray(0, stream.length - 1)));
    expect(() => cut.finish()).toThrow(/before its trailer/);
  });

  it('refuses what is not one text column: NULL values, other field counts, another format, data after the trailer', () => {
    expect(() => new BinaryCopyText().take(copyStream([null]))).toThrow(/NULL/);
    expect(() => new BinaryCopyText().take(copyStream([Buffer.from('a')], { fields: 2 }))).toThrow(/2 fields/);
    expect(() => new BinaryCopyText().take(Buffer.from('a,b\nc,d\n\\.\n'.repeat(3)))).toThrow(/not a binary COPY/);
    expect(() => new BinaryCopyText().take(Buffer.concat([copyStream([]), Buffer.from([0])]))).toThrow(/after its trailer/);
    const ended = new BinaryCopyText();
    ended.take(copyStream([]));
    expect(() => ended.take(Buffer.from([0]))).toThrow(/after its trailer/);
  });
});
