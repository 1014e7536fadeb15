/**
 * One writer per data directory: `<dataDir>/LOCK` holds the pid of the process that has
 * the directory open. A LOCK whose pid is dead (or unreadable) is stale and taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataDirLockedError } from './errors.ts';

/** Data directories (resolved) held by this process, to tell our own live lock from a stale one with a reused pid. */
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of the live process holding `dataDir`, or null when it is free (no LOCK, or a stale one). */
export function lockHolderPid(dataDir: string): number | null {
  const dir = resolve(dataDir);
  const pid = readPid(join(dir, 'LOCK'));
  if (pid === null) return null;
  if (pid === process.pid) return heldHere.has(dir) ? pid : null;
  return isAlive(pid) ? pid : null;
}

export interface DataDirLock {
  release(): void;
}

/** Takes the LOCK of an existing directory, or throws DataDirLockedError if a live process holds it. */
export function acquireLock(dataDir: string, onStale?: (stalePid: number | null) => void): DataDirLock {
  const dir = resolve(dataDir);
  const lockPath = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(lockPath, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = lockHolderPid(dir);
      if (holder !== null) throw new DataDirLockedError(dir, holder);
      onStale?.(readPid(lockPath));
      try {
        unlinkSync(lockPath);
      } catch (unlinkErr) {
        if ((unlinkErr as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkErr;
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    heldHere.add(dir);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        heldHere.delete(dir);
        if (readPid(lockPath) === process.pid) unlinkSync(lockPath);
      },
    };
  }
  throw new Error(`could not take the lock ${lockPath} (it keeps reappearing)`);
}
