/**
 * The durable embedded engine: sql.js (SQLite compiled to WebAssembly, in memory) made
 * durable by a write-ahead journal and periodic snapshots.
 *
 * - Every committed write transaction is one journal record (its write statements and bound
 *   parameters), fsynced before the transaction resolves; concurrent commits share fsyncs.
 * - A checkpoint exports the whole database to `snapshot.db` (atomically, via rename) and
 *   empties the journal. The snapshot stores the last LSN it contains (`_engine_meta`), so a
 *   journal left behind by a crash between rename and truncate is skipped, never re-applied.
 *   The checkpoint the journal's size calls for writes its snapshot outside the queue and then
 *   cuts the journal to the records after it (backgroundCheckpoint).
 *   `manifest.json` records the snapshot's LSN, size and SHA-256 (see manifest.ts): a changed,
 *   missing or empty snapshot refuses to open instead of being served or replaced by an empty one.
 * - At open: load and verify the snapshot, replay the journal (a torn tail is set aside, never
 *   destroyed), checkpoint, apply migrations, seal any secret not sealed under the current key.
 * - A failed write to disk (a full disk) degrades the store instead of stopping it: the memory is
 *   rebuilt from what is durable (so nothing unacknowledged is ever shown), writes are refused
 *   with StorageUnavailableError, reads keep answering, and a probe returns the store to normal
 *   by itself once the disk takes writes again.
 * - Everything (transactions, reads, checkpoints) runs through one FIFO queue.
 * - The data directory is 0700 and every file in it 0600.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir, open, readFile, rename, rm, stat, truncate } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import initSqlJs from 'sql.js';
import type { BindParams, Database, SqlJsStatic, Statement } from 'sql.js';
import { resealSecrets } from '../sealedColumns.ts';
import type { Row, RowMemo, SqlExecutor, SqlParams, SqlValue, Store, Tx } from '../store.ts';
import { SecretsKeyFromEnvironmentError, StorageUnavailableError, StorageWriteError, StoreCorruptionError, StoreUnavailableError } from './errors.ts';
import { DIR_MODE, naming, sha256, syncDir, writeFileDurable, type FaultInjector } from './files.ts';
import { Journal, parseJournal, recoverJournal } from './journal.ts';
import type { EncodedRecord, JournalOp, JournalRecord } from './journal.ts';
import { acquireLock } from './lock.ts';
import type { DataDirLock } from './lock.ts';
import { MANIFEST_FILE, describeSnapshot, readManifest, writeManifest, type Manifest, type SnapshotDescriptor } from './manifest.ts';
import { SCHEMA_MIGRATIONS_DDL, applyMigrations, loadMigrations } from './migrate.ts';
import { STATEMENT_CACHE_SIZE, instantiateCapturingMemory, openRawStatements, type RawStatements } from './rawStatements.ts';
import type { Migration } from './migrate.ts';
import { SECRETS_KEY_FILE, SecretKeyring, encodeSecretsKey, loadKeyring, newSecretsKey, writeKeyFile, type SecretsKeyOptions } from './sealing.ts';

export { lockHolderPid } from './lock.ts';
export type { FaultInjector } from './files.ts';
export type { SecretsKeyOptions } from './sealing.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface SqlJsStoreOptions {
  dataDir: string;
  /** Directory of `NNN_name.sql` migrations; default `src/store/migrations`. */
  migrationsDir?: string;
  /** Journal size that calls for a background checkpoint however small the database; default 64 MiB. */
  checkpointBytes?: number;
  /**
   * Journal bytes per byte of the last snapshot that call for a background checkpoint, where that
   * is more than checkpointBytes; default 0.25 (see checkpointThreshold). 0 keeps to checkpointBytes.
   */
  checkpointJournalShare?: number;
  onLog?: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** The key that seals secrets at rest; default: the key file DATA_DIR/secrets.key, created on first start. */
  secrets?: SecretsKeyOptions;
  /** How often a degraded store tries a write again (default 1000 ms); also sets the Retry-After of its refusals. */
  storageProbeIntervalMs?: number;
  /** Tests only: a fault-injecting file layer (e.g. a simulated full disk). */
  faults?: FaultInjector;
  /**
   * Tests only: false runs every statement through sql.js's Statement and Database.run(), the path
   * the engine takes when sql.js no longer offers what rawStatements.ts needs, so that path stays tested.
   */
  rawStatements?: boolean;
}

export interface StoreStats {
  /** Bytes durably in the journal since the last checkpoint. */
  journalBytes: number;
  /** LSN of the last committed write transaction. */
  lsn: number;
  /** LSN of the last write transaction known durable. */
  durableLsn: number;
  /** Durable journal writes since open (each an fsync; group commit makes them far fewer than commits). */
  fsyncs: number;
  checkpoints: number;
}

/** `ok`, or `degraded` (a write to disk failed: writes refused, reads served), or `closed`. */
export type StorageState = 'ok' | 'degraded' | 'closed';

export interface SqlJsStoreExtra {
  /** Writes a snapshot and empties the journal (queued like a transaction). */
  checkpoint(): Promise<void>;
  stats(): StoreStats;
  storageState(): StorageState;
  /**
   * Seals every secret under a new key. With a key file: writes the new key beside it, re-seals,
   * then replaces the file. With SECRETS_KEY from the environment this is refused (change the
   * environment instead: see docs/operators/storage-and-recovery.md#secrets-at-rest).
   */
  rotateSecretsKey(): Promise<{ keyId: string; previousKeyId: string; resealed: number; keyFile: string }>;
  /** Where the sealing key comes from, its id, and how many sealed values there are. */
  secretsStatus(): Promise<{ keyId: string; source: 'environment' | 'file'; keyFile: string | null; sealedValues: number }>;
}

