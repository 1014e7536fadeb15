/**
 * The backup file's frame, without files: a frame reads back as written whatever its entries hold,
 * and a frame cut, extended or damaged anywhere is refused with a reason naming what is wrong; the
 * first backups' layout (MOSBACKUP, a header line, a 78-byte checksum line) reads too.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FrameError, entryHead, frameHead, frameTrailer, parseFrame, type FrameHmac } from '../../../../src/store/sqljs/backupFormat.ts';

const SHA = 'ab'.repeat(32);
const HMAC: FrameHmac = { alg: 'HMAC-SHA256', keyId: '0123456789abcdef', value: 'cd'.repeat(32) };

interface Entry {
  kind: string;
  name: string;
  content: Buffer;
}

const ENTRIES: Entry[] = [
  { kind: 'database', name: 'snapshot.db', content: Buffer.from('SQLite format 3\0\n\xff') },
  { kind: 'document', name: 'documents/doc-é', content: Buffer.alloc(0) },
  { kind: 'document', name: 'documents/doc-2', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0a]) },
];

/** The covered part of a frame: head and entries. */
function body(entries: Entry[] = ENTRIES, header: Record<string, unknown> = { kind: 'backup', format: 2, entries: entries.length }): Buffer {
  return Buffer.concat([frameHead(header as Record<string, unknown> & { entries: number }), ...entries.flatMap((e) => [entryHead(e.kind, e.name, e.content.length), e.content])]);
}

const whole = (hmac: FrameHmac | null = null) => Buffer.concat([body(), frameTrailer(SHA, hmac)]);

/** A trailer of any JSON text, its length in front. */
function rawTrailer(json: string): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(Buffer.byteLength(json));
  return Buffer.concat([length, Buffer.from(json)]);
}

const refusal = (data: Buffer) => {
  try {
    parseFrame(data);
  } catch (err) {
    expect(err).toBeInstanceOf(FrameError);
    expect((err as Error).name).toBe('FrameError');
    return (err as Error).message;
  }
  throw new Error('the frame was read');
};

describe('a backup frame', () => {
  it('reads back its header, its entries byte for byte, its checksum and HMAC, and what they cover', () => {
    const parsed = parseFrame(whole(HMAC));
    expect(parsed).toEqual({ layout: 2, header: { kind: 'backup', format: 2, entries: 3 }, entries: ENTRIES, sha256: SHA, hmac: HMAC, covered: body() });
    expect(parseFrame(whole()).hmac).toBeNull();
    expect(JSON.parse(frameTrailer(SHA, null).subarray(4).toString())).toEqual({ sha256: SHA });
    expect(parseFrame(Buffer.concat([body([]), frameTrailer(SHA, null)])).entries).toEqual([]);
  });

  it('lays out its head and entry heads as documented: magic, version 1, lengths big-endian', () => {
    const head = frameHead({ kind: 'backup', entries: 0 });
    expect(head.subarray(0, 8).toString('latin1')).toBe('MOSFRAME');
    expect(head.readUInt16BE(8)).toBe(1);
    expect(head.readUInt32BE(10)).toBe(head.length - 14);
    expect(JSON.parse(head.subarray(14).toString('utf8'))).toEqual({ kind: 'backup', entries: 0 });
    const entry = entryHead('document', 'documents/é', 258);
    expect(entry.readUInt8(0)).toBe(8);
    expect(entry.subarray(1, 9).toString('ascii')).toBe('document');
    expect(entry.readUInt16BE(9)).toBe(Buffer.byteLength('documents/é'));
    expect(entry.subarray(11, 11 + 12).toString('utf8')).toBe('documents/é');
    expect(entry.readBigUInt64BE(23)).toBe(258n);
    expect(entry).toHaveLength(31);
  });

  it('takes kinds and names up to their length fields, and no entry of an impossible length', () => {
    expect(() => entryHead('k'.repeat(255), 'n'.repeat(0xffff), 0)).not.toThrow();
    expect(() => entryHead('k'.repeat(256), 'x', 0)).toThrow(new RangeError('entry x has too long a kind or name'));
    expect(() => entryHead('document', 'n'.repeat(0x10000), 0)).toThrow(RangeError);
    for (const length of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN]) {
      expect(() => entryHead('document', 'x', length), String(length)).toThrow(new RangeError(`entry x has no valid length (${length})`));
    }
  });
});

