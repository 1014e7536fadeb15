/**
 * The persistence interface every repository is written against.
 *
 * Kept deliberately small and portable: the SQL passed through it must run unchanged on
 * PostgreSQL (a second engine is planned beside sql.js), so positional `?` parameters are
 * used and nothing engine-specific (sql.js statements, `db.exec`) leaks outside `src/store/`.
 *
 * Values computed from the clock or randomness are always bound as parameters, never
 * produced inside SQL: the sql.js engine replays its journal statement by statement, and
 * replay must rebuild the identical database.
 */
import type { KeyPurpose } from '../domain/keys/derivedKeys.ts';

export type SqlValue = string | number | null | Uint8Array;
export type SqlParams = readonly SqlValue[];
export type Row = Record<string, SqlValue>;

/**
 * Seals secrets before they are stored and opens them when read (AES-256-GCM under the store's
 * key, given when the store is opened). Repositories seal every secret column, so the journal,
 * snapshot and backups never hold a secret in plain text; services see plain values only.
 */
export interface SecretSealer {
  /** `plaintext` sealed for the row `context` names (the same context opens it). */
  seal(plaintext: string, context: string): string;
  /** Opens a sealed value; throws when it was not sealed for `context` or under a loaded key. */
  open(sealed: string, context: string): string;
  isSealed(value: string): boolean;
  /**
   * The key of `purpose` derived from the sealing key (or from the loaded key of id `keyId`), with
   * that key's id; null when no such key is loaded. See src/domain/keys/derivedKeys.ts.
   */
  purposeKey(purpose: KeyPurpose, keyId?: string): { keyId: string; key: Buffer } | null;
}

/**
 * Which SQL engine runs the statements. Repositories stay on portable SQL; the few places that
 * gain from an engine-specific clause (`FOR UPDATE`, `SKIP LOCKED`, `pg_notify`) ask this.
 * Absent means 'sqlite' (sql.js).
 */
export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Rows a repository may remember between units of work, under a key naming them, until a write of
 * theirs forgets them. Only an engine that is its database's one writer offers it (sql.js: one
 * process, one transaction at a time), so nothing can change a row behind it; that engine empties
 * it whenever a transaction rolls back or its memory is rebuilt from disk. A repository that
 * remembers a row forgets it in every statement that changes the row, in the same transaction.
 */
export interface RowMemo {
  get<T>(key: string): T | undefined;
  set(key: string, value: unknown): void;
  forget(key: string): void;
}

/** What a repository can do with the database inside one unit of work. */
export interface SqlExecutor {
  readonly dialect?: SqlDialect;
  /** Seals and opens secret columns (see SecretSealer). */
  readonly sealer: SecretSealer;
  /** Present on sql.js only (see RowMemo); absent, every read goes to the database. */
  readonly memo?: RowMemo;
  /** A statement that changes data; returns the number of rows it changed. */
  run(sql: string, params?: SqlParams): Promise<{ changes: number }>;
  /** The first row of a query, or undefined. */
  get<T extends object = Row>(sql: string, params?: SqlParams): Promise<T | undefined>;
  /** Every row of a query. Use keyset pagination for anything unbounded. */
  all<T extends object = Row>(sql: string, params?: SqlParams): Promise<T[]>;
  /**
   * Every row of a query as an array of its column values, in the SELECT's order: for long, wide
   * scans (exports), where building an object per row costs as much as reading it. (PostgreSQL
   * drivers read rows this way too: node-postgres `rowMode: 'array'`.)
   */
  values(sql: string, params?: SqlParams): Promise<SqlValue[][]>;
}

/** A read-write transaction. Everything run through it commits or rolls back together. */
export type Tx = SqlExecutor;

