/**
 * The durable embedded engine: sql.js (SQLite compiled to WebAssembly, in memory) made
 * durable by a write-ahead journal and periodic snapshots.
 *
 * - Every committed write transaction is one journal record (its write statements and bound
 *   parameters), fsynced before the transaction resolves; concurrent commits share fsyncs.
 * - A checkpoint exports the whole database to `snapshot.db` (atomically, via rename) and
 *   empties the journal. The snapshot stores the last LSN it contains (`_engine_meta`), so a
 *   journal left behind by a crash between rename and truncate is skipped, never re-applied.
 * - At open: load the snapshot, replay the journal, checkpoint, apply migrations.
 * - Everything (transactions, reads, checkpoints) runs through one FIFO queue.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import initSqlJs from 'sql.js';
import type { BindParams, Database, SqlJsStatic, Statement } from 'sql.js';
import type { Row, SqlExecutor, SqlParams, SqlValue, Store, Tx } from '../store.ts';
import { StoreCorruptionError, StoreUnavailableError } from './errors.ts';
import { Journal, encodeRecord, recoverJournal } from './journal.ts';
import type { JournalOp, JournalRecord } from './journal.ts';
import { acquireLock } from './lock.ts';
import type { DataDirLock } from './lock.ts';
import { SCHEMA_MIGRATIONS_DDL, applyMigrations, loadMigrations } from './migrate.ts';
import type { Migration } from './migrate.ts';

export { lockHolderPid } from './lock.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface SqlJsStoreOptions {
  dataDir: string;
  /** Directory of `NNN_name.sql` migrations; default `src/store/migrations`. */
  migrationsDir?: string;
  /** Journal size that triggers a background checkpoint; default 64 MiB. */
  checkpointBytes?: number;
  onLog?: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
}

export interface StoreStats {
  /** Bytes durably in the journal since the last checkpoint. */
  journalBytes: number;
  /** LSN of the last committed write transaction. */
  lsn: number;
  /** LSN of the last write transaction known durable. */
  durableLsn: number;
  /** Journal fsyncs since open (group commit makes this far fewer than commits). */
  fsyncs: number;
  checkpoints: number;
}

export interface SqlJsStoreExtra {
  /** Writes a snapshot and empties the journal (queued like a transaction). */
  checkpoint(): Promise<void>;
  stats(): StoreStats;
}

export type SqlJsStore = Store & SqlJsStoreExtra;

const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
const DEFAULT_CHECKPOINT_BYTES = 64 * 1024 * 1024;
const META_DDL = 'CREATE TABLE IF NOT EXISTS _engine_meta (id INTEGER PRIMARY KEY CHECK (id = 1), last_lsn INTEGER NOT NULL)';

let sqlJs: Promise<SqlJsStatic> | undefined;
function loadSqlJs(): Promise<SqlJsStatic> {
  if (!sqlJs) {
    const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
    sqlJs = initSqlJs({ locateFile: () => wasm });
    sqlJs.catch(() => (sqlJs = undefined));
  }
  return sqlJs;
}

/** Normalises a parameter list: booleans become 0/1; anything replay could not reproduce is refused. */
function bindable(params: SqlParams | undefined): SqlValue[] {
  if (!params) return [];
  return params.map((v: unknown, i) => {
    if (v === null || typeof v === 'string' || typeof v === 'number' || v instanceof Uint8Array) return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    throw new TypeError(`SQL parameter ${i + 1} has unsupported type ${v === undefined ? 'undefined' : typeof v}`);
  });
}

/** Statements read through tx.get/tx.all that need no journal record. */
function isPureRead(sql: string): boolean {
  const head = sql.trimStart().slice(0, 6).toUpperCase();
  return head === 'SELECT' || (head.startsWith('WITH') && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql));
}

/** Prepared statements kept per SQL text; preparing costs more than running a typical indexed query. */
const STATEMENT_CACHE_SIZE = 256;

