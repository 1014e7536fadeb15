/**
 * The engine behind PgBouncer in transaction mode (DATABASE_POOLER=transaction), with a pool of 2
 * server connections so that every client shares them: no named prepared statement and no session
 * setting is left on a server connection, and what needs one session (the migrations' advisory
 * lock, LISTEN, cursors, COPY) goes to DATABASE_SESSION_URL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPgBouncer, type PgBouncer } from '../../scripts/lib/pgBouncer.ts';
import { createTempDatabase, type TempDatabase } from '../../scripts/lib/pgDatabase.ts';
import { decodeSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { openPgStore, type PgStore } from '../../src/store/postgres/pgStore.ts';
import { autocommit } from '../../src/store/store.ts';

const sealer = new SecretKeyring(decodeSecretsKey('BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=', 'SECRETS_KEY'));
let bouncer: PgBouncer;
let database: TempDatabase;
const stores: PgStore[] = [];

function open(): Promise<PgStore> {
  return openPgStore({ url: bouncer.through(database.url), pooler: 'transaction', sessionUrl: database.url, poolMax: 6, sealer }).then((store) => {
    stores.push(store);
    return store;
  });
}

beforeAll(async () => {
  bouncer = await startPgBouncer({ poolSize: 2 });
  database = await createTempDatabase('mos_test');
}, 30_000);
afterAll(async () => {
  for (const store of stores) await store.close().catch(() => {});
  await database?.drop();
  await bouncer?.stop();
});

it('two instances start together through the pooler and share its 2 server connections: every unit succeeds and no prepared statement is left on them', async () => {
  const [a, b] = await Promise.all([open(), open()]);
  await a.transaction((tx) => tx.run('CREATE TABLE pooler_probe (id INTEGER PRIMARY KEY, at TIMESTAMPTZ NOT NULL)'));
  const units: Array<Promise<unknown>> = [];
  for (let i = 0; i < 60; i++) {
    const store = i % 2 === 0 ? a : b;
    units.push(store.transaction((tx) => tx.run('INSERT INTO pooler_probe (id, at) VALUES (?, ?)', [i, '2026-11-21T18:30:00.123Z'])));
    units.push(store.read((db) => db.all('SELECT id FROM pooler_probe WHERE id < ?', [i])));
    units.push(autocommit(store, (tx) => tx.get('SELECT COUNT(*) AS n FROM pooler_probe')));
  }
  await Promise.all(units);
  const rows = await b.read((db) => db.all<{ n: number; at: string }>('SELECT COUNT(*) AS n, MIN(at) AS at FROM pooler_probe'));
  // Read back exactly, whatever time zone the pooled sessions have.
  expect(rows).toEqual([{ n: 60, at: '2026-11-21T18:30:00.123Z' }]);
  // Asked on a pooled connection: whichever server connection answers, it holds no statement of a client.
  for (let i = 0; i < 4; i++) {
    expect(await a.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pg_prepared_statements'))).toEqual({ n: 0 });
  }
  expect(await bouncer.serverConnections()).toBeLessThanOrEqual(2);
});

it('LISTEN, cursors and COPY run on the direct session connection: a NOTIFY committed through the pooler by one instance reaches the other', async () => {
  const [a, b] = stores as [PgStore, PgStore];
  let heard = 0;
  a.listen('pooler_probe', () => heard++);
  // The LISTEN is in place once a NOTIFY sent after it is heard: send until one is.
  for (let i = 0; i < 100 && heard === 0; i++) {
    await b.transaction((tx) => tx.get("SELECT pg_notify('pooler_probe', '')"));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(heard).toBeGreaterThan(0);

  const batches: number[] = [];
  for await (const batch of a.cursor('SELECT id FROM pooler_probe ORDER BY id', [], 25)) batches.push(batch.length);
  expect(batches).toEqual([25, 25, 10]);

  let copied = '';
  for await (const piece of b.copyText("SELECT id::text || E'\\n' FROM pooler_probe WHERE id < 3 ORDER BY id")) copied += piece.bytes.toString('utf8');
  expect(copied).toBe('0\n1\n2\n');
});
