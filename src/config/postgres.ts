/**
 * The settings of PostgreSQL beyond DATABASE_URL: a connection pooler in front of it. Read by storageSettings (./storage.ts) from the same
 * environment; docs/operators/configuration.md renders these comments (scripts/config-docs.ts).
 * See docs/operators/postgresql.md#behind-a-connection-pooler-pgbouncer.
 */
import type { Env } from '../configValues.ts';

/** Many instances on one primary: a pooler in front of it. */
export interface PostgresScaleConfig {
  /**
   * DATABASE_POOLER: `transaction` when DATABASE_URL reaches PostgreSQL through a pooler in
   * transaction mode (PgBouncer `pool_mode = transaction`): no named prepared statements and no
   * session settings on its connections; unset or `off` (the default): DATABASE_URL is direct.
   */
  pooler: 'transaction' | null;
  /**
   * DATABASE_SESSION_URL: a direct connection to the same database, not through the pooler, for
   * what needs one session: the migrations' advisory lock, LISTEN, COPY exports and long cursors.
   * Required with DATABASE_POOLER=transaction; ignored without it.
   */
  sessionUrl: string | null;
}

/** A postgres:// URL naming a database, or a problem naming `name` (never echoing the value: it may hold a password). */
export function postgresUrlProblem(name: string, value: string): string | null {
  let parsed: URL | null = null;
  try {
    parsed = new URL(value);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') || parsed.pathname.length <= 1) {
    return `${name} must be a PostgreSQL URL naming a database, like postgres://user@127.0.0.1:5432/mos`;
  }
  return null;
}

/** Reads the pooler and replica settings, collecting problems like loadConfig. */
export function postgresScaleSettings(env: Env, databaseUrl: string | null, problems: string[]): PostgresScaleConfig {
  const poolerRaw = (env.DATABASE_POOLER?.trim() || 'off').toLowerCase();
  if (poolerRaw !== 'off' && poolerRaw !== 'transaction') problems.push(`DATABASE_POOLER must be transaction or off, got "${env.DATABASE_POOLER}"`);
  const pooler = poolerRaw === 'transaction' ? 'transaction' : null;
  const sessionUrl = env.DATABASE_SESSION_URL?.trim() || null;
  if (sessionUrl !== null) {
    const problem = postgresUrlProblem('DATABASE_SESSION_URL', sessionUrl);
    if (problem) problems.push(problem);
  }
  if (pooler !== null && databaseUrl !== null && sessionUrl === null) {
    problems.push(
      'DATABASE_POOLER=transaction needs DATABASE_SESSION_URL: a direct URL of the same database (not through the pooler) for migrations, LISTEN, COPY exports and cursors',
    );
  }
  return {
    pooler,
    sessionUrl,
  };
}