const TX_CONTROL = /^\s*(BEGIN|COMMIT|END)\b|^\s*ROLLBACK\s*(TRANSACTION\s*)?;?\s*$/i;

type Mode = 'run' | 'get' | 'all' | 'values';

class SqlJsEngine implements SqlJsStore {
  private readonly db: Database;
  private journal!: Journal; // set by recover()
  private readonly lock: DataDirLock;
  private readonly dir: string;
  private readonly checkpointBytes: number;
  private readonly log: (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
  private readonly jobContext = new AsyncLocalStorage<object>();
  private currentJob: object | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private lsn = 0;
  private checkpoints = 0;
  /** LSN contained in snapshot.db (-1: no snapshot yet). */
  private snapshotLsn = -1;
  private checkpointQueued = false;
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;
  private closed = false;

  private readonly hasSnapshot: boolean;

  constructor(db: Database, hasSnapshot: boolean, dir: string, lock: DataDirLock, options: SqlJsStoreOptions) {
    this.db = db;
    this.hasSnapshot = hasSnapshot;
    this.dir = dir;
    this.lock = lock;
    this.checkpointBytes = options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES;
    const onLog = options.onLog;
    this.log = (level, msg, fields = {}) => onLog?.(level, msg, { dataDir: dir, ...fields });
  }

  // ---- opening -------------------------------------------------------------------------

  async recover(): Promise<void> {
    this.configureConnection(); // replay must reproduce ON DELETE CASCADE etc.
    this.db.run(META_DDL);
    this.db.run('INSERT OR IGNORE INTO _engine_meta (id, last_lsn) VALUES (1, 0)');
    this.db.run(SCHEMA_MIGRATIONS_DDL);
    const snapshotLsn = Number(this.db.exec('SELECT last_lsn FROM _engine_meta')[0]!.values[0]![0]);
    this.lsn = snapshotLsn;
    if (this.hasSnapshot) this.snapshotLsn = snapshotLsn;

    const journalPath = join(this.dir, 'journal.log');
    const recovered = await recoverJournal(journalPath);
    if (recovered.tornBytes > 0) this.log('warn', 'ignored torn journal tail', { bytes: recovered.tornBytes });
    let replayed = 0;
    for (const record of recovered.records) {
      if (record.lsn <= snapshotLsn && this.lsn === snapshotLsn) continue; // already in the snapshot
      if (record.lsn !== this.lsn + 1) {
        throw new StoreCorruptionError(
          `${journalPath}: record lsn ${record.lsn} does not follow lsn ${this.lsn} (snapshot at ${snapshotLsn}); snapshot and journal do not match`,
        );
      }
      this.replay(record);
      this.lsn = record.lsn;
      replayed++;
    }
    this.journal = await Journal.open(journalPath, recovered.goodBytes, this.lsn, (err) => this.fail(err));
    if (!recovered.existed) await syncDir(this.dir);
    this.log('info', 'store opened', { snapshotLsn, replayed, skipped: recovered.records.length - replayed, lsn: this.lsn });
    if (recovered.records.length > 0) await this.writeCheckpoint();
  }

  private replay(record: JournalRecord): void {
    this.db.run('BEGIN');
    try {
      for (const op of record.ops) {
        if (op.kind === 'exec') this.db.exec(op.sql);
        else this.execute(op.sql, op.params, 'run');
      }
      this.db.run('COMMIT');
    } catch (err) {
      this.rollback();
      throw new StoreCorruptionError(`journal replay failed at lsn ${record.lsn}: ${(err as Error).message}`, { cause: err });
    }
  }

  async migrate(migrationsDir: string): Promise<void> {
    const migrations = await loadMigrations(migrationsDir);
    if (migrations === null) {
      this.log('warn', 'migrations directory not found', { migrationsDir });
      return;
    }
    const applied = await applyMigrations(
      {
        appliedVersions: () => this.read(async (db) => new Set((await db.all<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version))),
        apply: (m: Migration) =>
          this.write(async (tx, exec) => {
            exec(m.sql);
            await tx.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [m.version, new Date().toISOString()]);
          }),
      },
      migrations,
      (msg, fields) => this.log('warn', msg, fields),
    );
    if (applied.length > 0) this.log('info', 'migrations applied', { versions: applied });
  }

