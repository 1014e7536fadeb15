/**
 * One writer per data directory: `<dataDir>/LOCK` carries an advisory lock held by the process that
 * has the directory open (an open-file-description lock on Linux, `flock` elsewhere, through the
 * fs-native-extensions package). The kernel drops the lock the moment its holder dies, even while
 * the dead process is a zombie nobody reaped, so neither a zombie nor a reused pid can block a
 * restart. The file also holds the holder's pid, for messages only: the pid is never what decides.
 *
 * Releasing unlinks the file while still holding the lock. A process that opened the old file just
 * before could then lock an unlinked inode, so after locking we check that the path still names the
 * inode we locked, and start again when it does not.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { DataDirLockedError, StorageWriteError } from '../core/errors.ts';

interface NativeLocks {
  tryLock(fd: number, opts?: { shared?: boolean }): boolean;
  unlock(fd: number): void;
}

const native = createRequire(import.meta.url)('fs-native-extensions') as NativeLocks;

/** Data directories (resolved) held by this process. */
const heldHere = new Set<string>();

function readPid(lockPath: string): number | null {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function sameFile(fd: number, path: string): boolean {
  try {
    const a = fstatSync(fd);
    const b = statSync(path);
    return a.ino === b.ino && a.dev === b.dev;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * The pid of the live process holding `dataDir` (0 when a live holder wrote no readable pid), or
 * null when it is free. Probes with a shared lock, which never blocks a holder's exclusive one.
 */
export function lockHolderPid(dataDir: string): number | null {
  const dir = resolve(dataDir);
  if (heldHere.has(dir)) return process.pid;
  const lockPath = join(dir, 'LOCK');
  let fd: number;
  try {
    fd = openSync(lockPath, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    if (native.tryLock(fd, { shared: true })) {
      native.unlock(fd);
      return null;
    }
    return readPid(lockPath) ?? 0;
  } finally {
    closeSync(fd);
  }
}

export interface DataDirLock {
  release(): void;
}

const ATTEMPTS = 5;
const RETRY_MS = 25;

/**
 * Takes the LOCK of an existing directory, or throws DataDirLockedError if a live process holds
 * it. `onStale` is told the pid a dead holder left behind (the lock itself was already free).
 */
export async function acquireLock(dataDir: string, onStale?: (stalePid: number | null) => void): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  const lockPath = join(dir, 'LOCK');
  if (heldHere.has(dir)) throw new DataDirLockedError(dir, process.pid);
  for (let attempt = 1; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(lockPath, 'a+', 0o600);
    } catch (err) {
      throw new StorageWriteError('open', lockPath, err);
    }
    let locked = false;
    try {
      locked = native.tryLock(fd);
      if (locked && !sameFile(fd, lockPath)) {
        // The holder released (unlinking the file) between our open and our lock: try the new file.
        native.unlock(fd);
        locked = false;
        closeSync(fd);
        if (attempt < ATTEMPTS * 4) continue;
        throw new Error(`could not take the lock ${lockPath} (it keeps being replaced)`);
      }
    } catch (err) {
      if (locked) native.unlock(fd);
      try {
        closeSync(fd);
      } catch {
        // already closed above
      }
      throw err;
    }
    if (!locked) {
      closeSync(fd);
      // A prober (lockHolderPid) holds a shared lock for a few microseconds: look again briefly.
      if (attempt < ATTEMPTS) {
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      throw new DataDirLockedError(dir, readPid(lockPath) ?? 0);
    }
    const previous = readPid(lockPath);
    if (previous !== null && previous !== process.pid) onStale?.(previous);
    else if (previous === null && fstatSync(fd).size > 0) onStale?.(null);
    try {
      ftruncateSync(fd, 0);
      writeSync(fd, `${process.pid}\n`, 0);
    } catch (err) {
      native.unlock(fd);
      closeSync(fd);
      throw new StorageWriteError('write', lockPath, err);
    }
    heldHere.add(dir);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        heldHere.delete(dir);
        try {
          if (sameFile(fd, lockPath)) unlinkSync(lockPath);
        } finally {
          native.unlock(fd);
          closeSync(fd);
        }
      },
    };
  }
}
