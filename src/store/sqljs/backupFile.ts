/**
 * The embedded engine's backup file, and its restore into an empty data directory.
 *
 * A backup is one self-describing file:
 *
 *   line 1  `MOSBACKUP`                                  the magic
 *   line 2  header JSON: { format, engine, lsn, createdAt, includesKey, entries: [{ kind, name, bytes }] }
 *   bytes   each entry's bytes, in the header's order: the database image (a snapshot holding
 *           every transaction up to `lsn`), each document's content, and with --include-key the key files
 *   last    `{"sha256":"…"}` and a newline: SHA-256 of every byte before it
 *
 * The checksum covers the header too, so a changed LSN or entry list is refused like a changed
 * byte of the database. Restore verifies it before writing anything.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { DIR_MODE, FILE_MODE, hashInTurns, sha256, syncDir, writeFileDurable } from '../core/files.ts';
import { engineFiles, exists } from './dataDir.ts';
import { describe, writeManifest } from './manifest.ts';

const MAGIC = 'MOSBACKUP';
const FORMAT = 1;

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

/** What a backup holds, read and verified. */
export interface VerifiedBackup {
  header: BackupHeader;
  sha256: string;
  /** Each entry's bytes, in the header's order. */
  contents: Buffer[];
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
 * read answers null (a document deleted since the image was taken) is left out and named in `skipped`.
 */
export async function writeBackupFile(
  path: string,
  meta: { lsn: number; createdAt: string; includesKey: boolean },
  sources: readonly BackupSource[],
): Promise<{ sha256: string; bytes: number; skipped: string[] }> {
  if (await exists(path)) throw new BackupInvalidError(`${path} already exists; choose a new file name (a backup never overwrites a file)`);
  const partial = `${path}.partial`;
  const blobs: Uint8Array[] = [];
  const entries: BackupEntry[] = [];
  const skipped: string[] = [];
  for (const source of sources) {
    const data = await source.read();
    if (data === null) {
      skipped.push(source.name);
      continue;
    }
    blobs.push(data);
    entries.push({ kind: source.kind, name: source.name, bytes: data.length });
  }
  const header: BackupHeader = { format: FORMAT, engine: 'sqljs', lsn: meta.lsn, createdAt: meta.createdAt, includesKey: meta.includesKey, entries };
  const hash = createHash('sha256');
  let handle: FileHandle | null = null;
  let bytes = 0;
  try {
    handle = await open(partial, 'wx', FILE_MODE);
    const write = async (data: Uint8Array) => {
      await hashInTurns(hash, data);
      bytes += data.length;
      await handle!.write(data);
    };
    await write(Buffer.from(`${MAGIC}\n${JSON.stringify(header)}\n`, 'utf8'));
    for (const blob of blobs) await write(blob);
    const sha256 = hash.digest('hex');
    const trailer = Buffer.from(`${JSON.stringify({ sha256 })}\n`, 'utf8');
    await handle.write(trailer);
    bytes += trailer.length;
    await handle.sync();
    await handle.close();
    handle = null;
    await rename(partial, path);
    await syncDir(join(path, '..'));
    return { sha256, bytes, skipped };
  } catch (err) {
    await handle?.close().catch(() => {});
    await rm(partial, { force: true }).catch(() => {});
    throw err;
  }
}

const NAME = /^(snapshot\.db|secrets\.key|bank-secret\.key|documents\/doc-[0-9a-z]{26})$/;

/** Reads and verifies a backup file: its form, its checksum, its entries. Throws BackupInvalidError, naming what is wrong. */
export async function readBackupFile(path: string): Promise<VerifiedBackup> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    throw new BackupInvalidError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const refuse: (why: string) => never = (why) => {
    throw new BackupInvalidError(`${path} is not a usable backup: ${why}. Nothing was restored.`);
  };
  const first = data.indexOf(0x0a);
  if (first < 0 || data.subarray(0, first).toString('utf8') !== MAGIC) refuse('it does not start as a backup of this service does');
  const second = data.indexOf(0x0a, first + 1);
  if (second < 0) refuse('its header is cut short');
  if (data.at(-1) !== 0x0a) refuse('it is cut short (no checksum at its end)');
  const trailerStart = data.lastIndexOf(0x0a, data.length - 2) + 1;
  let recorded: unknown;
  try {
    recorded = (JSON.parse(data.subarray(trailerStart).toString('utf8')) as { sha256?: unknown }).sha256;
  } catch {
    recorded = undefined;
  }
  if (typeof recorded !== 'string' || !/^[0-9a-f]{64}$/.test(recorded)) refuse('its checksum line is damaged or missing (the file is cut short or changed)');
  const body = data.subarray(0, trailerStart);
  const actual = await sha256(body);
  if (actual !== recorded) refuse(`its checksum does not match (recorded sha256 ${recorded as string}, the content hashes to ${actual}): the file was damaged or changed`);
  let header: BackupHeader;
  try {
    header = JSON.parse(data.subarray(first + 1, second).toString('utf8')) as BackupHeader;
  } catch {
    refuse('its header is not valid JSON');
  }
  if (header.format !== FORMAT || header.engine !== 'sqljs') refuse(`it is format ${String(header.format)} of engine ${String(header.engine)}; this version restores format ${FORMAT} of sqljs`);
  if (!Number.isSafeInteger(header.lsn) || header.lsn < 0 || !Array.isArray(header.entries)) refuse('its header is incomplete');
  const contents: Buffer[] = [];
  let at = second + 1;
  for (const entry of header.entries) {
    if (!NAME.test(entry.name) || !Number.isSafeInteger(entry.bytes) || entry.bytes < 0) refuse(`its entry ${JSON.stringify(entry.name)} is not one a backup holds`);
    contents.push(body.subarray(at, at + entry.bytes));
    at += entry.bytes;
  }
  if (at !== body.length) refuse('its entries do not add up to its length');
  if (header.entries[0]?.name !== 'snapshot.db') refuse('it holds no database');
  return { header, sha256: recorded as string, contents };
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
