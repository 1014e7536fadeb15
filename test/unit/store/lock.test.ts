import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirLockedError } from '../../../src/store/engine/errors.ts';
import { lockHolderPid } from '../../../src/store/engine/sqljsStore.ts';
import { migrationsDir, open, tempDirs } from './storeTestUtils.ts';
import type { TempDirs } from './storeTestUtils.ts';

let dirs: TempDirs;
let noMigrations: string;
beforeAll(async () => {
  dirs = await tempDirs();
  noMigrations = await migrationsDir(dirs);
});
afterAll(() => dirs.cleanup());

function deadPid(): number {
  for (let pid = 999999; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}

describe('data directory lock', () => {
  it('refuses a second open while the first is open, and frees the directory on close', async () => {
    const dir = await dirs.make('busy');
    expect(lockHolderPid(dir)).toBeNull();
    const store = await open(dir, noMigrations);
    expect((await readFile(join(dir, 'LOCK'), 'utf8')).trim()).toBe(String(process.pid));
    expect(lockHolderPid(dir)).toBe(process.pid);
    const err = await open(dir, noMigrations).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirLockedError);
    expect((err as Error).message).toMatch(/another process \(pid \d+\) holds the data directory/);
    expect(store.isOpen()).toBe(true); // the refused open did not disturb the holder
    await store.close();
    expect(lockHolderPid(dir)).toBeNull();
    const again = await open(dir, noMigrations);
    await again.close();
  });

  it('takes over a stale lock left by a dead process', async () => {
    const dir = await dirs.make('stale');
    const pid = deadPid();
    await writeFile(join(dir, 'LOCK'), `${pid}\n`);
    expect(lockHolderPid(dir)).toBeNull();
    const logs: string[] = [];
    const store = await open(dir, noMigrations, { onLog: (_level, msg, fields) => logs.push(`${msg} ${String(fields.stalePid)}`) });
    expect(logs).toContain(`taking over stale lock ${pid}`);
    expect(lockHolderPid(dir)).toBe(process.pid);
    await store.close();
  });

  it('takes over an empty or unreadable lock file', async () => {
    const dir = await dirs.make('garbled');
    await writeFile(join(dir, 'LOCK'), '');
    const store = await open(dir, noMigrations);
    await store.close();
  });

  it('creates a missing data directory', async () => {
    const dir = join(await dirs.make('parent'), 'a', 'b', 'c');
    const store = await open(dir, noMigrations);
    expect(lockHolderPid(dir)).toBe(process.pid);
    await store.close();
  });
});
