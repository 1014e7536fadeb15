/**
 * A full disk degrades the service and heals without a restart. The data directory sits on a
 * small tmpfs mounted by the test (the machines run the tests as root); where mounting is not
 * allowed, the engine's fault-injecting file layer simulates the full disk instead.
 *
 * - A write the disk refuses answers 503 `storage_unavailable` with `Retry-After`; every later
 *   write too, until a write succeeds again; reads keep answering; /readyz is 503, /healthz 200.
 * - Freeing space brings writes back by themselves; nothing acknowledged is lost, nothing refused
 *   was kept.
 * - Starting on a full disk exits non-zero with a message naming the file it could not write.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlJsStore, type FaultInjector } from '../../src/store/sqljs/sqljsStore.ts';
import { MAIN_ENTRY, PROJECT_ROOT, createAccountWithCli, eventually, startService } from '../helpers/server.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

let root: string;
let mounted = false;
/** The simulated disk when no tmpfs could be mounted. */
const simulated = { full: false };
const faults: FaultInjector = {
  beforeWrite(file: string) {
    if (simulated.full) throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', path: file });
  },
};

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'mos-fulldisk-'));
  try {
    if (process.env.FULL_DISK_TEST_SIMULATE === '1') throw new Error('simulating on request');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=0700', 'tmpfs', root], { stdio: 'ignore' });
    mounted = true;
  } catch {
    console.warn('full-disk test: could not mount a tmpfs here; using the engine\'s fault-injecting file layer');
  }
});
afterAll(async () => {
  if (mounted) execFileSync('umount', ['-l', root], { stdio: 'ignore' });
  await rm(root, { recursive: true, force: true });
});

/** Fills the file system of `dir` until a write fails; returns a function that frees the space again. */
async function fillDisk(dir: string): Promise<() => Promise<void>> {
  if (!mounted) {
    simulated.full = true;
    return async () => {
      simulated.full = false;
    };
  }
  const filler = path.join(dir, '..', `filler-${Math.random().toString(36).slice(2)}`);
  const handle = await open(filler, 'w');
  try {
    for (const size of [1024 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          await handle.write(chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    await handle.close();
  }
  return () => rm(filler, { force: true });
}

describe('a full disk', { timeout: 90_000 }, () => {
  let app: TestApp;
  afterAll(() => app?.close());

  it('degrades writes to 503 storage_unavailable, keeps reads, and heals by itself once space is freed', async () => {
    const dataDir = path.join(root, 'serving');
    await mkdir(dataDir, { recursive: true });
    app = await startTestApp({ dataDir, env: { STORAGE_PROBE_INTERVAL_MS: '50' }, store: mounted ? {} : { faults } });
    const account = await app.newAccount();
    const headers = { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' };
    const post = (amount: number) => fetch(`${app.baseUrl}/v1/quotes`, { method: 'POST', headers, body: JSON.stringify({ amount, term: 30 }) });
    const acknowledged: string[] = [];
    const first = await post(300000);
    expect(first.status).toBe(201);
    acknowledged.push(((await first.json()) as { quoteId: string }).quoteId);

    const free = await fillDisk(dataDir);
    // The journal's last page may still take a record or two: write until the disk refuses one.
    let refused: Response | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const response = await post(310000 + i);
      if (response.status === 201) acknowledged.push(((await response.json()) as { quoteId: string }).quoteId);
      else refused = response;
    }
    expect(refused?.status).toBe(503);
    expect(refused!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused!.json()).toMatchObject({ status: 503, code: 'storage_unavailable' });

    // degraded: later writes refused at once, reads answered, readiness says so, liveness does not
    const again = await post(320000);
    expect(again.status).toBe(503);
    expect(again.headers.get('retry-after')).toBeTruthy();
    const read = await fetch(`${app.baseUrl}/v1/quotes/${acknowledged[0]}`, { headers });
    expect(read.status).toBe(200);
    const keys = await fetch(`${app.baseUrl}/v1/api-keys`, { headers });
    expect(keys.status).toBe(200);
    const ready = await fetch(`${app.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ store: 'degraded' });
    expect((await fetch(`${app.baseUrl}/healthz`)).status).toBe(200);

    // space freed: the store heals without a restart
    await free();
    await eventually(async () => (await fetch(`${app.baseUrl}/readyz`)).status === 200, 10_000);
    const healed = await post(330000);
    expect(healed.status).toBe(201);
    acknowledged.push(((await healed.json()) as { quoteId: string }).quoteId);

    // nothing acknowledged lost, nothing refused kept, also after a restart
    const stored = async (store: { read: TestApp['ctx']['store']['read'] }) =>
      store.read(async (db) => (await db.all<{ id: string }>('SELECT id FROM quotes ORDER BY id')).map((r) => r.id));
    expect(await stored(app.ctx.store)).toEqual([...acknowledged].sort());
    await app.ctx.store.close();
    const reopened = await openSqlJsStore({ dataDir });
    try {
      expect(await stored(reopened)).toEqual([...acknowledged].sort());
    } finally {
      await reopened.close();
    }
  });

  it('starting on a full disk exits non-zero with a message naming the file', async () => {
    const dataDir = path.join(root, 'starting');
    const { apiKey } = await createAccountWithCli(dataDir, 'Full Disk Lending', 'ops@full.test');
    // writes left in the journal by a killed service: the next start must checkpoint them
    const service = await startService({ dataDir });
    const created = await fetch(`${service.baseUrl}/v1/quotes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: 300000, term: 30 }),
    });
    expect(created.status).toBe(201);
    const quoteId = ((await created.json()) as { quoteId: string }).quoteId;
    service.child.kill('SIGKILL');
    await service.exited;
    await rm(path.join(dataDir, 'admin.sock'), { force: true });

    const free = await fillDisk(dataDir);
    let message: string;
    if (mounted) {
      const child = spawn(process.execPath, [MAIN_ENTRY], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      message = output;
    } else {
      message = await openSqlJsStore({ dataDir, faults }).then(
        async (store) => {
          await store.close();
          return 'opened';
        },
        (err: Error) => err.message,
      );
    }
    expect(message).toMatch(new RegExp(`could not \\w+ ${dataDir.replace(/[/.]/g, '\\$&')}/[\\w.-]+: no space left on device`));

    await free();
    const restarted = await startService({ dataDir });
    try {
      const read = await fetch(`${restarted.baseUrl}/v1/quotes/${quoteId}`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(read.status).toBe(200);
    } finally {
      await restarted.stop();
    }
  });
});
