/**
 * The real server process (`node src/main.ts`) and its data directory: an acknowledged write
 * survives SIGKILL, SIGTERM finishes the request in flight and exits 0, and bad settings stop
 * the start with a message naming the variable.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_ENTRY, PROJECT_ROOT, createAccountWithCli, startService, tempDataDir, type ServiceProcess } from '../helpers/server.ts';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function fresh(): Promise<{ dataDir: string; apiKey: string }> {
  const dir = await tempDataDir('mos-durability-');
  cleanups.push(dir.remove);
  const account = await createAccountWithCli(dir.dataDir, 'Durable Lending', 'ops@durable.test');
  return { dataDir: dir.dataDir, apiKey: account.apiKey };
}

async function start(dataDir: string): Promise<ServiceProcess> {
  // The writes below are API keys, far more than the default cap of active keys per account.
  const service = await startService({ dataDir, env: { API_KEYS_PER_ACCOUNT: '100000' } });
  cleanups.push(async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });
  return service;
}

/** Every key name of the account, following cursors to the end. */
async function listKeyIds(baseUrl: string, apiKey: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const url: string = `${baseUrl}/v1/api-keys?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await fetch(url, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { data: Array<{ keyId: string }>; nextCursor: string | null };
    for (const key of page.data) ids.add(key.keyId);
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

describe('durability', () => {
  it('every write whose 201 arrived before a SIGKILL is there after a restart', async () => {
    const { dataDir, apiKey } = await fresh();
    let service = await start(dataDir);

    const IN_FLIGHT = 20;
    const KILL_AFTER = 150;
    const acknowledged = new Set<string>();
    let started = 0;
    let finished = 0;
    let inFlightAtKill = -1;
    let killed = false;

    const writer = async (worker: number) => {
      for (let n = 0; n < 1_000 && !killed; n++) {
        started++;
        try {
          const response = await fetch(`${service.baseUrl}/v1/api-keys`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ role: 'member', name: `writer ${worker} #${n}` }),
          });
          const body = (await response.json()) as { keyId?: string };
          if (response.status === 201 && body.keyId) acknowledged.add(body.keyId);
        } catch {
          // the server died under this request: its outcome is unknown, and either is fine
          return;
        } finally {
          finished++;
        }
        if (!killed && acknowledged.size >= KILL_AFTER) {
          killed = true;
          inFlightAtKill = started - finished;
          service.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, (_, worker) => writer(worker)));
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(killed).toBe(true);
    expect(inFlightAtKill, 'requests were in flight when the server was killed').toBeGreaterThan(0);
    expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_AFTER);

    service = await start(dataDir);
    const listed = await listKeyIds(service.baseUrl, apiKey);
    const lost = [...acknowledged].filter((id) => !listed.has(id));
    expect(lost, `${lost.length} of ${acknowledged.size} acknowledged keys were lost`).toEqual([]);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('graceful shutdown', () => {
  let service: ServiceProcess;
  let dataDir: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ dataDir, apiKey } = await fresh());
    service = await start(dataDir);
  });

  it('SIGTERM stops accepting, finishes the request in flight, exits 0, and the write is kept', async () => {
    // A keep-alive client (the common case) that has sent half of its body when the signal comes.
    const agent = new http.Agent({ keepAlive: true });
    const body = JSON.stringify({ role: 'member', name: 'In flight at shutdown' });
    let finish!: () => void;
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        `${service.baseUrl}/v1/api-keys`,
        {
          method: 'POST',
          agent,
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 12));
      finish = () => req.end(body.slice(12));
    });
    // The server accepts connections in order: once a later request is answered, ours is in.
    expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);

    service.child.kill('SIGTERM');
    await service.waitForLog((line) => line.msg === 'shutting down');
    await expect(fetch(`${service.baseUrl}/healthz`)).rejects.toThrow();

    finish();
    const { status, text } = await answer;
    expect(status, text).toBe(201);
    const created = JSON.parse(text) as { keyId: string };
    expect(await service.exited).toEqual({ code: 0, signal: null });
    agent.destroy();

    const again = await start(dataDir);
    expect(await listKeyIds(again.baseUrl, apiKey)).toContain(created.keyId);
    expect(await again.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });
});

describe('configuration at start', () => {
  it('PORT=abc stops the start with exit code 2 and a message naming PORT', async () => {
    const dir = await tempDataDir('mos-config-');
    cleanups.push(dir.remove);
    const child = spawn(process.execPath, [MAIN_ENTRY], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, PORT: 'abc', DATA_DIR: dir.dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toContain('PORT must be a whole number from 0 to 65535, got "abc"');
    expect(stdout).not.toContain('listening');
  });
});
