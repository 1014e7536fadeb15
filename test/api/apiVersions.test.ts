/**
 * API versions on the wire: the account's pinned version, `Mos-Version` per request, the header on
 * every response, and the bad versions refused with 400 `api_version_invalid` changing nothing.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, FIRST_VERSION, VERSIONS } from '../../src/domain/versions/registry.ts';
import { setAccountApiVersion } from '../../src/store/accounts.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  account = await app.newAccount();
});
afterAll(() => app?.close());

const auth = (extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${account.apiKey}`, ...extra });

/** Pins the account as an account made before versions existed is pinned (the migration's default). */
async function pin(accountId: string, apiVersion: string): Promise<void> {
  await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, accountId, { apiVersion, previousApiVersion: null, changedAt: null }));
  app.ctx.authenticate.apiKeyRevoked();
}

describe('the pinned version', () => {
  it('pins a new account to the current version and answers in it, saying so in Mos-Version', async () => {
    const response = await app.fetch('/v1/account', { headers: auth() });
    expect(response.headers.get('mos-version')).toBe(CURRENT_VERSION);
    expect(await response.json()).toMatchObject({ apiVersion: CURRENT_VERSION });
  });

  it('answers an account pinned to the first version in it, and a request asking for another in that one', async () => {
    const old = await app.newAccount('Pinned Early');
    await pin(old.accountId, FIRST_VERSION);
    const pinned = await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${old.apiKey}` } });
    expect(pinned.headers.get('mos-version')).toBe(FIRST_VERSION);
    expect(await pinned.json()).toMatchObject({ apiVersion: FIRST_VERSION });
    const asked = await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${old.apiKey}`, 'Mos-Version': CURRENT_VERSION } });
    expect(asked.headers.get('mos-version')).toBe(CURRENT_VERSION);
  });

  it('puts Mos-Version on problems too, and on operations without an API key', async () => {
    const missing = await app.fetch('/v1/quotes/qte-00000000000000000000000000', { headers: auth() });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('mos-version')).toBe(CURRENT_VERSION);
    const anonymous = await app.fetch('/v1/account');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('mos-version')).toBe(CURRENT_VERSION);
  });
});

/** A request with the header sent twice (fetch would join them into one). */
function twoHeaders(path: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(app.baseUrl + path);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        // An array value is sent as the header twice.
        headers: {
          Authorization: `Bearer ${account.apiKey}`,
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          'Mos-Version': [FIRST_VERSION, CURRENT_VERSION],
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text || '{}') as Record<string, unknown> }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('a bad Mos-Version', () => {
  const webhook = JSON.stringify({ url: 'https://hooks.example.test/versions', events: ['application.approved'] });
  const count = async () => ((await (await app.fetch('/v1/webhooks', { headers: auth() })).json()) as { data: unknown[] }).data.length;

  it.each([
    ['an unknown date', '2026-11-25', /not a version/],
    ['a date before the first version', '2025-01-01', /before the first version/],
    ['a future date', '2099-01-01', /in the future/],
    ['garbage', 'latest', /must be a version date/],
    ['an impossible date', '2026-02-30', /must be a version date/],
  ])('refuses %s with 400 api_version_invalid listing the versions, and changes nothing', async (_what, version, reason) => {
    const before = await count();
    const response = await app.fetch('/v1/webhooks', { method: 'POST', headers: auth({ 'Content-Type': 'application/json', 'Mos-Version': version }), body: webhook });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { code: string; detail: string; supportedVersions: string[] };
    expect(problem.code).toBe('api_version_invalid');
    expect(problem.supportedVersions).toEqual([...VERSIONS]);
    expect(problem.detail).toMatch(reason);
    expect(await count()).toBe(before);
  });

  it('refuses the header sent twice, and changes nothing', async () => {
    const before = await count();
    const { status, body } = await twoHeaders('/v1/webhooks', webhook);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'api_version_invalid', supportedVersions: [...VERSIONS] });
    expect(await count()).toBe(before);
  });
});