export type SqlJsStore = Store & SqlJsStoreExtra;

const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
const DEFAULT_CHECKPOINT_BYTES = 64 * 1024 * 1024;
const DEFAULT_CHECKPOINT_JOURNAL_SHARE = 0.25;

/**
 * The journal size at which a background checkpoint starts: `floorBytes`, or `journalShare` of the
 * last snapshot's size where that is more. A checkpoint copies, hashes and writes the whole
 * database, so against a fixed threshold its work per write grows with the database: at 2 GB and
 * 64 MiB, every write would pay for copying 32 bytes for each byte it journals, and requests would
 * wait for the copy every 64 MiB. Growing with the snapshot (as Redis rewrites its append-only file
 * once it has grown by a share of its size) caps that at 1/journalShare bytes per journal byte,
 * while the journal replayed at a start after a crash stays a bounded share of the database.
 */
export function checkpointThreshold(floorBytes: number, journalShare: number, snapshotBytes: number): number {
  return Math.max(floorBytes, Math.ceil(journalShare * snapshotBytes));
}

const DEFAULT_PROBE_INTERVAL_MS = 1000;
/** What the probe writes to learn whether the disk takes writes again. */
const PROBE_BYTES = 64 * 1024;
const PROBE_FILE = '.write-probe';
/** After a failed checkpoint, the next is not tried before this long. */
const CHECKPOINT_RETRY_MS = 30_000;
const META_DDL = 'CREATE TABLE IF NOT EXISTS _engine_meta (id INTEGER PRIMARY KEY CHECK (id = 1), last_lsn INTEGER NOT NULL)';

let sqlJs: Promise<SqlJsStatic> | undefined;
/** sql.js's WebAssembly memory, for the raw statements (see rawStatements.ts); null until caught. */
let sqlJsMemory: Parameters<typeof openRawStatements>[2] = null;
function loadSqlJs(): Promise<SqlJsStatic> {
  if (!sqlJs) {
    const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
    sqlJs = initSqlJs({ locateFile: () => wasm, ...instantiateCapturingMemory(wasm, (memory) => (sqlJsMemory = memory)) } as Parameters<typeof initSqlJs>[0]);
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

/** Rows remembered at most (see RowMemo); the oldest is forgotten beyond. */
const MEMO_MAX_ROWS = 10_000;

/** This engine's RowMemo: it is the database's one writer, and empties the memo on rollback and rebuild. */
class Memo implements RowMemo {
  private readonly rows = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.rows.get(key) as T | undefined;
  }
  set(key: string, value: unknown): void {
    this.rows.delete(key);
    if (this.rows.size >= MEMO_MAX_ROWS) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, value);
  }
  forget(key: string): void {
    this.rows.delete(key);
  }
  clear(): void {
    this.rows.clear();
  }
}

/** A row as getAsObject() builds it, from the statement's column names and one row's values. */
function rowOf(names: string[], values: readonly unknown[]): Row {
  const row: Row = {};
  for (let i = 0; i < names.length; i++) row[names[i]!] = values[i] as SqlValue;
  return row;
}

/** Statements read through tx.get/tx.all that need no journal record. */
function isPureRead(sql: string): boolean {
  const head = sql.trimStart().slice(0, 6).toUpperCase();
  return head === 'SELECT' || (head.startsWith('WITH') && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql));
}

const TX_CONTROL = /^\s*(BEGIN|COMMIT|END)\b|^\s*ROLLBACK\s*(TRANSACTION\s*)?;?\s*$/i;

type Mode = 'run' | 'get' | 'all' | 'values';

function describe(image: Uint8Array, lsn: number): SnapshotDescriptor {
  return { lsn, bytes: image.length, sha256: sha256(image) };
}

function sameSnapshot(a: SnapshotDescriptor, b: SnapshotDescriptor): boolean {
  return a.sha256 === b.sha256 && a.bytes === b.bytes;
}

interface EngineFiles {
  dir: string;
  snapshot: string;
  journal: string;
  manifest: string;
}

interface QueueOptions {
  /** Run even though the store is degraded and its memory could not be rebuilt (close). */
  tolerateRebuildFailure?: boolean;
}

