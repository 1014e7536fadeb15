/**
 * Which engine the tests of this run use. `npm test` runs the API and contract suites twice (the
 * vitest projects `sqljs` and `postgres`, see vitest.config.ts); the postgres project sets
 * TEST_ENGINE=postgres, and every app it starts gets a PostgreSQL database of its own.
 */
import { createTempDatabase, type TempDatabase } from '../../scripts/lib/pgDatabase.ts';
import { startPgBouncer, type PgBouncer } from '../../scripts/lib/pgBouncer.ts';
import pg from 'pg';
import { afterAll } from 'vitest';

export type TestEngine = 'sqljs' | 'postgres';

export function testEngine(): TestEngine {
  return process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqljs';
}

export const onPostgres = (): boolean => testEngine() === 'postgres';

export type { TempDatabase };

/**
 * TEST_POOLER=pgbouncer (the vitest project `pgbouncer`): every database of this run is reached
 * through one PgBouncer in transaction mode, started on first use (scripts/lib/pgBouncer.ts), and
 * the apps and services get DATABASE_POOLER=transaction with the direct URL as DATABASE_SESSION_URL.
 */
const throughPooler = (): boolean => process.env.TEST_POOLER === 'pgbouncer';
let bouncer: Promise<PgBouncer> | null = null;
/** The pooled URLs this process handed out, and the direct URL of each. */
const sessionUrls = new Map<string, string>();

/** This test file's PgBouncer (TEST_POOLER=pgbouncer), started on first use and stopped after the file (or, should its process die first, by its watchdog). */
function testPgBouncer(): Promise<PgBouncer> {
  bouncer ??= startPgBouncer({ poolSize: 5 });
  return bouncer;
}
afterAll(async () => {
  const started = bouncer;
  bouncer = null;
  sessionUrls.clear();
  await (await started?.catch(() => null))?.stop();
});

/** The environment that points a service at `url`: with the pooler's settings when `url` goes through this run's PgBouncer. */
export function databaseEnv(url: string): Record<string, string> {
  const session = sessionUrls.get(url);
  return session === undefined ? { DATABASE_URL: url } : { DATABASE_URL: url, DATABASE_POOLER: 'transaction', DATABASE_SESSION_URL: session };
}

/** A fresh database (random name) for one app or test file; `drop()` removes it. Through PgBouncer with TEST_POOLER=pgbouncer. */
export async function testDatabase(): Promise<TempDatabase> {
  const database = await directTestDatabase();
  if (!throughPooler()) return database;
  const url = (await testPgBouncer()).through(database.url);
  sessionUrls.set(url, database.url);
  return { ...database, url };
}

async function directTestDatabase(): Promise<TempDatabase> {
  try {
    return await createTempDatabase('mos_test');
  } catch (err) {
    throw new Error(
      `PostgreSQL is not answering on 127.0.0.1:5432 (${(err as Error).message}). Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
      { cause: err },
    );
  }
}

/**
 * Everything a PostgreSQL database holds, as text: each table's name and every row cast to text.
 * What a test scans on PostgreSQL where on sql.js it scans the journal and snapshot files.
 */
export async function postgresContents(store: { read<T>(fn: (db: { all<R extends object>(sql: string, params?: readonly unknown[]): Promise<R[]> }) => Promise<T>): Promise<T> }): Promise<Buffer> {
  return store.read(async (db) => {
    const tables = await db.all<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    const parts: string[] = [];
    for (const { table_name: table } of tables) {
      parts.push(`table ${table}\n`);
      for (const row of await db.all<{ row: string }>(`SELECT CAST(t AS TEXT) AS row FROM ${table} t`)) parts.push(row.row, '\n');
    }
    return Buffer.from(parts.join(''), 'utf8');
  });
}

/** A store of this run's engine on fresh storage (a temp data directory, or a database of its own); close() removes it. */
export async function openTestStore(): Promise<{ store: import('../../src/store/open.ts').OpenedStore; dataDir: string; close(): Promise<void> }> {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const os = await import('node:os');
  const path = await import('node:path');
  const { openStore } = await import('../../src/store/open.ts');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-store-'));
  const database = onPostgres() ? await testDatabase() : null;
  const pooled = database ? sessionUrls.get(database.url) : undefined;
  const store = await openStore({ dataDir, database: { url: database?.url ?? null, poolMax: 8, ...(pooled ? { pooler: 'transaction' as const, sessionUrl: pooled } : {}) } });
  return {
    store,
    dataDir,
    async close() {
      await store.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` with a connection of its own to the database at `url`, closed after. */
export async function withDatabaseClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
