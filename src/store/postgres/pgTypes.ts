/** What the PostgreSQL engine (./pgStore.ts) takes and offers beyond Store. */
import type { SecretKeyring } from '../core/sealing.ts';
import type { SqlParams, SqlValue, Store } from '../store.ts';
import type { CopiedText } from './copyOut.ts';
import type { GroupCommitStats } from './groupCommit.ts';
import type { ReplicaStatus } from './replicas.ts';
import type { SharedSecretsStatus } from './secretsKey.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface PgStoreOptions {
  /** postgres://user@host:port/database */
  url: string;
  /** `transaction` when `url` goes through a pooler in transaction mode (DATABASE_POOLER); see ./connections.ts. */
  pooler?: 'transaction' | null;
  /** A direct URL of the same database for what needs a session (DATABASE_SESSION_URL); required with the pooler. */
  sessionUrl?: string | null;
  /** Streaming replicas for the reads that may use one (DATABASE_REPLICA_URLS…); see ./replicas.ts. */
  replicas?: { urls: string[]; readYourWritesMs: number; maxLagMs: number };
  /** Connections in the pool (DATABASE_POOL_MAX). */
  poolMax?: number;
  /** Parallel workers a CSV export's COPY may add (DATABASE_EXPORT_WORKERS, default 1). */
  exportWorkers?: number;
  /** Directory of PostgreSQL `NNN_name.sql` migrations; default `src/store/migrations/postgres`. */
  migrationsDir?: string;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  onLog?: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /**
   * Seals secret columns (webhook signing secrets, bank partner credentials). Every instance on one
   * database must hold the same key (SECRETS_KEY), or it cannot open what another sealed: the store
   * refuses to open when it cannot (see ./secretsKey.ts).
   */
  sealer: SecretKeyring;
  /** Where the sealing key came from ("SECRETS_KEY", "the key file …"), for the message of a refusal. */
  sealerOrigin?: string;
  /** The key file the sealing key was read from; null (the default) when it came from SECRETS_KEY. */
  keyFile?: string | null;
}

export interface PgStoreStats {
  /** Write transactions committed by this process (the counterpart of the sql.js LSN: tests check "nothing was written"). */
  lsn: number;
  /** Connections open / idle / waited for. */
  pool: { total: number; idle: number; waiting: number };
  /** Statements sent (BEGIN and COMMIT included), and the waits for an answer they cost: two statements written together are one wait. */
  statements: number;
  roundTrips: number;
  /** Autocommit INSERTs that shared a statement (./groupCommit.ts). */
  groupCommit: GroupCommitStats;
  /** With DATABASE_REPLICA_URLS: each replica, and the replica reads that went to the primary. */
  replicas: { replicas: ReplicaStatus[]; readYourWrites: number; fallbacks: number } | null;
}

export interface PgStore extends Store {
  readonly dialect: 'postgres';
  readonly sharedByInstances: true;
  stats(): PgStoreStats;
  /** Nothing to do: PostgreSQL is durable at commit. Kept so callers need not ask the engine. */
  checkpoint(): Promise<void>;
  cursor(sql: string, params: SqlParams, batchSize: number): AsyncGenerator<SqlValue[][]>;
  copyText(select: string): AsyncGenerator<CopiedText>;
  listen(channel: string, listener: () => void): () => void;
  /** The operator's `secrets status`: this process's key, the key the database records, how many values are sealed. */
  secretsStatus(): Promise<SharedSecretsStatus>;
  /** The operator's `secrets rotate-key`: refused, with the procedure (the key is every instance's: see ./secretsKey.ts). */
  rotateSecretsKey(): Promise<never>;
}
