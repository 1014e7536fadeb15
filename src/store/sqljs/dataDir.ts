/**
 * The data directory and the files the engine keeps in it. The directory is 0700 and every file
 * in it 0600.
 */
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DIR_MODE, naming } from '../core/files.ts';
import { MANIFEST_FILE } from './manifest.ts';
import type { LogLevel, SqlJsStoreOptions } from './types.ts';

export type EngineLog = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

export interface EngineFiles {
  dir: string;
  snapshot: string;
  journal: string;
  manifest: string;
}

export function engineFiles(dir: string): EngineFiles {
  return { dir, snapshot: join(dir, 'snapshot.db'), journal: join(dir, 'journal.log'), manifest: join(dir, MANIFEST_FILE) };
}

/** Removes what a crash can leave behind: temporary files of a checkpoint, a cut, a manifest, a probe. */
export async function removeLeftovers(files: EngineFiles, probeFile: string): Promise<void> {
  await rm(`${files.snapshot}.tmp`, { force: true });
  await rm(`${files.journal}.tmp`, { force: true }); // a cut of the journal a crash interrupted: journal.log is whole
  await rm(`${files.manifest}.tmp`, { force: true });
  await rm(join(files.dir, probeFile), { force: true });
}

export async function readOptional(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

/** Creates the data directory 0700, or warns when an existing one is open to other users. */
export async function prepareDataDir(dir: string, log: SqlJsStoreOptions['onLog']): Promise<void> {
  const existed = await exists(dir);
  await naming('create the data directory', dir, () => mkdir(dir, { recursive: true, mode: DIR_MODE }));
  if (existed) {
    const mode = (await stat(dir)).mode & 0o777;
    if (mode & 0o077) {
      log?.('warn', `data directory ${dir} has mode ${mode.toString(8)}: other users can reach the database and documents; run chmod 700 ${dir}`, {
        dataDir: dir,
        mode: mode.toString(8),
      });
    }
  }
  // Every file the process creates (documents, uploads being received, temporary files) is 0600.
  try {
    process.umask(process.umask(0o077) | 0o077);
  } catch {
    // worker threads cannot change the umask: the engine's own files are created 0600 anyway
  }
}
