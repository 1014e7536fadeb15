/**
 * The settings of storage: the database engine, the sealing of secrets at rest, and the embedded
 * store's continuous archive. Read by loadConfig (src/config.ts) from the same environment, kept
 * apart by concern; docs/operators/configuration.md renders these comments too (scripts/config-docs.ts).
 */
import path from 'node:path';
import { integer, type Env } from '../configValues.ts';
import { postgresScaleSettings, postgresUrlProblem, type PostgresScaleConfig } from './postgres.ts';

/** Where the key that seals secrets at rest comes from. */
export interface SecretsConfig {
  /** SECRETS_KEY: 32 bytes, base64 or hex. When unset, the key file is used (created 0600 on first start). */
  key: string | null;
  /** SECRETS_KEY_PREVIOUS: comma-separated older keys, loaded only to re-seal values during a rotation of SECRETS_KEY. */
  previousKeys: string[];
  /** SECRETS_KEY_FILE: the key file when SECRETS_KEY is unset (default DATA_DIR/secrets.key). */
  keyFile: string;
}

/** Settings of the database; see docs/operators/postgresql.md. */
export interface DatabaseConfig extends PostgresScaleConfig {
  /**
   * DATABASE_URL: `postgres://user[:password]@host[:port]/database[?…]`. Set: the PostgreSQL
   * engine, shared by every instance pointed at it. Unset (the default): sql.js in DATA_DIR.
   */
  url: string | null;
  /** DATABASE_POOL_MAX: connections each instance keeps to PostgreSQL at most (default 10). */
  poolMax: number;
  /** DATABASE_EXPORT_WORKERS: parallel workers a big CSV export may add on PostgreSQL (default 1; 0 keeps it to one core). */
  exportWorkers: number;
}

/** Continuous archiving of the embedded store (sql.js): every journal batch and snapshot copied to another directory; see docs/operators/backups.md#continuous-archiving. */
export interface ArchiveConfig {
  /**
   * ARCHIVE_DIR: where the embedded store copies every journal segment, snapshot and document as it
   * goes (mount it on other storage); unset (the default) turns archiving off. Ignored on PostgreSQL,
   * whose WAL archiving does the same (docs/operators/backups.md).
   */
  dir: string | null;
  /** ARCHIVE_MAX_DELAY_MS: the longest an acknowledged write waits before it is in the archive while the archive is writable (default 1000). */
  maxDelayMs: number;
  /** ARCHIVE_RETENTION_DAYS: the archive keeps what restores to any moment of this many days (default 7); older files are deleted. */
  retentionDays: number;
}

/** Reads the storage settings, collecting problems like loadConfig. */
export function storageSettings(env: Env, cwd: string, dataDir: string, problems: string[]) {
  const secretsKey = env.SECRETS_KEY?.trim() || null;
  const previousKeys = (env.SECRETS_KEY_PREVIOUS ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  for (const [name, value] of [['SECRETS_KEY', secretsKey], ...previousKeys.map((k) => ['SECRETS_KEY_PREVIOUS', k] as const)] as const) {
    if (value === null) continue;
    const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? 32 : /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64').length : -1;
    if (bytes !== 32) problems.push(`${name} must be 32 bytes in base64 or hex (e.g. openssl rand -base64 32)`);
  }
  const secrets: SecretsConfig = {
    key: secretsKey,
    previousKeys,
    keyFile: path.resolve(cwd, env.SECRETS_KEY_FILE?.trim() || path.join(dataDir, 'secrets.key')),
  };
  const storageProbeIntervalMs = integer(env, 'STORAGE_PROBE_INTERVAL_MS', 1000, 10, 60_000, problems);
  const databaseUrl = env.DATABASE_URL?.trim() || null;
  if (databaseUrl !== null) {
    const problem = postgresUrlProblem('DATABASE_URL', databaseUrl);
    if (problem) problems.push(problem);
  }
  const poolMax = integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000, problems);
  const database: DatabaseConfig = {
    url: databaseUrl,
    poolMax,
    exportWorkers: integer(env, 'DATABASE_EXPORT_WORKERS', 1, 0, 8, problems),
    ...postgresScaleSettings(env, databaseUrl, problems),
  };

  const archiveDir = env.ARCHIVE_DIR?.trim() || null;
  const archive: ArchiveConfig = {
    dir: archiveDir === null ? null : path.resolve(cwd, archiveDir),
    maxDelayMs: integer(env, 'ARCHIVE_MAX_DELAY_MS', 1000, 10, 600_000, problems),
    retentionDays: integer(env, 'ARCHIVE_RETENTION_DAYS', 7, 1, 3650, problems),
  };
  if (archive.dir !== null && (archive.dir === dataDir || archive.dir.startsWith(dataDir + path.sep))) {
    problems.push('ARCHIVE_DIR must be outside DATA_DIR: an archive is worth something only where the data directory is not');
  }
  return { secrets, storageProbeIntervalMs, database, archive };
}
