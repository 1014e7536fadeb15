/**
 * Revocation across instances: two apps (two contexts, two stores, two pools) on one PostgreSQL
 * database, each remembering the keys it has seen (src/services/authentication.ts).
 *
 * - revoked through one instance: that instance refuses the key at once, the other as soon as the
 *   revocation's NOTIFY reaches it (well under a second here);
 * - a revocation whose notification never comes (written behind the service's back) still stops
 *   the key everywhere within SHARED_CACHE_TTL_MS.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE_TTL_MS } from '../../src/services/authentication.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/testApp.ts';

let database: TempDatabase;
let a: TestApp;
let b: TestApp;
let account: TestAccount;

beforeAll(async () => {
  database = await testDatabase();
  // Every instance on one database needs the same sealing key (README, "Running several instances").
  const env = { SECRETS_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=' };
  a = await startTestApp({ databaseUrl: database.url, env });
  b = await startTestApp({ databaseUrl: database.url, env });
  account = await a.newAccount();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

const status = async (app: TestApp, key: string) => (await app.clientFor(key).GET('/v1/account')).response.status;

/** Asks `app` with `key` until it answers 401; returns how long that took. */
async function msUntilRefused(app: TestApp, key: string, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if ((await status(app, key)) === 401) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`still accepted after ${limitMs} ms`);
}

describe('API key revocation with two instances on one database', () => {
  it('is refused at once by the revoking instance and within a second by the other', async () => {
    const created = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Shared' } });
    const key = created.data!.apiKey;
    // Both instances have read it and remember it as valid.
    for (const app of [a, b, a, b]) expect(await status(app, key)).toBe(200);

    const revoked = await account.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: created.data!.keyId } } });
    expect(revoked.response.status).toBe(200);
    expect(await status(a, key)).toBe(401);
    // The NOTIFY, not the age limit, ends it on b: far sooner than SHARED_CACHE_TTL_MS.
    expect(await msUntilRefused(b, key, SHARED_CACHE_TTL_MS)).toBeLessThan(Math.min(1_000, SHARED_CACHE_TTL_MS / 2));
    expect(await status(a, key)).toBe(401);
  });

  it('a revocation no instance hears about stops the key within the documented bound', async () => {
    const created = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Unheard' } });
    const key = created.data!.apiKey;
    for (const app of [a, b]) expect(await status(app, key)).toBe(200);

    // Written straight into the database: no pg_notify, as when a notification is lost.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2', [new Date().toISOString(), created.data!.keyId]);
    } finally {
      await client.end();
    }
    const committedAt = performance.now();
    const [onA, onB] = await Promise.all([msUntilRefused(a, key, SHARED_CACHE_TTL_MS + 2_000), msUntilRefused(b, key, SHARED_CACHE_TTL_MS + 2_000)]);
    const slack = 250; // one poll and one request on a busy machine
    expect(onA).toBeLessThanOrEqual(SHARED_CACHE_TTL_MS + slack);
    expect(onB).toBeLessThanOrEqual(SHARED_CACHE_TTL_MS + slack);
    expect(performance.now() - committedAt).toBeLessThanOrEqual(SHARED_CACHE_TTL_MS + 2 * slack);
  });
});
