/**
 * Revocation across instances: two apps (two contexts, two stores, two pools) on one PostgreSQL
 * database, each remembering the keys it has seen (src/services/authentication.ts).
 *
 * - revoked through one instance: that instance refuses the key at once, the other as soon as the
 *   revocation's NOTIFY reaches it;
 * - a revocation whose notification never comes (written behind the service's back) still stops
 *   the key everywhere once SHARED_CACHE_TTL_MS has passed.
 *
 * Both instances share a manual clock that only the tests move, so what ends a key is known
 * without timing anything: while the clock stands still, the age limit cannot.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE_TTL_MS } from '../../src/services/authentication.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

let database: TempDatabase;
let a: TestApp;
let b: TestApp;
let account: TestAccount;
const clock = manualClock(Date.parse('2026-11-02T09:00:00Z'));

beforeAll(async () => {
  database = await testDatabase();
  // Every instance on one database needs the same sealing key (docs/operators/postgresql.md, "Running several instances").
  const env = { SECRETS_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=' };
  a = await startTestApp({ databaseUrl: database.url, env, clock });
  b = await startTestApp({ databaseUrl: database.url, env, clock });
  account = await a.newAccount();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

const status = async (app: TestApp, key: string) => (await app.clientFor(key).GET('/v1/account')).response.status;

/** Asks `app` with `key` until it answers 401 (a bound on a wait, not a measured figure). */
async function refusedEventually(app: TestApp, key: string): Promise<void> {
  await eventually(async () => (await status(app, key)) === 401, 15_000, 10);
}

describe('API key revocation with two instances on one database', () => {
  it('is refused at once by the revoking instance, and by the other on the NOTIFY (the clock stands still, so not by age)', async () => {
    const created = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Shared' } });
    const key = created.data!.apiKey;
    // Both instances have read it and remember it as valid.
    for (const app of [a, b, a, b]) expect(await status(app, key)).toBe(200);

    const revoked = await account.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: created.data!.keyId } } });
    expect(revoked.response.status).toBe(200);
    expect(await status(a, key)).toBe(401);
    await refusedEventually(b, key);
    expect(await status(a, key)).toBe(401);
  });

  it('a revocation no instance hears about stops the key once SHARED_CACHE_TTL_MS has passed, not before', async () => {
    const created = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Unheard' } });
    const key = created.data!.apiKey;
    for (const app of [a, b]) expect(await status(app, key)).toBe(200);

    // Written straight into the database: no pg_notify, as when a notification is lost.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2', [clock.now().toISOString(), created.data!.keyId]);
    } finally {
      await client.end();
    }
    // Nothing told them: each still trusts what it read, up to the limit...
    clock.advance(SHARED_CACHE_TTL_MS - 1);
    for (const app of [a, b]) expect(await status(app, key)).toBe(200);
    // ...and no longer: each reads the key again and refuses it.
    clock.advance(1);
    for (const app of [a, b]) expect(await status(app, key)).toBe(401);
  });
});
