/** The database a DATABASE_URL names: the user it connects as, creating it on a fresh server, and the URL fit for a log. */
import os from 'node:os';
import pg from 'pg';
import { StoreUnavailableError } from '../core/errors.ts';

/**
 * A URL without a user name means the operating-system user, as with psql. The driver takes it from
 * $USER, which service managers and some shells leave unset: then ask the system.
 */
export function withUser(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username) return url;
    parsed.username = encodeURIComponent(os.userInfo().username);
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Creates the database the URL names when the server does not have it yet (so that
 * `DATABASE_URL=postgres://127.0.0.1/mos npm start` works on a fresh server), through the server's
 * `postgres` database. Instances starting together may both try: the loser's "already exists" is fine.
 */
export async function ensureDatabase(url: string, log: (msg: string, fields: Record<string, unknown>) => void): Promise<void> {
  const probe = new pg.Client({ connectionString: withUser(url) });
  try {
    await probe.connect();
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') return; // anything else is reported by the pool with context
  } finally {
    await probe.end().catch(() => {});
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: withUser(maintenance.toString()) });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    log('database created', { database: name });
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw new StoreUnavailableError(`database ${name} does not exist and could not be created: ${(err as Error).message}`, { cause: err });
  } finally {
    await admin.end().catch(() => {});
  }
}

/** The URL with any password hidden, for logs and messages. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}
