/** Shared helpers for the store engine tests. */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { PROBE_FILE } from '../../../../src/store/sqljs/degradedMode.ts';
import { openSqlJsStore } from '../../../../src/store/sqljs/sqljsStore.ts';
import type { SqlJsStore, SqlJsStoreOptions } from '../../../../src/store/sqljs/sqljsStore.ts';

export interface TempDirs {
  /** A fresh directory under the test's temp root. */
  make(name: string): Promise<string>;
  cleanup(): Promise<void>;
}

export async function tempDirs(): Promise<TempDirs> {
  const root = await mkdtemp(join(os.tmpdir(), 'store-test-'));
  return {
    async make(name) {
      const dir = join(root, name);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** An empty migrations directory (so tests never pick up the project's real migrations). */
export async function migrationsDir(dirs: TempDirs, files: Record<string, string> = {}): Promise<string> {
  const dir = await dirs.make(`migrations-${Math.random().toString(36).slice(2)}`);
  for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql);
  return dir;
}

export function open(dataDir: string, migrations: string, extra: Partial<SqlJsStoreOptions> = {}): Promise<SqlJsStore> {
  return openSqlJsStore({ dataDir, migrationsDir: migrations, ...extra });
}

/**
 * What the disk would hold if the process died now: a copy of the data directory taken
 * while the store is still open (no closing checkpoint). Acknowledged commits are fsynced,
 * so they are in the copy.
 */
export async function crashImage(dataDir: string, target: string): Promise<string> {
  await rm(target, { recursive: true, force: true });
  // A degraded store's write probe comes and goes every few milliseconds (the copy could list it
  // and then not find it); it holds nothing, and the next start removes any left behind.
  await cp(dataDir, target, { recursive: true, filter: (source) => basename(source) !== PROBE_FILE });
  return target;
}

/** Polls `check` every 10 ms until it is true, for at most `timeoutMs` (a bound, not a timing assertion). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
