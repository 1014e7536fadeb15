/**
 * The frame of a backup file, pure (no files): every part is found by a length written before it,
 * never by searching for a byte, so entries may hold any bytes (a PNG, a SQLite image) and a file
 * cut anywhere is told apart from a whole one. A snapshot file of a continuous archive can use the
 * same frame with a header of its own `kind`.
 *
 *   magic     8 bytes   `MOSFRAME`
 *   version   u16       the frame's layout (1); the header's `format` versions its content
 *   header    u32 H, then H bytes of JSON: { kind, format, …, entries: N }
 *   N times   u8 K, K bytes of kind (ASCII) | u16 M, M bytes of name (UTF-8) | u64 L, L bytes of content
 *   trailer   u32 T, then T bytes of JSON: { sha256, hmac? } over every byte before the trailer's length
 *   end of file
 *
 * Integers are big-endian. `hmac` is { alg: 'HMAC-SHA256', keyId, value }: keyed with a key
 * derived from the sealing key (backupKey.ts), it proves who wrote the file, where the SHA-256
 * only proves it was not damaged (anyone who edits the file can compute a new SHA-256).
 *
 * The first backups (format 1, `MOSBACKUP\n`, a JSON header line, the entries, and the 78-byte
 * trailer `{"sha256":"<64 hex>"}\n`) are read by parseLegacyFrame: its header line holds no newline
 * (JSON.stringify writes none) and its trailer has a fixed length, so it too is read by lengths.
 */

const FRAME_MAGIC = 'MOSFRAME';
const FRAME_VERSION = 1;
const LEGACY_MAGIC = 'MOSBACKUP\n';
const LEGACY_TRAILER_BYTES = 78;
const LEGACY_TRAILER = /^\{"sha256":"([0-9a-f]{64})"\}\n$/;
/** No header or trailer is near this; a length past it is damage, not a large backup. */
const MAX_JSON_BYTES = 1 << 24;

interface FrameEntry {
  kind: string;
  name: string;
  content: Buffer;
}

export interface FrameHmac {
  alg: 'HMAC-SHA256';
  keyId: string;
  value: string;
}

export interface ParsedFrame {
  /** 1 for the first backups (no frame, a newline-ended header), 2 for this frame. */
  layout: 1 | 2;
  header: Record<string, unknown>;
  entries: FrameEntry[];
  sha256: string;
  hmac: FrameHmac | null;
  /** The bytes the checksum and the HMAC cover. */
  covered: Buffer;
}

/** A file that is not a whole frame: the reason names what is wrong. */
export class FrameError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'FrameError';
  }
}

/** The bytes before the first entry. */
export function frameHead(header: Record<string, unknown> & { entries: number }): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const fixed = Buffer.alloc(FRAME_MAGIC.length + 2 + 4);
  fixed.write(FRAME_MAGIC, 0, 'ascii');
  fixed.writeUInt16BE(FRAME_VERSION, FRAME_MAGIC.length);
  fixed.writeUInt32BE(json.length, FRAME_MAGIC.length + 2);
  return Buffer.concat([fixed, json]);
}

/** The bytes before an entry's content of `length` bytes. */
export function entryHead(kind: string, name: string, length: number): Buffer {
  const kindBytes = Buffer.from(kind, 'ascii');
  const nameBytes = Buffer.from(name, 'utf8');
  if (kindBytes.length > 0xff || nameBytes.length > 0xffff) throw new RangeError(`entry ${name} has too long a kind or name`);
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`entry ${name} has no valid length (${length})`);
  const out = Buffer.alloc(1 + kindBytes.length + 2 + nameBytes.length + 8);
  let at = out.writeUInt8(kindBytes.length, 0);
  at += kindBytes.copy(out, at);
  at = out.writeUInt16BE(nameBytes.length, at);
  at += nameBytes.copy(out, at);
  out.writeBigUInt64BE(BigInt(length), at);
  return out;
}

