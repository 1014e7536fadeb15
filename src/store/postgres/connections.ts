/**
 * Where the engine's connections go, with or without a pooler in transaction mode in front of
 * PostgreSQL (DATABASE_POOLER=transaction, PgBouncer's `pool_mode = transaction`).
 *
 * Through such a pooler one client connection meets a different server session at every
 * transaction, so nothing of a session may outlive a transaction on it: no named prepared
 * statements (./statements.ts sends unnamed ones), and no startup `options` (PgBouncer refuses
 * them, and could not keep them anyway). Without `-c TimeZone=UTC`, timestamps come back in the
 * database's time zone and take ./sql.ts's slower exact path unless the database's own `timezone`
 * is UTC. What needs one session for longer — the migrations' advisory lock, LISTEN, COPY exports,
 * cursors — goes to DATABASE_SESSION_URL, a direct connection that keeps the session options.
 */
import type pg from 'pg';
import { pgTypes } from './sql.ts';
import { withUser } from './database.ts';

export interface ConnectionTargets {
  /** The request path's pool: through the pooler when there is one. */
  pooled: pg.ClientConfig;
  /** Connections that hold a session: direct (DATABASE_SESSION_URL) with a pooler, else the same server as `pooled`. */
  session: pg.ClientConfig;
  /** True when `pooled` goes through a pooler in transaction mode. */
  transactionPooler: boolean;
}

export function connectionTargets(options: { url: string; sessionUrl?: string | null; pooler?: 'transaction' | null; applicationName?: string }): ConnectionTargets {
  const base = { application_name: options.applicationName ?? 'mortgage-origination', types: pgTypes };
  // UTC sessions: timestamptz comes back in the form ./sql.ts rewrites fastest.
  const utc = '-c TimeZone=UTC';
  if (options.pooler !== 'transaction') {
    const direct: pg.ClientConfig = { ...base, connectionString: withUser(options.url), options: utc };
    return { pooled: direct, session: direct, transactionPooler: false };
  }
  if (!options.sessionUrl) throw new Error('DATABASE_POOLER=transaction needs DATABASE_SESSION_URL (a direct URL of the same database)');
  return {
    pooled: { ...base, connectionString: withUser(options.url) },
    session: { ...base, connectionString: withUser(options.sessionUrl), options: utc },
    transactionPooler: true,
  };
}