export interface Store {
  /** Absent means 'sqlite' (the embedded sql.js engine). */
  readonly dialect?: SqlDialect;
  /**
   * True when other processes may share this database at once (PostgreSQL): in-process state
   * (idempotency keys in flight, rate-limit counters, dispatcher wake-ups) must then live in the
   * database. Absent means false: sql.js allows one process per data directory.
   */
  readonly sharedByInstances?: boolean;
  /**
   * Runs `fn` in one serialised read-write transaction. Resolves only once the commit is
   * durable (journalled and fsynced); rejects, with nothing written, when `fn` throws.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` whose statements need not commit together: each is atomic and durable on its own
   * before it resolves (PostgreSQL: autocommit, so a unit of one INSERT costs one round trip and no
   * BEGIN or COMMIT, and concurrent units' one-row INSERTs may share a statement and its commit).
   * A statement that ran stays when a later one, or `fn`, fails. Absent (sql.js),
   * `autocommit()` below runs `fn` as one transaction.
   */
  autocommit?<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs `fn` against a consistent view of committed data. Never sees another transaction's uncommitted writes. */
  read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T>;
  /** True while the store is open and accepting work (used by GET /readyz). */
  isOpen(): boolean;
  /** Finishes queued work, writes a checkpoint and releases the data directory. */
  close(): Promise<void>;
  /**
   * Reads a long query a batch at a time through a server-side cursor (PostgreSQL only; sql.js
   * paginates by key instead), each row an array of its column values in the SELECT's order, as
   * `values` gives them. Ending the iteration early (`return`, a `break`, an error) closes the
   * cursor and ends the query.
   */
  cursor?(sql: string, params: SqlParams, batchSize: number): AsyncGenerator<SqlValue[][]>;
  /**
   * Runs `COPY (select) TO STDOUT` (PostgreSQL only) for a SELECT of one text column that is never
   * NULL, and yields the values as bytes, every row's back to back, as they arrive: for text the
   * database writes whole (the CSV export's lines), which never becomes JavaScript values. The
   * SELECT is sent as text: COPY takes no bound parameters, so its values must be literals
   * escaped by the caller. Ending the iteration early ends the query.
   */
  copyText?(select: string): AsyncGenerator<{ bytes: Buffer; rows: number }>;
  /** Calls `listener` when another instance (or this one) notifies `channel` (PostgreSQL LISTEN/NOTIFY). Returns the unsubscribe function. */
  listen?(channel: string, listener: () => void): () => void;
  /** sql.js only: 'degraded' while the disk refuses writes (reads still answer), 'closed' once closed. */
  storageState?(): 'ok' | 'degraded' | 'closed';
  /** sql.js only: the database's size in memory, in bytes (the service's memory grows with it by design). */
  databaseBytes?(): number;
  /** sql.js only: a document's file was put in place at `file` (the continuous archive copies it). */
  documentStored?(documentId: string, file: string): void;
  /** sql.js only: the continuous archive's state and lag (null when ARCHIVE_DIR is not set). */
  archiveStatus?(): { state: 'ok' | 'failing' | 'refused'; archivedLsn: number; lastSuccessMs: number | null; lagBytes: number; lagSeconds: number; problem: string | null } | null;
  /**
   * PostgreSQL with DATABASE_REPLICA_URLS: the store as an operation that only reads and tolerates
   * bounded staleness (`x-read-replica: true`) sees it for `client` (an API key): read(), cursor()
   * and copyText() on a replica when one is usable for that client, the rest on the primary.
   * Without replicas: the store itself.
   */
  forReplicaReads?(client: string): Store;
  /** PostgreSQL with replicas: `client` wrote; its reads stay on the primary until a replica replayed it (DATABASE_READ_YOUR_WRITES_MS at most). */
  clientWrote?(client: string): void;
  /** Reports the engine's work to `observer` from now on (metrics and traces; see StoreObserver); null stops it. */
  observe?(observer: StoreObserver | null): void;
}

/** The engine, as metrics and traces name it. */
export type StoreEngine = 'sqljs' | 'postgres';

/**
 * Timed parts of an engine's own work: sql.js's journal flush (one write and fsync for a group of
 * commits), a checkpoint and the snapshot it writes; PostgreSQL's wait for a pooled connection,
 * each statement, and the COMMIT.
 */
export type StorePhase = 'journal_flush' | 'checkpoint' | 'snapshot' | 'pool_wait' | 'query' | 'commit';

/**
 * What an engine tells about its work, given to it by the context (src/observability/ makes one
 * from the metrics and the tracer): the store imports nothing of how it is counted or traced.
 */
export interface StoreObserver {
  /**
   * Runs one transaction or read (`run`, from the call to its durable commit) and sees how it
   * ended; `run` counts each statement it executes in `unit.statements`.
   */
  unit<T>(engine: StoreEngine, kind: 'transaction' | 'read', run: (unit: { statements: number }) => Promise<T>): Promise<T>;
  phase(engine: StoreEngine, phase: StorePhase, seconds: number): void;
}

/** Runs `fn` through the store's autocommit where it has one, else as one transaction (see Store.autocommit). */
export function autocommit<T>(store: Store, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return store.autocommit ? store.autocommit(fn) : store.transaction(fn);
}

/** The store's dialect ('sqlite' when it does not say). */
export function dialectOf(db: { readonly dialect?: SqlDialect }): SqlDialect {
  return db.dialect ?? 'sqlite';
}

/** Notifies `channel` when `db`'s transaction commits (PostgreSQL NOTIFY, every instance hears it); nothing on sql.js's one process. */
export async function notifyOnCommit(db: SqlExecutor, channel: string): Promise<void> {
  if (dialectOf(db) === 'postgres') await db.get('SELECT pg_notify(?, ?) AS notified', [channel, '']);
}

/**
 * The row-lock clause to append to a SELECT: ` FOR UPDATE` and its `modifiers` (`OF d`,
 * `SKIP LOCKED`) on PostgreSQL; nothing on sql.js, which runs one transaction at a time already.
 */
export function forUpdate(db: { readonly dialect?: SqlDialect }, modifiers = ''): string {
  return dialectOf(db) === 'postgres' ? ` FOR UPDATE${modifiers ? ` ${modifiers}` : ''}` : '';
}
