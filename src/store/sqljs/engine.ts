/**
 * The embedded engine: one sql.js database whose transactions run one at a time through the
 * write queue, each committed write transaction journalled and made durable before it resolves.
 * The engine owns its collaborators and the state they share (the journal, the LSN); each of them
 * keeps its own: checkpoints.ts, degradedMode.ts, recovery.ts, keyRotation.ts, connection.ts.
 */
import type { Database, SqlJsStatic } from 'sql.js';
import { StoreUnavailableError } from '../core/errors.ts';
import type { FaultInjector } from '../core/files.ts';
import { applyMigrations, loadMigrations, type Migration } from '../core/migrate.ts';
import type { SecretKeyring } from '../core/sealing.ts';
import type { Row, SqlExecutor, SqlParams, SqlValue, StoreObserver, Tx } from '../store.ts';
import { backupHmacKey, type BackupHmacKey } from './backupKeys.ts';
import type { Archiver, ArchiveHost, ArchiveStatus } from './archive/archiver.ts';
import { Checkpoints, type CheckpointHost } from './checkpoints.ts';
import { preparedExportRoom } from './exportRoom.ts';
import { Connection, TX_CONTROL, bindable, isPureRead, type Mode } from './connection.ts';
import type { EngineFiles, EngineLog } from './dataDir.ts';
import { DegradedMode, type DegradedHost } from './degradedMode.ts';
import type { Journal, JournalOptions } from './journal.ts';
import type { EncodedRecord, JournalOp } from './journalRecords.ts';
import { rotateSecretsKey, sealSecrets, secretsStatus, type SealingHost } from './keyRotation.ts';
import type { DataDirLock } from './lock.ts';
import type { Manifest, SnapshotDescriptor } from './manifest.ts';
import { rebuildFromDisk, recover, type RecoveryHost } from './recovery.ts';
import { Memo } from './rowMemo.ts';
import type { SqlJsStore, SqlJsStoreOptions, StorageState, StoreStats } from './types.ts';
import { WriteQueue } from './writeQueue.ts';

/** A single PRAGMA, the one statement besides SELECT that read() lets through. */
const READ_PRAGMA = /^\s*PRAGMA\s+[a-z_]+\s*(\([^)]*\))?\s*;?\s*$/i;

export class SqlJsEngine implements SqlJsStore, CheckpointHost, DegradedHost, RecoveryHost, SealingHost, ArchiveHost {
  readonly connection: Connection;
  journal!: Journal; // set by recover()
  readonly files: EngineFiles;
  readonly faults: FaultInjector | undefined;
  readonly log: EngineLog;
  /** Shared by every executor; emptied when a transaction rolls back and when memory is rebuilt. */
  readonly memo = new Memo();
  readonly health: DegradedMode;
  readonly queue: WriteQueue;
  readonly checkpoints: Checkpoints;
  lsn = 0;
  earlierFsyncs = 0;
  closing: Promise<void> | null = null;
  keyring!: SecretKeyring; // set by openSqlJsStore before the store is shared
  keySource: { keyFile: string | null } = { keyFile: null };
  /** Told about each transaction, read, journal flush and checkpoint (metrics and traces), when set. */
  observer: StoreObserver | null = null;
  /** The continuous archive (ARCHIVE_DIR), or null; set before recovery so that it sees every journal batch. */
  archiver: Archiver | null = null;
  private readonly lock: DataDirLock;

  constructor(SQL: SqlJsStatic, db: Database, onDisk: SnapshotDescriptor | null, files: EngineFiles, lock: DataDirLock, options: SqlJsStoreOptions) {
    this.files = files;
    this.lock = lock;
    this.faults = options.faults;
    const onLog = options.onLog;
    this.log = (level, msg, fields = {}) => onLog?.(level, msg, { dataDir: files.dir, ...fields });
    this.connection = new Connection(SQL, db, options.rawStatements !== false);
    this.health = new DegradedMode(this, files.dir, options.storageProbeIntervalMs, this.faults, this.log);
    this.queue = new WriteQueue(this.health);
    this.checkpoints = new Checkpoints(this, onDisk, options, files, this.faults, this.log);
  }

