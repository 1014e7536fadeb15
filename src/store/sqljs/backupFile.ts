/**
 * The embedded engine's backup file, and its restore into an empty data directory.
 *
 * A backup is one file in the frame of backupFormat.ts: a header { kind: 'backup', format: 2,
 * engine, lsn, createdAt, includesKey, entries }, then the database image (a snapshot holding
 * every transaction up to `lsn`), each document's content, and with --include-key the key files,
 * then the trailer: a SHA-256 of every byte before it and, keyed from the sealing key, an HMAC.
 *
 * Both cover the header too, so a changed LSN or entry list is refused like a changed byte of the
 * database. The SHA-256 finds damage (a cut, a flipped bit); the HMAC finds a deliberate change,
 * whose maker can recompute a SHA-256 but not the HMAC without the sealing key.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { DIR_MODE, FILE_MODE, hashInTurns, sha256, syncDir, writeFileDurable } from '../core/files.ts';
import type { SecretKeyring } from '../core/sealing.ts';
import { backupHmacKey, type BackupHmacKey } from './backupKeys.ts';
import { FrameError, entryHead, frameHead, frameTrailer, parseFrame, type FrameHmac } from './backupFormat.ts';
import { engineFiles, exists } from './dataDir.ts';
import { describe, writeManifest } from './manifest.ts';

const FORMAT = 2;

type BackupEntryKind = 'database' | 'document' | 'key';

interface BackupEntry {
  kind: BackupEntryKind;
  /** The file it is restored as, relative to the data directory (`snapshot.db`, `documents/doc-…`, `secrets.key`). */
  name: string;
  bytes: number;
}

interface BackupHeader {
  format: number;
  engine: 'sqljs';
  /** The last committed transaction the database image holds. */
  lsn: number;
  createdAt: string;
  includesKey: boolean;
  entries: BackupEntry[];
}

/**
 * What the HMAC says: `verified` (made with a loaded key: the file is as its writer wrote it),
 * `absent` (a file with none: format 1, or written without a key), `key-not-loaded` (made with a
 * key of another id than those loaded), `no-key` (no key loaded to check it with).
 */
type BackupAuthentication = 'verified' | 'absent' | 'key-not-loaded' | 'no-key';

/** What a backup holds, read and verified. */
export interface VerifiedBackup {
  header: BackupHeader;
  sha256: string;
  /** Each entry's bytes, in the header's order. */
  contents: Buffer[];
  /** The frame's layout: 1 for the first backups (no HMAC), 2 since. */
  layout: 1 | 2;
  authentication: BackupAuthentication;
  /** The id of the sealing key the HMAC was made with (null without one). */
  hmacKeyId: string | null;
}

/** A backup file that is not one, or whose checksum does not match: restore refuses it, writing nothing. */
export class BackupInvalidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupInvalidError';
  }
}

/** An entry to write: its description and, when asked, its bytes (read then, one at a time). */
export interface BackupSource {
  kind: BackupEntryKind;
  name: string;
  read(): Promise<Uint8Array | null>;
}

/**
 * Writes the backup to `path` (which must not exist), through `path.partial` renamed into place
 * once complete and fsynced: a failure leaves no file that looks like a backup. A source whose
 * read answers null (a document deleted since the image was taken) is left out and named in
 * `skipped`. With `hmacKey`, the trailer holds an HMAC-SHA256 of the file made with it.
 */
export async function writeBackupFile(
  path: string,
  meta: { lsn: number; createdAt: string; includesKey: boolean },
  sources: readonly BackupSource[],
  hmacKey: BackupHmacKey | null,
): Promise<{ sha256: string; bytes: number; skipped: string[]; hmacKeyId: string | null }> {
  if (await exists(path)) throw new BackupInvalidError(`${path} already exists; choose a new file name (a backup never overwrites a file)`);
  const partial = `${path}.partial`;
  const blobs: Array<{ kind: BackupEntryKind; name: string; data: Uint8Array }> = [];
  const skipped: string[] = [];
  for (const source of sources) {
    const data = await source.read();
    if (data === null) skipped.push(source.name);
    else blobs.push({ kind: source.kind, name: source.name, data });
  }
  const header = { kind: 'backup', format: FORMAT, engine: 'sqljs', lsn: meta.lsn, createdAt: meta.createdAt, includesKey: meta.includesKey, entries: blobs.length };
  const hash = createHash('sha256');
  const hmac = hmacKey ? createHmac('sha256', hmacKey.key) : null;
  let handle: FileHandle | null = null;
  let bytes = 0;
  try {
    handle = await open(partial, 'wx', FILE_MODE);
    const write = async (data: Uint8Array) => {
      await hashInTurns(hash, data);
      if (hmac) await hashInTurns(hmac, data);
      bytes += data.length;
      await handle!.write(data);
    };
    await write(frameHead(header));
    for (const blob of blobs) {
      await write(entryHead(blob.kind, blob.name, blob.data.length));
      await write(blob.data);
    }
    const digest = hash.digest('hex');
    const signature: FrameHmac | null = hmac && hmacKey ? { alg: 'HMAC-SHA256', keyId: hmacKey.keyId, value: hmac.digest('hex') } : null;
    const trailer = frameTrailer(digest, signature);
    await handle.write(trailer);
    bytes += trailer.length;
    await handle.sync();
    await handle.close();
    handle = null;
    await rename(partial, path);
    await syncDir(join(path, '..'));
    return { sha256: digest, bytes, skipped, hmacKeyId: signature?.keyId ?? null };
  } catch (err) {
    await handle?.close().catch(() => {});
    await rm(partial, { force: true }).catch(() => {});
    throw err;
  }
}