/** The last bytes of the file. */
export function frameTrailer(sha256: string, hmac: FrameHmac | null): Buffer {
  const json = Buffer.from(JSON.stringify(hmac ? { sha256, hmac } : { sha256 }), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([length, json]);
}

function jsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new FrameError(`its ${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FrameError(`its ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

const isSha256 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

function readHmac(value: unknown): FrameHmac | null {
  if (value === undefined) return null;
  const h = value as Partial<FrameHmac> | null;
  if (typeof h !== 'object' || h === null || h.alg !== 'HMAC-SHA256' || typeof h.keyId !== 'string' || !/^[0-9a-f]{1,64}$/.test(h.keyId) || !isSha256(h.value)) {
    throw new FrameError('its HMAC is not one this service writes');
  }
  return { alg: h.alg, keyId: h.keyId, value: h.value };
}

/** Reads a frame (or a first-format backup) by its lengths alone; throws FrameError naming what is wrong. */
export function parseFrame(data: Buffer): ParsedFrame {
  if (data.subarray(0, LEGACY_MAGIC.length).toString('latin1') === LEGACY_MAGIC) return parseLegacyFrame(data);
  if (data.subarray(0, FRAME_MAGIC.length).toString('latin1') !== FRAME_MAGIC) throw new FrameError('it does not start as a backup of this service does');
  let at = FRAME_MAGIC.length;
  const need = (bytes: number, what: string) => {
    if (at + bytes > data.length) throw new FrameError(`it is cut short (${what} ends past the end of the file)`);
  };
  need(6, 'its header');
  const version = data.readUInt16BE(at);
  if (version !== FRAME_VERSION) throw new FrameError(`its frame is version ${version}; this version reads version ${FRAME_VERSION}`);
  const headerBytes = data.readUInt32BE(at + 2);
  at += 6;
  if (headerBytes > MAX_JSON_BYTES) throw new FrameError('its header length is damaged');
  need(headerBytes, 'its header');
  const header = jsonObject(data.subarray(at, at + headerBytes), 'header');
  at += headerBytes;
  const count = header.entries;
  if (!Number.isSafeInteger(count) || (count as number) < 0) throw new FrameError('its header does not say how many entries it holds');
  const entries: FrameEntry[] = [];
  for (let i = 0; i < (count as number); i++) {
    const what = `entry ${i + 1} of ${count as number}`;
    need(1, what);
    const kindBytes = data.readUInt8(at);
    need(1 + kindBytes + 2, what);
    const kind = data.subarray(at + 1, at + 1 + kindBytes).toString('latin1');
    at += 1 + kindBytes;
    const nameBytes = data.readUInt16BE(at);
    need(2 + nameBytes + 8, what);
    const name = data.subarray(at + 2, at + 2 + nameBytes).toString('utf8');
    at += 2 + nameBytes;
    const length = data.readBigUInt64BE(at);
    at += 8;
    if (length > BigInt(data.length - at)) throw new FrameError(`it is cut short (${what}, ${JSON.stringify(name)}, ends past the end of the file)`);
    entries.push({ kind, name, content: data.subarray(at, at + Number(length)) });
    at += Number(length);
  }
  const covered = data.subarray(0, at);
  need(4, 'its trailer');
  const trailerBytes = data.readUInt32BE(at);
  at += 4;
  if (trailerBytes > MAX_JSON_BYTES) throw new FrameError('its trailer length is damaged');
  need(trailerBytes, 'its trailer');
  const trailer = jsonObject(data.subarray(at, at + trailerBytes), 'trailer');
  at += trailerBytes;
  if (at !== data.length) throw new FrameError(`it has ${data.length - at} bytes after its trailer`);
  if (!isSha256(trailer.sha256)) throw new FrameError('its checksum is damaged or missing');
  return { layout: 2, header, entries, sha256: trailer.sha256, hmac: readHmac(trailer.hmac), covered };
}

/** The first backups' layout (see the top of this file). */
function parseLegacyFrame(data: Buffer): ParsedFrame {
  const headerEnd = data.indexOf(0x0a, LEGACY_MAGIC.length); // a JSON.stringify line: its only newline ends it
  if (headerEnd < 0 || data.length < headerEnd + 1 + LEGACY_TRAILER_BYTES) throw new FrameError('it is cut short (no checksum at its end)');
  const header = jsonObject(data.subarray(LEGACY_MAGIC.length, headerEnd), 'header');
  const trailer = LEGACY_TRAILER.exec(data.subarray(data.length - LEGACY_TRAILER_BYTES).toString('latin1'));
  if (!trailer) throw new FrameError('its checksum line is damaged or missing (the file is cut short or changed)');
  const covered = data.subarray(0, data.length - LEGACY_TRAILER_BYTES);
  const listed = header.entries as Array<{ kind?: unknown; name?: unknown; bytes?: unknown }>;
  if (!Array.isArray(listed)) throw new FrameError('its header is incomplete');
  const entries: FrameEntry[] = [];
  let at = headerEnd + 1;
  for (const entry of listed) {
    const bytes = entry?.bytes;
    if (typeof entry?.kind !== 'string' || typeof entry.name !== 'string' || !Number.isSafeInteger(bytes) || (bytes as number) < 0) {
      throw new FrameError(`its entry ${JSON.stringify(entry?.name)} is not one a backup holds`);
    }
    if (at + (bytes as number) > covered.length) throw new FrameError('its entries do not add up to its length');
    entries.push({ kind: entry.kind, name: entry.name, content: covered.subarray(at, at + (bytes as number)) });
    at += bytes as number;
  }
  if (at !== covered.length) throw new FrameError('its entries do not add up to its length');
  return { layout: 1, header: { ...header, entries: entries.length }, entries, sha256: trailer[1]!, hmac: null, covered };
}
