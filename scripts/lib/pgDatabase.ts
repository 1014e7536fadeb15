/**
 * Throwaway PostgreSQL databases for tests and benchmarks: each gets a database of its own with a
 * random name, dropped afterwards, so runs never see each other's data. The server is the
 * machine's PostgreSQL on 127.0.0.1:5432 (trust authentication); PG_ADMIN_URL names another.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TempDatabase {
  name: string;
  /** DATABASE_URL of the new database. */
  url: string;
  /** Drops the database, ending whatever connections are still open to it. */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, application_name: 'mos-test-admin' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** True when the PostgreSQL server answers. */
export async function postgresAvailable(): Promise<boolean> {
  try {
    await admin((client) => client.query('SELECT 1'));
    return true;
  } catch {
    return false;
  }
}

export async function createTempDatabase(prefix = 'mos_test'): Promise<TempDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