class SqlJsEngine implements SqlJsStore {
  private db: Database;
  private journal!: Journal; // set by recover()
  private readonly SQL: SqlJsStatic;
  private readonly lock: DataDirLock;
  private readonly files: EngineFiles;
  private readonly checkpointBytes: number;
  private readonly checkpointJournalShare: number;
  private readonly probeIntervalMs: number;
  private readonly faults: FaultInjector | undefined;
  private readonly log: (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
  private readonly jobContext = new AsyncLocalStorage<object>();
  private currentJob: object | null = null;
  /** Shared by every executor; emptied when a transaction rolls back and when memory is rebuilt. */
  private readonly memo = new Memo();
  private tail: Promise<unknown> = Promise.resolve();
  private lsn = 0;
  private checkpoints = 0;
  /** LSN contained in snapshot.db (-1: no snapshot yet). */
  private snapshotLsn = -1;
  /** What snapshot.db holds on disk (null: none yet); every manifest written names it. */
  private onDisk: SnapshotDescriptor | null;
  private checkpointQueued = false;
  private checkpointNotBefore = 0;
  /**
   * A background checkpoint's snapshot being written outside the queue. Jobs that write the
   * snapshot, the manifest or the journal's layout (a checkpoint in the queue, a rebuild, close)
   * wait for it first; it never needs the queue itself, so waiting inside a job cannot deadlock.
   */
  private snapshotting: Promise<void> | null = null;
  /** Durable writes of the journals this one replaced (a cut, a rebuild), for stats(). */
  private earlierFsyncs = 0;
  /** Set when a write to disk failed; cleared by a successful probe. */
  private degraded: { since: Date; cause: Error } | null = null;
  /** Memory may hold transactions that were never made durable: rebuild it from disk before any other job. */
  private needsRebuild = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private closing: Promise<void> | null = null;
  private closed = false;
  keyring!: SecretKeyring; // set by openSqlJsStore before the store is shared
  keySource: { keyFile: string | null } = { keyFile: null };

  constructor(SQL: SqlJsStatic, db: Database, onDisk: SnapshotDescriptor | null, files: EngineFiles, lock: DataDirLock, options: SqlJsStoreOptions) {
    this.SQL = SQL;
    this.db = db;
    this.onDisk = onDisk;
    this.files = files;
    this.lock = lock;
    this.checkpointBytes = options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES;
    this.checkpointJournalShare = options.checkpointJournalShare ?? DEFAULT_CHECKPOINT_JOURNAL_SHARE;
    this.probeIntervalMs = options.storageProbeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.faults = options.faults;
    this.rawStatementsAllowed = options.rawStatements !== false;
    const onLog = options.onLog;
    this.log = (level, msg, fields = {}) => onLog?.(level, msg, { dataDir: files.dir, ...fields });
  }

  // ---- opening -------------------------------------------------------------------------

  /** Prepares a freshly loaded database and returns the LSN its snapshot holds. */
  private initDatabase(): number {
    this.configureConnection(); // replay must reproduce ON DELETE CASCADE etc.
    this.db.run(META_DDL);
    this.db.run('INSERT OR IGNORE INTO _engine_meta (id, last_lsn) VALUES (1, 0)');
    this.db.run(SCHEMA_MIGRATIONS_DDL);
    return Number(this.db.exec('SELECT last_lsn FROM _engine_meta')[0]!.values[0]![0]);
  }

  /** Replays the records after the snapshot; returns how many were applied. */
  private replayAll(records: JournalRecord[], snapshotLsn: number): number {
    let replayed = 0;
    for (const record of records) {
      if (record.lsn <= snapshotLsn && this.lsn === snapshotLsn) continue; // already in the snapshot
      if (record.lsn !== this.lsn + 1) {
        throw new StoreCorruptionError(
          `${this.files.journal}: record lsn ${record.lsn} does not follow lsn ${this.lsn} (snapshot at ${snapshotLsn}); snapshot and journal do not match`,
        );
      }
      this.replay(record);
      this.lsn = record.lsn;
      replayed++;
    }
    return replayed;
  }

  private journalOptions() {
    return { onFailure: (err: Error) => this.enterDegraded(err), unavailable: (cause: Error | null) => this.storageUnavailable(cause), faults: this.faults };
  }

  async recover(manifest: Manifest | null): Promise<void> {
    const snapshotLsn = this.initDatabase();
    this.lsn = snapshotLsn;
    if (this.onDisk) {
      this.snapshotLsn = snapshotLsn;
      if (this.onDisk.lsn !== snapshotLsn) this.onDisk = { ...this.onDisk, lsn: snapshotLsn };
    }

    const journalPath = this.files.journal;
    const recovered = await recoverJournal(journalPath, this.faults);
    if (!recovered.existed && manifest && !manifest.clean) {
      throw new StoreCorruptionError(
        `${journalPath} is missing, and ${this.files.manifest} says the service did not stop cleanly: the writes acknowledged after ` +
          `the snapshot (lsn ${snapshotLsn}) would be lost. Restore journal.log (or the whole data directory) from a backup; ` +
          `see README "Recovering a data directory"`,
      );
    }
    if (recovered.tornBytes > 0) {
      this.log('error', 'torn journal tail set aside: the last record was cut short (a crash during a write) and was not replayed', {
        bytes: recovered.tornBytes,
        journal: journalPath,
        keptIn: recovered.setAsidePath,
      });
    }
    const replayed = this.replayAll(recovered.records, snapshotLsn);
    this.journal = await Journal.open(journalPath, recovered.goodBytes, this.lsn, this.journalOptions());
    if (!recovered.existed) await syncDir(this.files.dir);
    // From here until a clean stop, a missing journal would lose acknowledged writes.
    await this.writeManifestNow(false);
    this.log('info', 'store opened', { snapshotLsn, replayed, skipped: recovered.records.length - replayed, lsn: this.lsn });
    if (recovered.records.length > 0) await this.writeCheckpoint();
  }

  private replay(record: JournalRecord): void {
    this.control('BEGIN');
    try {
      for (const op of record.ops) {
        if (op.kind === 'exec') this.db.exec(op.sql);
        else this.execute(op.sql, op.params, 'run');
      }
      this.control('COMMIT');
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

  private existingTables(): Set<string> {
    const result = this.db.exec("SELECT name FROM sqlite_master WHERE type = 'table'");
    return new Set((result[0]?.values ?? []).map((v) => String(v[0])));
  }

  /**
   * Seals every secret not sealed under the current key (values written before sealing existed,
   * or under a key being rotated out). When anything changed, a checkpoint (after VACUUM, so no
   * free page keeps an old value) leaves no plain or old-key copy in the snapshot or journal.
   */
  async sealSecrets(): Promise<number> {
    const tables = await this.read(async () => this.existingTables());
    const changed = await this.transaction((tx) => resealSecrets(tx, tables));
    if (changed > 0) {
      await this.enqueue(async () => {
        this.forgetStatements();
        this.db.exec('VACUUM');
        await this.writeCheckpoint();
      });
      this.log('info', 'secrets sealed under the current key', { values: changed, keyId: this.keyring.primaryKeyId });
    }
    return changed;
  }

  // ---- public API ----------------------------------------------------------------------

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.write(fn);
  }

  async read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T> {
    this.assertAccepting('read', true);
    const { value, durable } = await this.enqueue(async () => {
      let active = true;
      const guard = (sql: string, params: SqlParams | undefined, mode: Mode) => {
        if (!active) throw new Error('read executor used after read() finished');
        // The queue already isolates a read from every transaction; refusing writes here keeps it a read.
        if (!isPureRead(sql) && !/^\s*PRAGMA\s+[a-z_]+\s*(\([^)]*\))?\s*;?\s*$/i.test(sql)) throw new Error('only SELECT statements are allowed inside read(); use transaction()');
        return this.execute(sql, bindable(params), mode);
      };
      const executor: SqlExecutor = {
        sealer: this.keyring,
        memo: this.memo,
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
    await durable; // never show data a crash could still lose (rejects with StorageUnavailableError if its write failed)
    return value;
  }

  isOpen(): boolean {
    return !this.closing && !this.degraded && !this.needsRebuild;
  }

  storageState(): StorageState {
    if (this.closing) return 'closed';
    return this.degraded || this.needsRebuild ? 'degraded' : 'ok';
  }

  async checkpoint(): Promise<void> {
    this.assertAccepting('checkpoint', true);
    return this.enqueue(() => this.writeCheckpoint());
  }

  stats(): StoreStats {
    const j = this.journal;
    return { journalBytes: j.bytes, lsn: this.lsn, durableLsn: j.durableLsn, fsyncs: this.earlierFsyncs + j.fsyncs, checkpoints: this.checkpoints };
  }

  async rotateSecretsKey(): Promise<{ keyId: string; previousKeyId: string; resealed: number; keyFile: string }> {
    const keyFile = this.keySource.keyFile;
    if (keyFile === null) {
      throw new SecretsKeyFromEnvironmentError(
        'the sealing key comes from SECRETS_KEY: rotate it by setting SECRETS_KEY_PREVIOUS to the current key and SECRETS_KEY to a new one ' +
          '(openssl rand -base64 32), then restarting; every secret is re-sealed at start. Then remove SECRETS_KEY_PREVIOUS.',
      );
    }
    this.assertAccepting('transaction');
    const previousKeyId = this.keyring.primaryKeyId;
    const next = newSecretsKey();
    const nextFile = `${keyFile}.next`;
    await rm(nextFile, { force: true });
    // 1. the new key is durable before anything is sealed under it (a crash here: the next start finishes the rotation)
    await writeKeyFile(nextFile, next, join(keyFile, '..'), this.faults);
    this.keyring.usePrimary(next);
    let resealed: number;
    try {
      // 2. every secret re-sealed in one transaction, then a checkpoint drops old-key copies from snapshot and journal
      resealed = await this.sealSecrets();
    } catch (err) {
      await rm(nextFile, { force: true }).catch(() => {});
      throw err;
    }
    // 3. the new key replaces the old file; the old key is forgotten
    await naming('rename', nextFile, () => rename(nextFile, keyFile));
    await syncDir(join(keyFile, '..'));
    this.keyring.dropOthers();
    this.log('info', 'secrets key rotated', { keyId: this.keyring.primaryKeyId, previousKeyId, resealed });
    return { keyId: this.keyring.primaryKeyId, previousKeyId, resealed, keyFile };
  }

  async secretsStatus(): Promise<{ keyId: string; source: 'environment' | 'file'; keyFile: string | null; sealedValues: number }> {
    const tables = await this.read(async () => this.existingTables());
    const sealedValues = await this.read(async (db) => {
      let count = 0;
      if (tables.has('webhook_endpoints')) {
        const row = await db.get<{ n: number }>('SELECT COUNT(secret) + COUNT(previous_secret) AS n FROM webhook_endpoints');
        count += row?.n ?? 0;
      }
      if (tables.has('bank_partners')) {
        const row = await db.get<{ n: number }>('SELECT COUNT(credential_encrypted) AS n FROM bank_partners');
        count += row?.n ?? 0;
      }
      return count;
    });
    const keyFile = this.keySource.keyFile;
    return { keyId: this.keyring.primaryKeyId, source: keyFile === null ? 'environment' : 'file', keyFile, sealedValues };
  }

  close(): Promise<void> {
    this.closing ??= this.enqueue(
      async () => {
        this.stopProbe();
        try {
          await this.snapshotting;
          if (!this.needsRebuild) {
            if (this.lsn !== this.snapshotLsn || this.journal.bytes > 0) await this.writeCheckpoint();
            await this.writeManifestNow(true);
          }
        } catch (err) {
          // Nothing is lost: the journal still holds every acknowledged write and is replayed at the next start.
          this.log('error', 'final checkpoint failed; the journal is kept and replayed at the next start', { err: (err as Error).message });
        } finally {
          this.closed = true;
          await this.journal.close().catch(() => {});
          this.forgetStatements();
          this.db.close();
          this.lock.release();
          this.log('info', 'store closed', { lsn: this.lsn });
        }
      },
      { tolerateRebuildFailure: true },
    );
    return this.closing;
  }

  /** Releases everything without a checkpoint (a failed open must not overwrite the snapshot). */
  async dispose(): Promise<void> {
    this.closed = true;
    this.closing ??= Promise.resolve();
    this.stopProbe();
    await this.journal?.close().catch(() => {});
    this.forgetStatements();
    this.db.close();
    this.lock.release();
  }

  // ---- internals -----------------------------------------------------------------------

  /** Runs `job` after every job queued before it; a job holds the queue until it settles. */
  private enqueue<T>(job: () => Promise<T>, options: QueueOptions = {}): Promise<T> {
    const token = {};
    const run = this.tail.then(async () => {
      if (this.closed) throw new StoreUnavailableError('store is closed');
      this.currentJob = token;
      try {
        if (this.needsRebuild) {
          try {
            await this.rebuild();
          } catch (err) {
            if (!options.tolerateRebuildFailure) throw this.storageUnavailable(err as Error);
          }
        }
        return await this.jobContext.run(token, job);
      } finally {
        this.currentJob = null;
      }
    });
    this.tail = run.catch(() => {});
    return run;
  }

  private assertAccepting(what: string, evenIfDegraded = false): void {
    if (this.closing) throw new StoreUnavailableError('store is closed');
    if (!evenIfDegraded && this.degraded) throw this.storageUnavailable();
    if (this.currentJob !== null && this.jobContext.getStore() === this.currentJob) {
      throw new Error(`${what}() called inside a transaction or read of the same store; it would deadlock`);
    }
  }

  private retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.probeIntervalMs / 1000));
  }

  private storageUnavailable(cause: Error | null = this.degraded?.cause ?? null): StorageUnavailableError {
    const why = cause ? `: ${cause.message}` : '';
    return new StorageUnavailableError(
      `storage unavailable${why}; writes are refused until the disk takes writes again`,
      this.retryAfterSeconds(),
      { cause },
    );
  }

  /** A write to disk failed: degrade (writes refused, memory rebuilt from disk before the next job) and start probing. */
  private enterDegraded(err: Error): void {
    this.needsRebuild = true;
    if (!this.degraded) {
      this.degraded = { since: new Date(), cause: err };
      this.log('error', 'storage write failed: store degraded (writes refused, reads served) until a write succeeds again', {
        err: err.message,
        code: (err as StorageWriteError).code,
        file: (err as StorageWriteError).path,
      });
    }
    if (!this.probeTimer && !this.closing) {
      this.probeTimer = setInterval(() => void this.probe(), this.probeIntervalMs);
      this.probeTimer.unref();
    }
  }

  private stopProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
  }