  // ---- public API ----------------------------------------------------------------------

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.write(fn);
  }

  async read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T> {
    this.assertAccepting('read');
    const { value, durable } = await this.enqueue(async () => {
      let active = true;
      const guard = (sql: string, params: SqlParams | undefined, mode: Mode) => {
        if (!active) throw new Error('read executor used after read() finished');
        // The queue already isolates a read from every transaction; refusing writes here keeps it a read.
        if (!isPureRead(sql) && !/^\s*PRAGMA\s+[a-z_]+\s*(\([^)]*\))?\s*;?\s*$/i.test(sql)) throw new Error('only SELECT statements are allowed inside read(); use transaction()');
        return this.execute(sql, bindable(params), mode);
      };
      const executor: SqlExecutor = {
        run: async () => {
          throw new Error('run() is not allowed inside read(); use transaction()');
        },
        get: async <R extends object = Row>(sql: string, params?: SqlParams) => guard(sql, params, 'get') as R | undefined,
        all: async <R extends object = Row>(sql: string, params?: SqlParams) => guard(sql, params, 'all') as R[],
        values: async (sql: string, params?: SqlParams) => guard(sql, params, 'values') as SqlValue[][],
      };
      try {
        return { value: await fn(executor), durable: this.journal.flushed() };
      } finally {
        active = false;
      }
    });
    await durable; // never show data a crash could still lose
    return value;
  }

  isOpen(): boolean {
    return !this.closing && !this.failure;
  }

  async checkpoint(): Promise<void> {
    this.assertAccepting('checkpoint');
    return this.enqueue(() => this.writeCheckpoint());
  }

  stats(): StoreStats {
    const j = this.journal;
    return { journalBytes: j.bytes, lsn: this.lsn, durableLsn: j.durableLsn, fsyncs: j.fsyncs, checkpoints: this.checkpoints };
  }

  close(): Promise<void> {
    this.closing ??= this.enqueue(async () => {
      try {
        if (!this.failure && this.lsn !== this.snapshotLsn) await this.writeCheckpoint();
      } finally {
        this.closed = true;
        await this.journal.close().catch(() => {});
        this.forgetStatements();
        this.db.close();
        this.lock.release();
        this.log('info', 'store closed', { lsn: this.lsn });
      }
    }, true);
    return this.closing;
  }

  /** Releases everything without a checkpoint (a failed open must not overwrite the snapshot). */
  async dispose(): Promise<void> {
    this.closed = true;
    this.closing ??= Promise.resolve();
    await this.journal?.close().catch(() => {});
    this.forgetStatements();
    this.db.close();
    this.lock.release();
  }

  // ---- internals -----------------------------------------------------------------------

  /** Runs `job` after every job queued before it; a job holds the queue until it settles. */
  private enqueue<T>(job: () => Promise<T>, evenIfFailed = false): Promise<T> {
    const token = {};
    const run = this.tail.then(async () => {
      if (this.closed) throw new StoreUnavailableError('store is closed');
      if (this.failure && !evenIfFailed) throw this.unavailable();
      this.currentJob = token;
      try {
        return await this.jobContext.run(token, job);
      } finally {
        this.currentJob = null;
      }
    });
    this.tail = run.catch(() => {});
    return run;
  }

  private assertAccepting(what: string): void {
    if (this.failure) throw this.unavailable();
    if (this.closing) throw new StoreUnavailableError('store is closed');
    if (this.currentJob !== null && this.jobContext.getStore() === this.currentJob) {
      throw new Error(`${what}() called inside a transaction or read of the same store; it would deadlock`);
    }
  }

  private unavailable(): StoreUnavailableError {
    return new StoreUnavailableError('store failed: a journal write could not be made durable', { cause: this.failure });
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.log('error', 'journal write failed; store stopped accepting work', { err: err.message });
  }

  private async write<T>(fn: (tx: Tx, exec: (sql: string) => void) => Promise<T>): Promise<T> {
    this.assertAccepting('transaction');
    const { value, durable } = await this.enqueue(async () => {
      const ops: JournalOp[] = [];
      let active = true;
      const guard = (sql: string, params: SqlParams | undefined, mode: Mode) => {
        if (!active) throw new Error('transaction executor used after its transaction finished');
        if (TX_CONTROL.test(sql)) throw new Error('transaction control statements are not allowed inside transaction()');
        const bound = bindable(params);
        const result = this.execute(sql, bound, mode);
        if (mode === 'run' || !isPureRead(sql)) ops.push({ kind: 'stmt', sql, params: bound });
        return result;
      };
      const tx: Tx = {
        run: async (sql, params) => guard(sql, params, 'run') as { changes: number },
        get: async <R extends object = Row>(sql: string, params?: SqlParams) => guard(sql, params, 'get') as R | undefined,
        all: async <R extends object = Row>(sql: string, params?: SqlParams) => guard(sql, params, 'all') as R[],
        values: async (sql: string, params?: SqlParams) => guard(sql, params, 'values') as SqlValue[][],
      };
      const exec = (sql: string) => {
        if (!active) throw new Error('transaction executor used after its transaction finished');
        this.db.exec(sql);
        ops.push({ kind: 'exec', sql });
      };
      this.db.run('BEGIN');
      let value: T;
      let frame: Buffer | null = null;
      try {
        value = await fn(tx, exec);
        active = false;
        if (ops.length > 0) frame = encodeRecord({ lsn: this.lsn + 1, ops });
        this.db.run('COMMIT');
      } catch (err) {
        active = false;
        this.rollback();
        throw err;
      }
      if (frame === null) return { value, durable: this.journal.flushed() };
      this.lsn += 1;
      const durable = this.journal.append(this.lsn, frame);
      this.maybeScheduleCheckpoint();
      return { value, durable };
    });
    await durable;
    return value;
  }

  /** Runs one prepared statement (only the first statement of `sql`). */
  /**
   * Connection settings. Durability is this engine's journal, not SQLite's, so SQLite's rollback
   * journal lives in memory and the one connection keeps its lock: otherwise every statement
   * re-checks lock and journal files in sql.js's emulated file system, a large share of a read.
   */
  private configureConnection(): void {
    this.db.run('PRAGMA foreign_keys = ON');
    this.db.run('PRAGMA journal_mode = MEMORY');
    this.db.run('PRAGMA locking_mode = EXCLUSIVE');
  }

  private readonly statements = new Map<string, Statement>();

  /** A prepared statement for this SQL, from the cache (least recently used evicted). */
  private prepared(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (stmt) {
      this.statements.delete(sql);
    } else {
      stmt = this.db.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const [oldest, evicted] = this.statements.entries().next().value!;
        this.statements.delete(oldest);
        evicted.free();
      }
    }
    this.statements.set(sql, stmt);
    return stmt;
  }

  /** db.export() frees every prepared statement; the cache must forget them first. */
  private forgetStatements(): void {
    for (const stmt of this.statements.values()) stmt.free();
    this.statements.clear();
  }

  private execute(sql: string, params: SqlValue[], mode: Mode): { changes: number } | Row | Row[] | SqlValue[][] | undefined {
    const stmt = this.prepared(sql);
    try {
      if (params.length > 0) stmt.bind(params as BindParams);
      if (mode === 'get') return stmt.step() ? (stmt.getAsObject() as Row) : undefined;
      if (mode === 'values') {
        // stmt.get() is already a fresh array of the row's values: no object, no keyed stores.
        const values: SqlValue[][] = [];
        while (stmt.step()) values.push(stmt.get() as SqlValue[]);
        return values;
      }
      const rows: Row[] = [];
      if (mode === 'all') {
        // The column names once per statement: getAsObject() reads them again for every row,
        // which costs as much as reading the values (about 3× slower for a wide row).
        const names = stmt.getColumnNames();
        while (stmt.step()) {
          const values = stmt.get();
          const row: Row = {};
          for (let i = 0; i < names.length; i++) row[names[i]!] = values[i] as SqlValue;
          rows.push(row);
        }
      } else {
        while (stmt.step());
      }
      return mode === 'run' ? { changes: this.db.getRowsModified() } : rows;
    } finally {
      // Resetting releases the statement's hold on the database and its bindings.
      stmt.reset();
    }
  }

  private rollback(): void {
    try {
      this.db.run('ROLLBACK');
    } catch {
      // no transaction active (SQLite may already have rolled it back)
    }
  }

  private maybeScheduleCheckpoint(): void {
    if (this.checkpointQueued || this.journal.bytes + this.journal.pendingBytes < this.checkpointBytes) return;
    this.checkpointQueued = true;
    this.enqueue(() => this.writeCheckpoint())
      .catch((err: Error) => this.log('error', 'background checkpoint failed', { err: err.message }))
      .finally(() => (this.checkpointQueued = false));
  }

  /** Snapshot + journal truncate. Runs inside the queue (or before the store is shared). */
  private async writeCheckpoint(): Promise<void> {
    await this.journal.flushed();
    const started = performance.now();
    this.db.run('UPDATE _engine_meta SET last_lsn = ? WHERE id = 1', [this.lsn]);
    this.forgetStatements();
    const image = this.db.export();
    this.configureConnection(); // export() may reset connection state
    const snapshot = join(this.dir, 'snapshot.db');
    await writeFileDurable(`${snapshot}.tmp`, image);
    await rename(`${snapshot}.tmp`, snapshot);
    await syncDir(this.dir);
    await this.journal.truncate(); // a crash before this leaves records <= last_lsn: skipped at open
    this.checkpoints++;
    this.snapshotLsn = this.lsn;
    this.log('info', 'checkpoint written', { lsn: this.lsn, bytes: image.length, ms: Math.round(performance.now() - started) });
  }
}