const NAME = /^(snapshot\.db|secrets\.key|bank-secret\.key|documents\/doc-[0-9a-z]{26})$/;
const KIND_OF = (name: string): BackupEntryKind => (name === 'snapshot.db' ? 'database' : name.startsWith('documents/') ? 'document' : 'key');

/** HMAC-SHA256 of `covered` with `key`, compared in constant time with `recorded`. */
async function hmacMatches(key: Buffer, covered: Buffer, recorded: string): Promise<boolean> {
  const hmac = createHmac('sha256', key);
  await hashInTurns(hmac, covered);
  return timingSafeEqual(hmac.digest(), Buffer.from(recorded, 'hex'));
}

/**
 * Reads and verifies a backup file: its frame, its checksum, its HMAC (with the keys of `keyring`,
 * when given), its entries. Throws BackupInvalidError, naming what is wrong. Whether a file whose
 * HMAC could not be checked is acceptable is the caller's rule (its `authentication` says why).
 */
export async function readBackupFile(path: string, keyring: SecretKeyring | null): Promise<VerifiedBackup> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    throw new BackupInvalidError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const refuse: (why: string) => never = (why) => {
    throw new BackupInvalidError(`${path} is not a usable backup: ${why}. Nothing was restored.`);
  };
  let frame: ReturnType<typeof parseFrame>;
  try {
    frame = parseFrame(data);
  } catch (err) {
    if (err instanceof FrameError) refuse(err.message);
    throw err;
  }
  const actual = await sha256(frame.covered);
  if (actual !== frame.sha256) refuse(`its checksum does not match (recorded sha256 ${frame.sha256}, the content hashes to ${actual}): the file was damaged or changed`);
  let authentication: BackupAuthentication = 'absent';
  if (frame.hmac) {
    const key = keyring ? backupHmacKey(keyring, frame.hmac.keyId) : null;
    authentication = keyring === null ? 'no-key' : key === null ? 'key-not-loaded' : 'verified';
    if (key && !(await hmacMatches(key.key, frame.covered, frame.hmac.value))) {
      refuse(`its HMAC does not match (made with sealing key ${frame.hmac.keyId}): the file was changed after it was written, and its checksum recomputed`);
    }
  }
  const { header } = frame;
  const expected = frame.layout === 1 ? 1 : FORMAT;
  if (header.format !== expected || header.engine !== 'sqljs' || (frame.layout === 2 && header.kind !== 'backup')) {
    refuse(`it is format ${String(header.format)} of engine ${String(header.engine)}; this version restores formats 1 and ${FORMAT} of sqljs`);
  }
  if (!Number.isSafeInteger(header.lsn) || (header.lsn as number) < 0 || typeof header.createdAt !== 'string' || typeof header.includesKey !== 'boolean') refuse('its header is incomplete');
  const seen = new Set<string>();
  for (const entry of frame.entries) {
    if (!NAME.test(entry.name) || entry.kind !== KIND_OF(entry.name)) refuse(`its entry ${JSON.stringify(entry.name)} is not one a backup holds`);
    if (seen.has(entry.name)) refuse(`it holds ${entry.name} twice`);
    seen.add(entry.name);
  }
  if (frame.entries[0]?.name !== 'snapshot.db') refuse('it holds no database');
  return {
    header: {
      format: header.format as number,
      engine: 'sqljs',
      lsn: header.lsn as number,
      createdAt: header.createdAt as string,
      includesKey: header.includesKey as boolean,
      entries: frame.entries.map((e) => ({ kind: e.kind as BackupEntryKind, name: e.name, bytes: e.content.length })),
    },
    sha256: frame.sha256,
    contents: frame.entries.map((e) => e.content),
    layout: frame.layout,
    authentication,
    hmacKeyId: frame.hmac?.keyId ?? null,
  };
}

/**
 * Restores a verified backup into `dir`, which must be empty or not exist: the documents and key
 * files, then snapshot.db, then a manifest that vouches for it and says the directory was left
 * clean (no journal to replay). The engine opens it as any data directory.
 */
export async function restoreBackup(backup: VerifiedBackup, dir: string): Promise<void> {
  if (await exists(dir)) {
    const present = await readdir(dir);
    if (present.length > 0) throw new BackupInvalidError(`${dir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}); restore into an empty or new directory`);
  }
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  const files = engineFiles(dir);
  const { header, contents } = backup;
  if (header.entries.some((e) => e.kind === 'document')) await mkdir(join(dir, 'documents'), { mode: DIR_MODE });
  for (let i = 1; i < header.entries.length; i++) {
    await writeFileDurable(join(dir, header.entries[i]!.name), contents[i]!);
  }
  const image = contents[0]!;
  await writeFileDurable(files.snapshot, image);
  await syncDir(join(dir, 'documents')).catch(() => {});
  await writeManifest(dir, { snapshot: await describe(image, header.lsn), pending: null, clean: true });
}