  /** Tries a durable write; when it succeeds the store is back to normal. */
  private async probe(): Promise<void> {
    if (this.probing || this.closing || !this.degraded) return;
    this.probing = true;
    const probePath = join(this.files.dir, PROBE_FILE);
    try {
      await this.enqueue(async () => {
        try {
          await writeFileDurable(probePath, Buffer.alloc(PROBE_BYTES), this.faults);
        } finally {
          await rm(probePath, { force: true });
        }
        // The directory too: journal.log may have been renamed in by a checkpoint whose directory
        // fsync failed, and nothing may be appended to it before its name is durable.
        await syncDir(this.files.dir, this.faults);
        const since = this.degraded!.since;
        this.degraded = null;
        this.stopProbe();
        this.log('warn', 'storage takes writes again: store back to normal', { degradedMs: Date.now() - since.getTime(), lsn: this.lsn });
      });
    } catch {
      // still failing: the next tick tries again
    } finally {
      this.probing = false;
    }
  }

  /**
   * Replaces memory with what is durable: the snapshot plus the journal's whole records. A failed
   * append may have left part of a record in the journal, and its transactions are in memory but
   * were never acknowledged: both go. Runs inside the queue.
   */
  private async rebuild(): Promise<void> {
    await this.snapshotting;
    const durableBytes = this.journal.bytes;
    this.earlierFsyncs += this.journal.fsyncs;
    const before = this.lsn;
    await this.journal.close().catch(() => {});
    await naming('truncate', this.files.journal, () => truncate(this.files.journal, durableBytes));
    const image = this.onDisk ? await readFile(this.files.snapshot) : null;
    if (image && this.onDisk && !sameSnapshot(describe(image, this.onDisk.lsn), this.onDisk)) {
      throw new StoreCorruptionError(`${this.files.snapshot} changed on disk while the service was running`);
    }
    const records = parseJournal(await readFile(this.files.journal), this.files.journal).records;
    this.forgetStatements();
    this.memo.clear();
    this.db.close();
    this.db = image ? new this.SQL.Database(image) : new this.SQL.Database();
    const snapshotLsn = this.initDatabase();
    this.lsn = snapshotLsn;
    this.replayAll(records, snapshotLsn);
    this.journal = await Journal.open(this.files.journal, durableBytes, this.lsn, this.journalOptions());
    this.needsRebuild = false;
    this.log('warn', 'memory rebuilt from disk after a failed write; the unacknowledged transactions were dropped', {
      lsn: this.lsn,
      dropped: before - this.lsn,
    });
  }

