import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirLockedError } from '../../../../src/store/core/errors.ts';
import { lockHolderPid } from '../../../../src/store/sqljs/sqljsStore.ts';
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

const HOLDER = fileURLToPath(new URL('./fixtures/lockHolder.ts', import.meta.url));

function processState(pid: number): string | null {
  try {
    // /proc/<pid>/stat: "pid (comm) S ...": the state letter follows the closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

function threadCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

/**
 * Starts the holder under a parent that never reaps its children (`sh` replaced by `sleep`), so
 * a SIGKILLed holder stays a zombie: its pid still answers kill(pid, 0).
 */
async function startUnreapedHolder(dir: string): Promise<{ holderPid: number; parent: ChildProcess }> {
  const parent = spawn('/bin/sh', ['-c', `"$0" "$1" "$2" "$3" & exec sleep 120`, process.execPath, HOLDER, dir, noMigrations], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  parent.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const holderPid = await new Promise<number>((resolvePid, reject) => {
    parent.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\d+)\n/.exec(out);
      if (match) resolvePid(Number(match[1]));
    });
    parent.on('exit', () => reject(new Error(`holder did not start: ${err}`)));
  });
  return { holderPid, parent };
}

describe('data directory lock across processes', () => {
  it('a holder killed with SIGKILL and never reaped (a zombie) does not block the next start', async () => {
    const dir = await dirs.make('zombie');
    const { holderPid, parent } = await startUnreapedHolder(dir);
    try {
      expect(lockHolderPid(dir)).toBe(holderPid);
      // a live holder is still refused
      const refused = await open(dir, noMigrations).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DataDirLockedError);
      expect((refused as Error).message).toContain(`pid ${holderPid}`);

      process.kill(holderPid, 'SIGKILL');
      // wait until the kernel has made it a zombie whose threads are all gone (no timing assertion:
      // just the state change; the thread-group leader shows Z while its other threads still exit)
      const exited = () => processState(holderPid) === 'Z' && threadCount(holderPid) <= 1;
      for (let i = 0; i < 500 && !exited(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(processState(holderPid)).toBe('Z');
      expect(() => process.kill(holderPid, 0)).not.toThrow(); // the pid still "exists": the old check refused here

      // start again at once
      expect(lockHolderPid(dir)).toBeNull();
      const logs: string[] = [];
      const store = await open(dir, noMigrations, { onLog: (_level, msg, fields) => logs.push(`${msg} ${String(fields.stalePid)}`) });
      expect(logs).toContain(`taking over stale lock ${holderPid}`);
      expect(lockHolderPid(dir)).toBe(process.pid);
      expect(processState(holderPid)).toBe('Z'); // still unreaped while we hold the directory
      await store.close();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('a lock whose pid belongs to a live unrelated process (a reused pid) does not block a start', async () => {
    const dir = await dirs.make('reused');
    await writeFile(join(dir, 'LOCK'), `${process.ppid}\n`); // alive, but holds no lock on the file
    expect(lockHolderPid(dir)).toBeNull();
    const store = await open(dir, noMigrations);
    await store.close();
  });
});
