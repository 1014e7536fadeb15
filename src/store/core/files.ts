/**
 * File operations in the data directory (the sql.js engine's files, and the sealing key file
 * either engine may keep there): every file is created 0600, every failure names the file (a full
 * disk says which write failed), and tests can inject faults (a full disk where no small file
 * system can be mounted).
 */
import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { StorageWriteError } from './errors.ts';

/** Mode of every file the engine creates in the data directory. */
export const FILE_MODE = 0o600;
/** Mode of the data directory when the engine creates it. */
export const DIR_MODE = 0o700;

/**
 * A fault-injecting file layer for tests: called before each write or sync the engine makes in
 * the data directory; it may throw an errno error (for example ENOSPC) to simulate a failing disk.
 */
export interface FaultInjector {
  beforeWrite(path: string, bytes: number): void;
  /** Awaited before a whole file is written (a snapshot, the manifest, a cut journal): lets a test hold that write. */
  beforeFileWrite?(path: string): Promise<void>;
  /** Called before the data directory is fsynced where the engine passes its faults (checkpoints, rebuilds). */
  beforeDirSync?(dir: string): void;
}

/** Runs `fn`; a failure becomes a StorageWriteError naming `path`. */
export async function naming<T>(operation: string, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StorageWriteError) throw err;
    throw new StorageWriteError(operation, path, err);
  }
}

/**
 * Written and flushed this much at a time (as Redis's incremental fsync of its snapshots): a
 * snapshot of hundreds of MB flushed in one fsync held the journal's fsyncs behind it on the same
 * disk (the file system commits them together): writes waited up to 142-184 ms at 320 MB, 50 ms after.
 */
const FLUSHED_PART_BYTES = 4 * 1024 * 1024;

/** Writes `data` to `path` (created 0600, replaced if present) and fsyncs it, flushing a part at a time. */
export async function writeFileDurable(path: string, data: Uint8Array, faults?: FaultInjector): Promise<void> {
  await naming('write', path, async () => {
    await faults?.beforeFileWrite?.(path);
    faults?.beforeWrite(path, data.length);
    const fh = await open(path, 'w', FILE_MODE);
    try {
      await fh.chmod(FILE_MODE);
      for (let at = 0; at < data.length; at += FLUSHED_PART_BYTES) {
        if (at > 0) await fh.datasync();
        // Each writeFile continues where the last ended.
        await fh.writeFile(data.subarray(at, at + FLUSHED_PART_BYTES));
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
  });
}

/** Atomically replaces `path` with `data`: a temporary file, fsync, rename, directory fsync. A failure leaves the old file. */
export async function replaceFileDurable(path: string, data: Uint8Array, dir: string, faults?: FaultInjector): Promise<void> {
  const temporary = `${path}.tmp`;
  try {
    await writeFileDurable(temporary, data, faults);
    await naming('rename', temporary, () => rename(temporary, path));
  } catch (err) {
    await rm(temporary, { force: true }).catch(() => {});
    throw err;
  }
  await syncDir(dir);
}

export async function syncDir(dir: string, faults?: FaultInjector): Promise<void> {
  await naming('fsync the directory', dir, async () => {
    faults?.beforeDirSync?.(dir);
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  });
}

/** Hashed per turn of the event loop: about a millisecond of SHA-256 on the 2-core machines. */
const HASH_SLICE_BYTES = 1024 * 1024;

/**
 * Adds `data` to `hash` (or an HMAC) a slice per turn of the event loop. A checkpoint or a backup hashes the
 * whole database, 350 ms for 300 MiB on the 2-core machines; in one call, that held every request
 * of the service as long, and longer as the database grew.
 */
export async function hashInTurns(hash: { update(data: Uint8Array): unknown }, data: Uint8Array): Promise<void> {
  for (let start = 0; start < data.length; start += HASH_SLICE_BYTES) {
    if (start > 0) await nextTurn();
    hash.update(data.subarray(start, start + HASH_SLICE_BYTES));
  }
}

/** SHA-256 of `data` (hex), hashed a slice per turn of the event loop (hashInTurns). */
export async function sha256(data: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  await hashInTurns(hash, data);
  return hash.digest('hex');
}
