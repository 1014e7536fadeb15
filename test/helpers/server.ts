/**
 * The real service and admin CLI as child processes, for tests that need a process boundary
 * (SIGKILL, SIGTERM, exit codes, the admin socket). The implementation lives in
 * scripts/lib/spawnService.ts so the benchmarks share it; this adds temp data directories.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import * as spawned from '../../scripts/lib/spawnService.ts';
import type { AdminRun, ServiceProcess, StartServiceOptions } from '../../scripts/lib/spawnService.ts';
import { databaseEnv, onPostgres, testDatabase, type TempDatabase } from './engine.ts';

export { MAIN_ENTRY, PROJECT_ROOT, freePort, type AdminRun, type ServiceProcess, type StartServiceOptions } from '../../scripts/lib/spawnService.ts';

/**
 * In the postgres project (TEST_ENGINE=postgres) the processes these start run on PostgreSQL: each
 * data directory gets a database of its own (what a data directory is to sql.js), made on first use
 * and dropped after the test file. A caller that sets DATABASE_URL itself keeps it.
 */
const databases = new Map<string, Promise<TempDatabase>>();
afterAll(async () => {
  for (const database of databases.values()) await (await database.catch(() => null))?.drop().catch(() => {});
  databases.clear();
});

async function engineEnv(dataDir: string, env: Record<string, string> | undefined): Promise<Record<string, string>> {
  if (!onPostgres() || env?.DATABASE_URL) return env ?? {};
  let database = databases.get(dataDir);
  if (!database) {
    database = testDatabase();
    databases.set(dataDir, database);
  }
  return { ...databaseEnv((await database).url), ...env };
}

export async function startService(options: StartServiceOptions): Promise<ServiceProcess> {
  return spawned.startService({ ...options, env: await engineEnv(options.dataDir, options.env) });
}

export async function runAdmin(args: string[], options: { dataDir: string; env?: Record<string, string>; timeoutMs?: number }): Promise<AdminRun> {
  return spawned.runAdmin(args, { ...options, env: await engineEnv(options.dataDir, options.env) });
}

export async function createAccountWithCli(dataDir: string, name?: string, email?: string, env?: Record<string, string>) {
  return spawned.createAccountWithCli(dataDir, name, email, await engineEnv(dataDir, env));
}

/** A fresh data directory; `remove()` deletes it. */
export async function tempDataDir(prefix = 'mos-proc-'): Promise<{ dataDir: string; remove(): Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  const dataDir = path.join(root, 'data');
  return { dataDir, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Polls `check` every `intervalMs` until it returns a truthy value or `timeoutMs` passes. */
/**
 * Waits until `count()` has not moved for `quietMs` (a stream that stopped reading because its
 * reader paused), and returns it; throws naming `what` when it keeps moving for `timeoutMs`.
 */
export async function steady(count: () => number, what: string, quietMs = 400, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = count();
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (count() !== last) {
      last = count();
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return last;
  }
  throw new Error(`${what} kept reading for ${timeoutMs} ms (${count()} reads)`);
}

export async function eventually<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 5_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** `node scripts/mock.ts <args>` on `port`; `output()` is everything it printed so far (stdout and stderr). */
export function spawnMock(args: string[], port: number): { child: import('node:child_process').ChildProcess; output(): string } {
  let output = '';
  const child = spawn(process.execPath, [path.join(spawned.PROJECT_ROOT, 'scripts', 'mock.ts'), ...args], {
    cwd: spawned.PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return { child, output: () => output };
}

/** The mock started with `args` once Prism says it listens (30 s at most), and its base URL. */
export async function startMock(args: string[] = []): Promise<{ child: import('node:child_process').ChildProcess; output(): string; baseUrl: string }> {
  const port = await spawned.freePort();
  const mock = spawnMock(args, port);
  const deadline = Date.now() + 30_000;
  while (!/Mock is listening/.test(mock.output())) {
    if (mock.child.exitCode !== null) throw new Error(`npm run mock exited (${mock.child.exitCode}):\n${mock.output()}`);
    if (Date.now() > deadline) throw new Error(`the mock did not start within 30 s:\n${mock.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { ...mock, baseUrl: `http://127.0.0.1:${port}` };
}

/**
 * Stops `npm run mock` the way a person does (SIGTERM, which it passes on to Prism), waiting for it
 * to exit; SIGKILL only if it has not within `timeoutMs`. Killing the wrapper outright would leave
 * its Prism child running after the tests.
 */
export async function stopMock(mock: import('node:child_process').ChildProcess | undefined, timeoutMs = 5_000): Promise<void> {
  if (!mock || mock.exitCode !== null || mock.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => mock.once('exit', () => resolve()));
  mock.kill('SIGTERM');
  const timer = setTimeout(() => mock.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}
