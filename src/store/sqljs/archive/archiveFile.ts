/**
 * One file of the continuous archive (ARCHIVE_DIR): a journal segment or a checkpoint's snapshot,
 * framed so that a reader finds every part by lengths written in the file and never by searching
 * for a byte (a database image or a journal frame may hold any byte):
 *
 *   "MOSARC1\n"                  8 bytes, the format
 *   header length                4 bytes, big-endian
 *   header                       JSON, UTF-8 (ArchiveHeader)
 *   body length                  8 bytes, big-endian
 *   body                         the journal frames, or the SQLite image
 *   SHA-256                      32 bytes, over everything before it
 *
 * A file is whole or refused: a cut, an extra byte or one changed byte fails the length or the
 * checksum check, with a reason naming which.
 */
import { createHash } from 'node:crypto';

const MAGIC = Buffer.from('MOSARC1\n', 'latin1');
const DIGEST_BYTES = 32;
/** A header is a few hundred bytes; a larger one is a damaged length, not a header. */
const MAX_HEADER_BYTES = 1024 * 1024;

/** When each batch of a segment was made durable (and so acknowledged): the last LSN of the batch and the time, in ms since the epoch. */
export type AckMark = [lsn: number, atMs: number];

export interface SegmentHeader {
  kind: 'segment';
  /** First and last LSN of the records in the body. */
  fromLsn: number;
  toLsn: number;
  /**
   * True when the body's statements are numbered afresh from its first record (a checkpoint's cut,
   * a journal opened anew): a replay may start here. Otherwise it continues the segment before.
   */
  startsNumbering: boolean;
  acks: AckMark[];
}

interface SnapshotHeader {
  kind: 'snapshot';
  /** The last LSN the image holds. */
  lsn: number;
  /** When the image was taken (ms since the epoch): the moment a restore to it returns to. */
  atMs: number;
}

/** A document's file (documents live beside the database on this engine), shipped before the segment whose record names it. */
interface DocumentHeader {
  kind: 'document';
  id: string;
  atMs: number;
}

export type ArchiveHeader = SegmentHeader | SnapshotHeader | DocumentHeader;

export interface ArchiveFile {
  header: ArchiveHeader;
  body: Buffer;
}

/** The file's bytes: the frame above around `body`. */
export function encodeArchiveFile(header: ArchiveHeader, body: Uint8Array): Buffer {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(MAGIC.length + 4);
  MAGIC.copy(head, 0);
  head.writeUInt32BE(headerBytes.length, MAGIC.length);
  const bodyLength = Buffer.alloc(8);
  bodyLength.writeBigUInt64BE(BigInt(body.length));
  const hash = createHash('sha256');
  for (const part of [head, headerBytes, bodyLength, body]) hash.update(part);
  return Buffer.concat([head, headerBytes, bodyLength, body, hash.digest()]);
}

/** Why a file is not a usable archive file. */
export class ArchiveFileError extends Error {}

/** Reads and checks a file written by encodeArchiveFile; throws ArchiveFileError naming what is wrong. */
export function decodeArchiveFile(bytes: Buffer): ArchiveFile {
  const minimum = MAGIC.length + 4 + 8 + DIGEST_BYTES;
  if (bytes.length < minimum) throw new ArchiveFileError(`it is ${bytes.length} bytes, shorter than any archive file (cut short?)`);
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new ArchiveFileError('it does not start with the archive format MOSARC1');
  const headerLength = bytes.readUInt32BE(MAGIC.length);
  if (headerLength > MAX_HEADER_BYTES || MAGIC.length + 4 + headerLength + 8 + DIGEST_BYTES > bytes.length) {
    throw new ArchiveFileError(`its header length (${headerLength}) runs past the end of the file (cut short?)`);
  }
  const headerEnd = MAGIC.length + 4 + headerLength;
  const bodyLength = bytes.readBigUInt64BE(headerEnd);
  const bodyStart = headerEnd + 8;
  const expectedLength = BigInt(bodyStart) + bodyLength + BigInt(DIGEST_BYTES);
  if (expectedLength !== BigInt(bytes.length)) {
    throw new ArchiveFileError(`its lengths say ${expectedLength} bytes but it has ${bytes.length} (cut short or extended)`);
  }
  const digestAt = bytes.length - DIGEST_BYTES;
  const digest = createHash('sha256').update(bytes.subarray(0, digestAt)).digest();
  if (!digest.equals(bytes.subarray(digestAt))) throw new ArchiveFileError('its checksum does not match its content (damaged or changed)');
  let header: unknown;
  try {
    header = JSON.parse(bytes.subarray(MAGIC.length + 4, headerEnd).toString('utf8'));
  } catch {
    throw new ArchiveFileError('its header is not JSON');
  }
  if (!isHeader(header)) throw new ArchiveFileError('its header does not describe a segment or a snapshot');
  return { header, body: bytes.subarray(bodyStart, digestAt) };
}

/** Document ids are the service's own (`doc-<ULID>`); anything else in a header is not a name to write a file under. */
export const DOCUMENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const isLsn = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function isHeader(value: unknown): value is ArchiveHeader {
  if (typeof value !== 'object' || value === null) return false;
  const h = value as Record<string, unknown>;
  if (h.kind === 'snapshot') return isLsn(h.lsn) && isLsn(h.atMs);
  if (h.kind === 'document') return typeof h.id === 'string' && DOCUMENT_ID.test(h.id) && isLsn(h.atMs);
  if (h.kind !== 'segment') return false;
  return (
    isLsn(h.fromLsn) && isLsn(h.toLsn) && (h.fromLsn as number) <= (h.toLsn as number) && typeof h.startsNumbering === 'boolean' &&
    Array.isArray(h.acks) && h.acks.every((a: unknown) => Array.isArray(a) && a.length === 2 && isLsn(a[0]) && isLsn(a[1]))
  );
}
