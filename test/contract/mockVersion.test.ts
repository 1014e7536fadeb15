/**
 * `npm run mock -- --version <date>`: Prism on that released version's frozen bundle, so a partner
 * pinned to it develops against what its version answers; an unknown version is refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { PROJECT_ROOT, freePort, stopMock } from '../helpers/server.ts';

let mock: ChildProcess;
let baseUrl: string;
let output = '';

function start(args: string[], port: number): ChildProcess {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'mock.ts'), ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return child;
}

beforeAll(async () => {
  const port = await freePort();
  mock = start(['--version', FIRST_VERSION], port);
  const deadline = Date.now() + 30_000;
  while (!/Mock is listening/.test(output)) {
    if (mock.exitCode !== null) throw new Error(`npm run mock exited (${mock.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`the mock did not start within 30 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  baseUrl = `http://127.0.0.1:${port}`;
}, 40_000);

afterAll(async () => {
  await stopMock(mock);
});

describe('npm run mock -- --version', () => {
  it("serves the version's frozen bundle and answers from its examples", async () => {
    const published = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { info: Record<string, unknown>; webhooks: Record<string, unknown> };
    expect(published.info['x-api-version']).toBe(FIRST_VERSION);
    expect(Object.keys(published.webhooks).sort()).toEqual(['application.approved', 'document.uploaded']);
    const keys = await fetch(`${baseUrl}/v1/api-keys`, { headers: { Authorization: 'Bearer x' } });
    expect(keys.status).toBe(200);
    expect(JSON.stringify(await keys.json())).not.toContain('"restricted"');
  });

  it('refuses a version that was never released', async () => {
    const refused = start(['--version', '2026-11-25'], await freePort());
    const [code] = (await once(refused, 'exit')) as [number];
    expect(code).toBe(2);
    expect(output).toMatch(/2026-11-25 is not a released API version/);
  });
});