describe('a backup frame is refused, naming why', () => {
  it('of another format, or another frame version', () => {
    expect(refusal(Buffer.from('MOSARC1\nxxxxxxxxxxxxxxxxxxxx'))).toBe('it does not start as a backup of this service does');
    const v2 = whole();
    v2.writeUInt16BE(2, 8);
    expect(refusal(v2)).toBe('its frame is version 2; this version reads version 1');
  });

  it('cut short anywhere: in its head, its header, an entry, before or in its trailer', () => {
    const data = whole();
    const head = frameHead({ kind: 'backup', format: 2, entries: 3 });
    const firstEntry = head.length + entryHead(ENTRIES[0]!.kind, ENTRIES[0]!.name, 0).length;
    const cases: Array<[number, string]> = [
      [8, 'it is cut short (its header ends past the end of the file)'],
      [13, 'it is cut short (its header ends past the end of the file)'],
      [head.length - 1, 'it is cut short (its header ends past the end of the file)'],
      [head.length, 'it is cut short (entry 1 of 3 ends past the end of the file)'],
      [head.length + 1, 'it is cut short (entry 1 of 3 ends past the end of the file)'],
      [head.length + 10, 'it is cut short (entry 1 of 3 ends past the end of the file)'],
      [firstEntry - 1, 'it is cut short (entry 1 of 3 ends past the end of the file)'],
      [firstEntry + 3, 'it is cut short (entry 1 of 3, "snapshot.db", ends past the end of the file)'],
      [body().length, 'it is cut short (its trailer ends past the end of the file)'],
      [body().length + 3, 'it is cut short (its trailer ends past the end of the file)'],
      [data.length - 1, 'it is cut short (its trailer ends past the end of the file)'],
    ];
    for (const [length, reason] of cases) expect(refusal(data.subarray(0, length)), `cut at ${length}`).toBe(reason);
  });

  it('with a length past any header or trailer', () => {
    const header = whole();
    header.writeUInt32BE((1 << 24) + 1, 10);
    expect(refusal(header)).toBe('its header length is damaged');
    header.writeUInt32BE(1 << 24, 10);
    expect(refusal(header)).toBe('it is cut short (its header ends past the end of the file)');
    const trailer = whole();
    trailer.writeUInt32BE((1 << 24) + 1, body().length);
    expect(refusal(trailer)).toBe('its trailer length is damaged');
    trailer.writeUInt32BE(1 << 24, body().length);
    expect(refusal(trailer)).toBe('it is cut short (its trailer ends past the end of the file)');
  });

  it('extended past its trailer', () => {
    expect(refusal(Buffer.concat([whole(), Buffer.from('abc')]))).toBe('it has 3 bytes after its trailer');
  });

  it('whose header or trailer is not a JSON object', () => {
    const withHeaderText = (text: string) => {
      const json = Buffer.from(text);
      const fixed = frameHead({ entries: 0 }).subarray(0, 14);
      fixed.writeUInt32BE(json.length, 10);
      return Buffer.concat([fixed, json, frameTrailer(SHA, null)]);
    };
    expect(refusal(withHeaderText('{"entries":'))).toBe('its header is not valid JSON');
    for (const text of ['null', '[]', '3', '"entries"']) expect(refusal(withHeaderText(text)), text).toBe('its header is not a JSON object');
    expect(refusal(Buffer.concat([body(), rawTrailer('{"sha256"')]))).toBe('its trailer is not valid JSON');
    for (const text of ['null', `["${SHA}"]`]) expect(refusal(Buffer.concat([body(), rawTrailer(text)])), text).toBe('its trailer is not a JSON object');
  });

  it('whose header does not count its entries', () => {
    for (const entries of [-1, 1.5, '3', null, undefined]) {
      expect(refusal(Buffer.concat([body([], { kind: 'backup', entries }), frameTrailer(SHA, null)])), String(entries)).toBe('its header does not say how many entries it holds');
    }
  });

  it('whose checksum or HMAC is not one this service writes', () => {
    for (const sha256 of [undefined, 'AB'.repeat(32), 'ab'.repeat(31), `${SHA}0`, 7, [SHA]]) {
      expect(refusal(Buffer.concat([body(), rawTrailer(JSON.stringify({ sha256 }))])), String(sha256)).toBe('its checksum is damaged or missing');
    }
    const bad: unknown[] = [
      null,
      'hmac',
      { ...HMAC, alg: 'HMAC-SHA1' },
      { ...HMAC, keyId: 7 },
      { ...HMAC, keyId: '' },
      { ...HMAC, keyId: 'ABCDEF' },
      { ...HMAC, keyId: 'a'.repeat(65) },
      { ...HMAC, value: 'cd'.repeat(31) },
      { alg: HMAC.alg, keyId: HMAC.keyId },
    ];
    for (const hmac of bad) {
      expect(refusal(Buffer.concat([body(), rawTrailer(JSON.stringify({ sha256: SHA, hmac }))])), JSON.stringify(hmac)).toBe('its HMAC is not one this service writes');
    }
    const longest = { ...HMAC, keyId: 'a'.repeat(64) };
    expect(parseFrame(Buffer.concat([body(), rawTrailer(JSON.stringify({ sha256: SHA, hmac: { ...longest, extra: 1 } }))])).hmac).toEqual(longest);
  });
});