async function writeFileDurable(path: string, data: Uint8Array): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Opens (creating if needed) the data directory and returns the durable store. */
export async function openSqlJsStore(options: SqlJsStoreOptions): Promise<SqlJsStore> {
  const dir = resolve(options.dataDir);
  await mkdir(dir, { recursive: true });
  const lock = acquireLock(dir, (pid) => options.onLog?.('warn', 'taking over stale lock', { dataDir: dir, stalePid: pid }));
  let db: Database | undefined;
  let engine: SqlJsEngine | undefined;
  try {
    const SQL = await loadSqlJs();
    const snapshotPath = join(dir, 'snapshot.db');
    await rm(`${snapshotPath}.tmp`, { force: true });
    const image = await readFile(snapshotPath).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    db = image ? new SQL.Database(image) : new SQL.Database();
    engine = new SqlJsEngine(db, image !== null, dir, lock, options);
    try {
      await engine.recover();
    } catch (err) {
      if (image && !(err instanceof StoreCorruptionError) && /not a database|malformed/i.test((err as Error).message)) {
        throw new StoreCorruptionError(`${snapshotPath} is not a valid SQLite database`, { cause: err });
      }
      throw err;
    }
    await engine.migrate(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
    return engine;
  } catch (err) {
    if (engine) await engine.dispose();
    else {
      db?.close();
      lock.release();
    }
    throw err;
  }
}
