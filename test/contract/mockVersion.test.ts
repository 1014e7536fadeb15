/**
 * `npm run mock -- --version <date>`: Prism on that released version's frozen bundle, so a partner
 * pinned to it develops against what its version answers; an unknown version is refused.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { freePort, spawnMock, startMock, stopMock } from '../helpers/server.ts';

let mock: ChildProcess;
let baseUrl: string;

beforeAll(async () => {
  ({ child: mock, baseUrl } = await startMock(['--version', FIRST_VERSION]));
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
    const refused = spawnMock(['--version', '2026-11-25'], await freePort());
    const [code] = (await once(refused.child, 'exit')) as [number];
    expect(code).toBe(2);
    expect(refused.output()).toMatch(/2026-11-25 is not a released API version/);
  });
});