  journalOptions(): JournalOptions {
    return {
      onFailure: (err: Error) => this.health.enter(err),
      unavailable: (cause: Error | null) => this.health.unavailable(cause),
      faults: this.faults,
      onFlush: (seconds: number) => this.observer?.phase('sqljs', 'journal_flush', seconds),
      archive: this.archiver ?? undefined,
    };
  }

  /** The archive lost segments it could not write: a checkpoint gives it a fresh base. */
  requestSnapshot(): void {
    if (!this.closing) this.checkpoints.maybeSchedule(true);
  }

  archiveStatus(): ArchiveStatus | null {
    return this.archiver?.archiveStatus ?? null;
  }

  documentStored(documentId: string, file: string): void {
    this.archiver?.documentStored(documentId, file);
  }

  recover(manifest: Manifest | null): Promise<void> {
    return recover(this, manifest);
  }

  rebuildFromDisk(): Promise<void> {
    return rebuildFromDisk(this);
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

  sealSecrets(): Promise<number> {
    return sealSecrets(this);
  }

  // ---- Store ---------------------------------------------------------------------------

  observe(observer: StoreObserver | null): void {
    this.observer = observer;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const observer = this.observer;
    return observer ? observer.unit('sqljs', 'transaction', (unit) => this.write(fn, unit)) : this.write(fn);
  }

  read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T> {
    const observer = this.observer;
    return observer ? observer.unit('sqljs', 'read', (unit) => this.readUnit(fn, unit)) : this.readUnit(fn);
  }

  private async readUnit<T>(fn: (db: SqlExecutor) => Promise<T>, unit?: { statements: number }): Promise<T> {
    this.assertAccepting('read', true);
    const { value, durable } = await this.queue.enqueue(async () => {
      const connection = this.connection;
      let active = true;
      const guard = (sql: string, params: SqlParams | undefined, mode: Mode) => {
        if (!active) throw new Error('read executor used after read() finished');
        // The queue already isolates a read from every transaction; refusing writes here keeps it a read.
        if (!isPureRead(sql) && !READ_PRAGMA.test(sql)) throw new Error('only SELECT statements are allowed inside read(); use transaction()');
        if (unit) unit.statements++;
        return connection.execute(sql, bindable(params), mode);
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

  /**
   * A journalled transaction: every statement that writes is recorded with its bound parameters,
   * the record is encoded before COMMIT, and the caller resumes once it is durable. `exec` runs
   * multi-statement text (migrations), journalled as it is.
   */
  private async write<T>(fn: (tx: Tx, exec: (sql: string) => void) => Promise<T>, unit?: { statements: number }): Promise<T> {
    this.assertAccepting('transaction');
    const { value, durable } = await this.queue.enqueue(async () => {
      if (this.health.degraded) throw this.health.unavailable();
      const connection = this.connection;
      const ops: JournalOp[] = [];
      let active = true;
      const guard = (sql: string, params: SqlParams | undefined, mode: Mode) => {
        if (!active) throw new Error('transaction executor used after its transaction finished');
        if (TX_CONTROL.test(sql)) throw new Error('transaction control statements are not allowed inside transaction()');
        const bound = bindable(params);
        if (unit) unit.statements++;
        const result = connection.execute(sql, bound, mode);
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
        connection.exec(sql);
        ops.push({ kind: 'exec', sql });
      };
      connection.control('BEGIN');
      let value: T;
      let record: EncodedRecord | null = null;
      try {
        value = await fn(tx, exec);
        active = false;
        if (ops.length > 0) record = this.journal.encode({ lsn: this.lsn + 1, ops });
        connection.control('COMMIT');
      } catch (err) {
        active = false;
        connection.rollback();
        // The transaction may have remembered rows it had changed itself.
        this.memo.clear();
        throw err;
      }
      if (record === null) return { value, durable: this.journal.flushed() };
      this.lsn += 1;
      const durable = this.journal.append(this.lsn, record);
      this.checkpoints.maybeSchedule();
      return { value, durable };
    });
    await durable;
    return value;
  }

  /**
   * A consistent copy for a backup: the database image at one LSN, taken in the queue (writes wait
   * only for the in-memory copy, into memory made ready before: exportRoom.ts), with `alsoRead`
   * run on the same state in the same job. Resolves once everything up to that LSN is durable in
   * the journal, so the copy never holds a write the live store could still lose.
   */
  async backupImage<T>(alsoRead: (db: SqlExecutor) => Promise<T>): Promise<{ image: Uint8Array; lsn: number; read: T }> {
    this.assertAccepting('backup', true);
    const room = await preparedExportRoom(this.connection.bytes());
    const { taken, durable } = await this.queue.enqueue(async () => {
      const connection = this.connection;
      const select = (sql: string, params: SqlParams | undefined, mode: Mode) => {
        if (!isPureRead(sql)) throw new Error('only SELECT statements are allowed in a backup read');
        return connection.execute(sql, bindable(params), mode);
      };
      const executor: SqlExecutor = {
        sealer: this.keyring,
        memo: this.memo,
        run: async () => {
          throw new Error('run() is not allowed in a backup read');
        },
        get: async <R extends object = Row>(sql: string, params?: SqlParams) => select(sql, params, 'get') as R | undefined,
        all: async <R extends object = Row>(sql: string, params?: SqlParams) => select(sql, params, 'all') as R[],
        values: async (sql: string, params?: SqlParams) => select(sql, params, 'values') as SqlValue[][],
      };
      const read = await alsoRead(executor);
      const lsn = this.lsn;
      return { taken: { image: connection.export(lsn, room), lsn, read }, durable: this.journal.flushed() };
    });
    await durable;
    return taken;
  }

  /** The key that authenticates a backup now: derived from the sealing key, never the key itself. */
  backupHmacKey(): BackupHmacKey {
    return backupHmacKey(this.keyring)!;
  }

  databaseBytes(): number {
    return this.queue.closed ? 0 : this.connection.bytes();
  }

  isOpen(): boolean {
    return !this.closing && !this.health.degraded && !this.health.needsRebuild;
  }

  storageState(): StorageState {
    if (this.closing) return 'closed';
    return this.health.degraded || this.health.needsRebuild ? 'degraded' : 'ok';
  }

  async checkpoint(): Promise<void> {
    this.assertAccepting('checkpoint', true);
    return this.queue.enqueue(() => this.checkpoints.write());
  }

  stats(): StoreStats {
    const j = this.journal;
    return { journalBytes: j.bytes, lsn: this.lsn, durableLsn: j.durableLsn, fsyncs: this.earlierFsyncs + j.fsyncs, checkpoints: this.checkpoints.count };
  }

  rotateSecretsKey(): Promise<{ keyId: string; previousKeyId: string; resealed: number; keyFile: string }> {
    return rotateSecretsKey(this);
  }

  secretsStatus(): Promise<{ keyId: string; source: 'environment' | 'file'; keyFile: string | null; sealedValues: number }> {
    return secretsStatus(this);
  }

  close(): Promise<void> {
    this.closing ??= this.queue.enqueue(
      async () => {
        this.health.stopProbe();
        try {
          await this.checkpoints.snapshotting;
          if (!this.health.needsRebuild) {
            if (this.lsn !== this.checkpoints.snapshotLsn || this.journal.bytes > 0) await this.checkpoints.write();
            await this.checkpoints.writeManifest(true);
          }
        } catch (err) {
          // Nothing is lost: the journal still holds every acknowledged write and is replayed at the next start.
          this.log('error', 'final checkpoint failed; the journal is kept and replayed at the next start', { err: (err as Error).message });
        } finally {
          this.queue.closed = true;
          await this.archiver?.close().catch(() => {});
          await this.journal.close().catch(() => {});
          this.connection.close();
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
    this.queue.closed = true;
    this.closing ??= Promise.resolve();
    this.health.stopProbe();
    await this.journal?.close().catch(() => {});
    this.connection.close();
    this.lock.release();
  }

  assertAccepting(what: string, evenIfDegraded = false): void {
    if (this.closing) throw new StoreUnavailableError('store is closed');
    if (!evenIfDegraded && this.health.degraded) throw this.health.unavailable();
    if (this.queue.insideJob()) throw new Error(`${what}() called inside a transaction or read of the same store; it would deadlock`);
  }
}