describe('a first-format backup', () => {
  /** MOSBACKUP\n, the header line, the entries' bytes, and the checksum line over what comes before it. */
  function legacy(entries: Array<{ kind: unknown; name: unknown; bytes: unknown }>, contents: Buffer[], trailer?: string): Buffer {
    const covered = Buffer.concat([Buffer.from('MOSBACKUP\n'), Buffer.from(`${JSON.stringify({ format: 1, lsn: 9, entries })}\n`), ...contents]);
    const sha = createHash('sha256').update(covered).digest('hex');
    return Buffer.concat([covered, Buffer.from(trailer ?? `{"sha256":"${sha}"}\n`)]);
  }
  const db = Buffer.from('SQLite format 3\0no newline at its end');
  const doc = Buffer.from('%PDF-1.4\n%%EOF\n');
  const listed = [
    { kind: 'database', name: 'snapshot.db', bytes: db.length },
    { kind: 'document', name: 'documents/doc-1', bytes: doc.length },
  ];

  it('reads by its lengths: the entries listed in its header line, its checksum line', () => {
    const data = legacy(listed, [db, doc]);
    const parsed = parseFrame(data);
    expect(parsed).toMatchObject({ layout: 1, header: { format: 1, lsn: 9, entries: 2 }, hmac: null, covered: data.subarray(0, data.length - 78) });
    expect(parsed.entries).toEqual([
      { kind: 'database', name: 'snapshot.db', content: db },
      { kind: 'document', name: 'documents/doc-1', content: doc },
    ]);
    expect(parsed.sha256).toBe(createHash('sha256').update(parsed.covered).digest('hex'));
    expect(parseFrame(legacy([], [])).entries).toEqual([]);
    const empty = parseFrame(legacy([listed[0]!, { kind: 'document', name: 'documents/doc-empty', bytes: 0 }], [db]));
    expect(empty.entries[1]).toEqual({ kind: 'document', name: 'documents/doc-empty', content: Buffer.alloc(0) });
  });

  it('is refused cut short, with its checksum line damaged, or entries that do not add up', () => {
    const data = legacy(listed, [db, doc]);
    expect(() => parseFrame(Buffer.from('MOSBACKUP\n{"format":1'))).toThrow(new FrameError('it is cut short (no checksum at its end)'));
    expect(() => parseFrame(Buffer.from(`MOSBACKUP\n{"format":1,"pad":"${'x'.repeat(100)}"}`))).toThrow(new FrameError('it is cut short (no checksum at its end)'));
    const headerEnd = data.indexOf(0x0a, 10);
    expect(() => parseFrame(data.subarray(0, headerEnd + 78))).toThrow(new FrameError('it is cut short (no checksum at its end)'));
    expect(() => parseFrame(data.subarray(0, data.length - 1))).toThrow(new FrameError('its checksum line is damaged or missing (the file is cut short or changed)'));
    expect(() => parseFrame(legacy(listed, [db, doc], `{"sha256":"${'A'.repeat(64)}"}\n`))).toThrow(new FrameError('its checksum line is damaged or missing (the file is cut short or changed)'));
    expect(() => parseFrame(legacy(listed, [db, doc, Buffer.from('x')]))).toThrow(new FrameError('its entries do not add up to its length'));
    expect(() => parseFrame(legacy(listed, [db]))).toThrow(new FrameError('its entries do not add up to its length'));
  });

  it('is refused when its header line is not an object listing entries a backup holds', () => {
    const covered = (line: string) => Buffer.concat([Buffer.from(`MOSBACKUP\n${line}\n`), Buffer.from(`{"sha256":"${'0'.repeat(64)}"}\n`)]);
    expect(() => parseFrame(covered('{"format":1,"entries":3}'))).toThrow(new FrameError('its header is incomplete'));
    expect(() => parseFrame(covered('[1]'))).toThrow(new FrameError('its header is not a JSON object'));
    const bad = [
      { kind: 7, name: 'snapshot.db', bytes: 1 },
      { kind: 'database', name: null, bytes: 1 },
      { kind: 'database', name: 'snapshot.db', bytes: -1 },
      { kind: 'database', name: 'snapshot.db', bytes: 1.5 },
      { kind: 'database', name: 'snapshot.db', bytes: '1' },
    ];
    for (const entry of bad) {
      expect(() => parseFrame(legacy([entry], [Buffer.from('x')])), JSON.stringify(entry)).toThrow(new FrameError(`its entry ${JSON.stringify(entry.name)} is not one a backup holds`));
    }
    expect(() => parseFrame(covered('{"entries":[null]}'))).toThrow(new FrameError('its entry undefined is not one a backup holds'));
  });
});
