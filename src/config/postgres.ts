/**
 * The settings of PostgreSQL beyond DATABASE_URL: a connection pooler in front of it and the
 * streaming replicas that reads may go to. Read by storageSettings (./storage.ts) from the same
 * environment; docs/operators/configuration.md renders these comments (scripts/config-docs.ts).
 * See docs/operators/postgresql.md#behind-a-connection-pooler-pgbouncer and #read-replicas.
 */
import { integer, type Env } from '../configValues.ts';

/** Many instances on one primary: a pooler in front of it, and replicas for reads. */
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
  /**
   * DATABASE_REPLICA_URLS: comma-separated URLs of streaming replicas of DATABASE_URL's database.
   * Reads the contract marks `x-read-replica: true` (lists, exports, the events feed, audit and
   * request-log reads) go to one of them; everything else to the primary. Unset (the default): none.
   */
  replicaUrls: string[];
  /**
   * DATABASE_READ_YOUR_WRITES_MS: after a client (an API key, a dashboard session) writes, its
   * reads go to the primary for this long, or until a replica has replayed its last commit (default 2000).
   */
  readYourWritesMs: number;
  /** DATABASE_REPLICA_MAX_LAG_MS: a replica whose replay lags the primary by more than this is not used until it catches up (default 5000). */
  replicaMaxLagMs: number;
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
  const replicaUrls = (env.DATABASE_REPLICA_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  for (const url of replicaUrls) {
    const problem = postgresUrlProblem('each of DATABASE_REPLICA_URLS', url);
    if (problem) problems.push(problem);
  }
  if (replicaUrls.length > 0 && databaseUrl === null) problems.push('DATABASE_REPLICA_URLS needs DATABASE_URL: replicas are of a PostgreSQL primary');
  return {
    pooler,
    sessionUrl,
    replicaUrls,
    readYourWritesMs: integer(env, 'DATABASE_READ_YOUR_WRITES_MS', 2000, 0, 600_000, problems),
    replicaMaxLagMs: integer(env, 'DATABASE_REPLICA_MAX_LAG_MS', 5000, 10, 3_600_000, problems),
  };
}