  private async write<T>(fn: (tx: Tx, exec: (sql: string) => void) => Promise<T>): Promise<T> {
    this.assertAccepting('transaction');
    const { value, durable } = await this.enqueue(async () => {
      if (this.degraded) throw this.storageUnavailable();
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
        sealer: this.keyring,
        memo: this.memo,
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
      this.control('BEGIN');
      let value: T;
      let record: EncodedRecord | null = null;
      try {
        value = await fn(tx, exec);
        active = false;
        if (ops.length > 0) record = this.journal.encode({ lsn: this.lsn + 1, ops });
        this.control('COMMIT');
      } catch (err) {
        active = false;
        this.rollback();
        // The transaction may have remembered rows it had changed itself.
        this.memo.clear();
        throw err;
      }
      if (record === null) return { value, durable: this.journal.flushed() };
      this.lsn += 1;
      const durable = this.journal.append(this.lsn, record);
      this.maybeScheduleCheckpoint();
      return { value, durable };
    });
    await durable;
    return value;
  }

  /**
   * Connection settings. Durability is this engine's journal, not SQLite's, so SQLite's rollback
   * journal lives in memory and the one connection keeps its lock: otherwise every statement
   * re-checks lock and journal files in sql.js's emulated file system, a large share of a read.
   * secure_delete overwrites deleted content, so a snapshot keeps no copy of a replaced value.
   */
  private configureConnection(): void {
    this.db.run('PRAGMA foreign_keys = ON');
    this.db.run('PRAGMA journal_mode = MEMORY');
    this.db.run('PRAGMA locking_mode = EXCLUSIVE');
    this.db.run('PRAGMA secure_delete = ON');
  }

  private readonly statements = new Map<string, Statement>();
  /** values(), run() and transaction control through SQLite's C functions (rawStatements.ts), made per database; null where sql.js does not allow it. */
  private raw: RawStatements | null | undefined;
  private readonly rawStatementsAllowed: boolean;

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

  /** db.export() frees every prepared statement; the caches must forget them first (and the raw reader belongs to this database). */
  private forgetStatements(): void {
    for (const stmt of this.statements.values()) stmt.free();
    this.statements.clear();
    this.names = new WeakMap();
    this.raw?.forget();
    this.raw = undefined;
  }

  /** Each cached statement's result column names: a call into SQLite and a string per column, once. */
  private names = new WeakMap<Statement, string[]>();

  /** The statement's column names; asked again should a row not have as many values (a re-prepared statement). */
  private columnNames(stmt: Statement, count: number): string[] {
    let names = this.names.get(stmt);
    if (names === undefined || names.length !== count) {
      names = stmt.getColumnNames();
      this.names.set(stmt, names);
    }
    return names;
  }

  /** Runs one prepared statement (only the first statement of `sql`). */
  private execute(sql: string, params: SqlValue[], mode: Mode): { changes: number } | Row | Row[] | SqlValue[][] | undefined {
    if (mode === 'values' || mode === 'run') {
      const raw = this.rawStatements();
      if (raw !== null) return mode === 'run' ? { changes: raw.run(sql, params) } : raw.values(sql, params);
    }
    const stmt = this.prepared(sql);
    try {
      if (params.length > 0) stmt.bind(params as BindParams);
      if (mode === 'get') {
        if (!stmt.step()) return undefined;
        // The row as getAsObject() builds it, without asking SQLite for every column's name again.
        const values = stmt.get();
        return rowOf(this.columnNames(stmt, values.length), values);
      }
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
        let names: string[] | undefined;
        while (stmt.step()) {
          const values = stmt.get();
          names ??= this.columnNames(stmt, values.length);
          rows.push(rowOf(names, values));
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

  /** This database's raw statements, made on first use (again after an export or a rebuild); null where sql.js does not allow them. */
  private rawStatements(): RawStatements | null {
    if (this.raw === undefined) this.raw = this.rawStatementsAllowed ? openRawStatements(this.SQL, this.db, sqlJsMemory) : null;
    return this.raw;
  }

  /** BEGIN, COMMIT or ROLLBACK: prepared once through the raw statements (Database.run() compiles it every time). */
  private control(sql: 'BEGIN' | 'COMMIT' | 'ROLLBACK'): void {
    const raw = this.rawStatements();
    if (raw !== null) raw.run(sql, []);
    else this.db.run(sql);
  }

  private rollback(): void {
    try {
      this.control('ROLLBACK');
    } catch {
      // no transaction active (SQLite may already have rolled it back)
    }
  }

  private maybeScheduleCheckpoint(): void {
    if (this.checkpointQueued || this.closing) return;
    const threshold = checkpointThreshold(this.checkpointBytes, this.checkpointJournalShare, this.onDisk?.bytes ?? 0);
    if (this.journal.bytes + this.journal.pendingBytes < threshold) return;
    if (Date.now() < this.checkpointNotBefore) return;
    this.checkpointQueued = true;
    this.backgroundCheckpoint()
      .catch((err: Error) => {
        this.checkpointNotBefore = Date.now() + CHECKPOINT_RETRY_MS;
        this.log('error', 'background checkpoint failed; the journal keeps every write, retrying later', { err: err.message });
      })
      .finally(() => {
        this.checkpointQueued = false;
        // What was appended while it ran may call for the next one already.
        if (!this.needsRebuild && !this.journal.failed) this.maybeScheduleCheckpoint();
      });
  }

  private async writeManifestNow(clean: boolean, pending: SnapshotDescriptor | null = null): Promise<void> {
    await writeManifest(this.files.dir, { snapshot: this.onDisk, pending, clean }, this.faults);
  }

  /**
   * Snapshot + journal truncate, all inside the queue (or before the store is shared): at open,
   * at close, after secrets are sealed, and when asked (checkpoint()). The manifest names the new
   * snapshot as pending before the rename and as current after it, so a crash at any point leaves
   * a snapshot.db the manifest vouches for.
   */
  private async writeCheckpoint(): Promise<void> {
    await this.snapshotting;
    await this.journal.flushed();
    const started = performance.now();
    const { image, lsn } = this.exportSnapshot();
    await this.installSnapshot(image, lsn);
    await this.journal.truncate(); // a crash before this leaves records <= last_lsn: skipped at open
    this.checkpoints++;
    this.snapshotLsn = lsn;
    this.log('info', 'checkpoint written', { lsn, bytes: image.length, ms: Math.round(performance.now() - started) });
  }

  /**
   * The checkpoint the journal's size calls for, holding the queue only while the database is
   * exported (in memory) and, after, while the journal is cut to what came after the export. The
   * snapshot is hashed, written, fsynced and renamed into place meanwhile, while transactions go on
   * appending to the journal: done in the queue, that held every request for 100-300 ms over a
   * 30-80 MB database (issue 17's quotes bench), longer as the database grows.
   */
  private async backgroundCheckpoint(): Promise<void> {
    const started = performance.now();
    let written!: () => void;
    const taken = await this.enqueue(async () => {
      await this.snapshotting;
      await this.journal.flushed();
      const exporting = performance.now();
      const exported = {
        ...this.exportSnapshot(),
        exportMs: performance.now() - exporting,
        journal: this.journal,
        journalBytes: this.journal.bytes,
        generation: this.checkpoints,
      };
      // The records from here on are all the cut keeps: they must not name statements defined before it.
      this.journal.restartStatements();
      // Set before the queue moves on, so that every later job sees the snapshot being written.
      this.snapshotting = new Promise<void>((resolve) => (written = resolve));
      return exported;
    });
    try {
      await this.installSnapshot(taken.image, taken.lsn);
    } finally {
      this.snapshotting = null;
      written();
    }
    // From here snapshot.db holds everything up to taken.lsn: the journal's records up to it are skipped at open.
    if (this.closing) return; // close() checkpoints everything itself
    await this.enqueue(async () => {
      // A checkpoint in the queue or a rebuild came first: the journal is already right as it is.
      if (this.journal !== taken.journal || this.checkpoints !== taken.generation || this.needsRebuild || this.journal.failed) return;
      await this.journal.flushed();
      const cutting = performance.now();
      await this.cutJournal(taken.journalBytes);
      const cutMs = performance.now() - cutting;
      this.checkpoints++;
      this.snapshotLsn = taken.lsn;
      this.log('info', 'checkpoint written', {
        lsn: taken.lsn,
        bytes: taken.image.length,
        ms: Math.round(performance.now() - started),
        exportMs: Math.round(taken.exportMs),
        cutMs: Math.round(cutMs),
      });
    });
  }

  /** The whole database at the current LSN, which it records. In the queue, with every journal record before it durable. */
  private exportSnapshot(): { image: Uint8Array; lsn: number } {
    this.db.run('UPDATE _engine_meta SET last_lsn = ? WHERE id = 1', [this.lsn]);
    this.forgetStatements();
    const image = this.db.export();
    this.configureConnection(); // export() may reset connection state
    return { image, lsn: this.lsn };
  }

  /** Makes `image` snapshot.db, durably, under the manifest's protocol (pending, rename, current). */
  private async installSnapshot(image: Uint8Array, lsn: number): Promise<void> {
    const next = describe(image, lsn);
    const snapshot = this.files.snapshot;
    const temporary = `${snapshot}.tmp`;
    try {
      await writeFileDurable(temporary, image, this.faults);
      await this.writeManifestNow(false, next);
      await naming('rename', temporary, () => rename(temporary, snapshot));
    } catch (err) {
      await rm(temporary, { force: true }).catch(() => {});
      throw err;
    }
    this.onDisk = next;
    await syncDir(this.files.dir);
    await this.writeManifestNow(false);
  }

  /**
   * Replaces the journal with its records after the first `from` bytes (those the new snapshot
   * holds): written to journal.log.tmp, fsynced, renamed over journal.log. In the queue, with
   * nothing waiting to be written. Until the rename the old journal stands, complete; after it, the
   * new file takes every append, and only once the directory is fsynced, so a crash cannot bring
   * back a journal without them.
   */
  private async cutJournal(from: number): Promise<void> {
    const path = this.files.journal;
    const temporary = `${path}.tmp`;
    const old = this.journal;
    let next: Journal | null = null;
    try {
      const tail = await readRange(path, from, old.bytes - from);
      await writeFileDurable(temporary, tail, this.faults);
      // Opened before the rename, so that once journal.log is the new file a journal is ready for it.
      next = await Journal.open(path, tail.length, old.durableLsn, this.journalOptions(), temporary);
      await naming('rename', temporary, () => rename(temporary, path));
    } catch (err) {
      await next?.close().catch(() => {});
      await rm(temporary, { force: true }).catch(() => {});
      throw err; // the journal is as it was; the background checkpoint is tried again later
    }
    this.journal = next;
    this.earlierFsyncs += old.fsyncs;
    await old.close().catch(() => {});
    try {
      await syncDir(this.files.dir, this.faults);
    } catch (err) {
      // After a crash journal.log could be the old file again, without what is appended from now
      // on: take no write until the disk answers and memory is rebuilt from what it holds.
      this.enterDegraded(err as Error);
      throw err;
    }
  }
}

/** `length` bytes of the file at `path` from `position` (all there: the journal's durable part). */
async function readRange(path: string, position: number, length: number): Promise<Buffer> {
  return naming('read', path, async () => {
    const fh = await open(path, 'r');
    try {
      const data = Buffer.allocUnsafe(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await fh.read(data, read, length - read, position + read);
        if (bytesRead === 0) throw new Error(`${path} ended ${length - read} bytes early`);
        read += bytesRead;
      }
      return data;
    } finally {
      await fh.close();
    }
  });
}

/** rotateSecretsKey() with the key from the environment: the operator changes the environment instead. */
async function readOptional(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

const RECOVERY_HINT = 'see README "Recovering a data directory"';

/**
 * Checks snapshot.db against the manifest; returns what it holds (null: no snapshot, a new or
 * never checkpointed directory). Refuses a missing, empty or changed snapshot with a message
 * naming the file and what was expected.
 */
async function verifySnapshot(files: EngineFiles, image: Buffer | null, manifest: Manifest | null, keyFileInDir: string | null): Promise<SnapshotDescriptor | null> {
  const expected = [manifest?.snapshot, manifest?.pending].filter((d): d is SnapshotDescriptor => !!d);
  if (manifest) {
    if (image === null) {
      if (expected.length === 0) return null;
      throw new StoreCorruptionError(
        `${files.snapshot} is missing, but ${files.manifest} records a snapshot (${describeSnapshot(expected[0]!)}). ` +
          `The service will not start empty: restore snapshot.db from a backup; ${RECOVERY_HINT}`,
      );
    }
    const found = describe(image, 0);
    const match = expected.find((d) => sameSnapshot(d, found));
    if (!match) {
      const want = expected.length ? describeSnapshot(expected[0]!) : 'no snapshot at all';
      throw new StoreCorruptionError(
        `${files.snapshot} does not match ${files.manifest}: expected ${want}; found ${found.bytes} bytes` +
          (found.bytes === 0 ? ' (an empty file)' : `, sha256 ${found.sha256}`) +
          `. The file was changed or damaged; refusing to start rather than serve it. Restore it from a backup; ${RECOVERY_HINT}`,
      );
    }
    return match;
  }
  // No manifest: a directory made before manifests existed, or a new one.
  if (image !== null) {
    if (image.length === 0) {
      throw new StoreCorruptionError(`${files.snapshot} is empty (0 bytes); refusing to start with an empty database. Restore it from a backup; ${RECOVERY_HINT}`);
    }
    return describe(image, 0);
  }
  const evidence = [keyFileInDir, join(files.dir, 'documents')].filter((p): p is string => p !== null);
  for (const path of evidence) {
    if (await exists(path)) {
      throw new StoreCorruptionError(
        `${files.dir} has held data (${path} exists) but has neither ${MANIFEST_FILE} nor snapshot.db; refusing to start empty. ` +
          `Restore them from a backup; ${RECOVERY_HINT}`,
      );
    }
  }
  return null;
}

/** Creates the data directory 0700, or warns when an existing one is open to other users. */
async function prepareDataDir(dir: string, log: SqlJsStoreOptions['onLog']): Promise<void> {
  const existed = await exists(dir);
  await naming('create the data directory', dir, () => mkdir(dir, { recursive: true, mode: DIR_MODE }));
  if (existed) {
    const mode = (await stat(dir)).mode & 0o777;
    if (mode & 0o077) {
      log?.('warn', `data directory ${dir} has mode ${mode.toString(8)}: other users can reach the database and documents; run chmod 700 ${dir}`, {
        dataDir: dir,
        mode: mode.toString(8),
      });
    }
  }
  // Every file the process creates (documents, uploads being received, temporary files) is 0600.
  try {
    process.umask(process.umask(0o077) | 0o077);
  } catch {
    // worker threads cannot change the umask: the engine's own files are created 0600 anyway
  }
}

/** Opens (creating if needed) the data directory and returns the durable store. */
export async function openSqlJsStore(options: SqlJsStoreOptions): Promise<SqlJsStore> {
  const share = options.checkpointJournalShare;
  if (share !== undefined && !(Number.isFinite(share) && share >= 0)) throw new RangeError(`checkpointJournalShare must be a finite number >= 0, not ${share}`);
  const dir = resolve(options.dataDir);
  await prepareDataDir(dir, options.onLog);
  const lock = await acquireLock(dir, (pid) => options.onLog?.('warn', 'taking over stale lock', { dataDir: dir, stalePid: pid }));
  const files: EngineFiles = { dir, snapshot: join(dir, 'snapshot.db'), journal: join(dir, 'journal.log'), manifest: join(dir, MANIFEST_FILE) };
  let db: Database | undefined;
  let engine: SqlJsEngine | undefined;
  try {
    const SQL = await loadSqlJs();
    await rm(`${files.snapshot}.tmp`, { force: true });
    await rm(`${files.journal}.tmp`, { force: true }); // a cut of the journal a crash interrupted: journal.log is whole
    await rm(`${files.manifest}.tmp`, { force: true });
    await rm(join(dir, PROBE_FILE), { force: true });
    const manifest = await readManifest(dir);
    const image = await readOptional(files.snapshot);
    const secrets = options.secrets ?? {};
    const keyFileInDir = secrets.key ? null : resolve(secrets.keyFile ?? join(dir, SECRETS_KEY_FILE)).startsWith(dir + '/') ? resolve(secrets.keyFile ?? join(dir, SECRETS_KEY_FILE)) : null;
    const onDisk = await verifySnapshot(files, image, manifest, keyFileInDir);
    if (image && !manifest) options.onLog?.('warn', `no ${MANIFEST_FILE} yet: adopting snapshot.db as it is`, { dataDir: dir, bytes: image.length });
    try {
      db = image ? new SQL.Database(image) : new SQL.Database();
      engine = new SqlJsEngine(SQL, db, onDisk, files, lock, options);
      await engine.recover(manifest);
    } catch (err) {
      if (image && !(err instanceof StoreCorruptionError) && !(err instanceof StorageWriteError) && /not a database|malformed/i.test((err as Error).message)) {
        throw new StoreCorruptionError(`${files.snapshot} is not a valid SQLite database; ${RECOVERY_HINT}`, { cause: err });
      }
      throw err;
    }
    // The key file comes after the manifest: a key file in DATA_DIR proves the directory was initialised.
    const loaded = await loadKeyring(dir, secrets, options.faults);
    engine.keyring = loaded.keyring;
    engine.keySource = { keyFile: loaded.keyFile };
    await engine.migrate(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
    if (loaded.nextKey && loaded.keyFile) {
      // A rotation was cut short: finish it (seal everything under the new key, then replace the file).
      engine.keyring.usePrimary(loaded.nextKey);
      await engine.sealSecrets();
      await naming('rename', `${loaded.keyFile}.next`, () => rename(`${loaded.keyFile}.next`, loaded.keyFile!));
      await syncDir(join(loaded.keyFile, '..'));
      engine.keyring.dropOthers();
      options.onLog?.('warn', 'finished an interrupted secrets key rotation', { dataDir: dir, keyId: engine.keyring.primaryKeyId });
    } else {
      await engine.sealSecrets();
    }
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

export { encodeSecretsKey };
