/**
 * The PostgreSQL engine: the same Store interface as sql.js, for several service instances on one
 * database (DATABASE_URL). A pool of `pg` connections (DATABASE_POOL_MAX); transactions really run
 * in parallel, so every state transition in the repositories is a conditional update or takes a row
 * lock (READ COMMITTED re-checks a conditional UPDATE's WHERE after waiting for the row).
 *
 * - transaction(fn): BEGIN … COMMIT on one pooled connection (READ COMMITTED); a deadlock or
 *   serialization failure (40P01, 40001) rolls back and runs `fn` again, up to 3 times.
 * - read(fn): a REPEATABLE READ READ ONLY transaction, so a read of several statements sees one
 *   consistent snapshot of committed data, like the serialised sql.js engine.
 * - round trips: the connections run in pipeline mode, and BEGIN is written in the same packet as
 *   the unit's first statement (nothing at all for a unit that runs none); a read's COMMIT is
 *   sent without waiting for its answer (it ends a read-only snapshot: nothing to make durable).
 *   A transaction of one INSERT is two waits (BEGIN + INSERT, COMMIT) instead of three; through
 *   autocommit(), where the statements need not commit together (a quote), one, and concurrent
 *   one-row INSERTs of one statement share a multi-row INSERT and its commit (./groupCommit.ts).
 *   See docs/operators/postgresql-performance.md.
 * - remembered rows (RowMemo): rarely changed rows read on hot paths, forgotten on every instance
 *   by a NOTIFY at the commit that changes them (./sharedMemo.ts).
 * - cursor(): DECLARE … CURSOR / FETCH in a transaction: memory stays flat however many rows (./cursor.ts).
 * - copyText(): COPY (SELECT …) TO STDOUT on connections of its own, bytes in, bytes out (./copyOut.ts).
 * - listen(): one dedicated connection runs LISTEN and reconnects when it drops (listener.ts).
 * - migrations: `src/store/migrations/postgres/NNN_*.sql`, applied at open under a session-level
 *   advisory lock, so instances starting together migrate once (schemaMigrations.ts).
 * - the sealing key: an instance whose keyring cannot open the secrets another sealed is refused
 *   at open (./secretsKey.ts).
 * - behind a pooler in transaction mode (DATABASE_POOLER): unnamed statements, no session options,
 *   and what needs a session on DATABASE_SESSION_URL (./connections.ts).
 * - replicas (DATABASE_REPLICA_URLS): forReplicaReads() routes a request's reads (./replicas.ts, ./replicaReads.ts).
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DatabaseUnavailableError, isConnectionFailure, StoreUnavailableError } from '../core/errors.ts';
import type { SecretKeyring } from '../core/sealing.ts';
import type { SqlExecutor, SqlParams, SqlValue, Store, StoreObserver, Tx } from '../store.ts';
import { ensureDatabase } from './database.ts';
import { connectionTargets } from './connections.ts';
import { NotificationListener } from './listener.ts';
import { applyMigrationsLocked } from './schemaMigrations.ts';
import { MEMO_CHANNEL, SharedMemo, type MemoView } from './sharedMemo.ts';
import { adoptSecretsKey, sharedKeyRotationRefused, sharedSecretsStatus, type SharedSecretsStatus } from './secretsKey.ts';
import { CopyOutPool, type CopiedText } from './copyOut.ts';
import { cursorBatches, type CursorHost } from './cursor.ts';
import { BEGIN_WRITE, StatementSender, type Unit } from './statements.ts';
import { runAutocommit, type AutocommitEngine } from './autocommit.ts';
import { InsertGroups } from './groupCommit.ts';
import { ReplicaSet } from './replicas.ts';
import { ReplicaReads } from './replicaReads.ts';

export { redactDatabaseUrl } from './database.ts';
export type { PgStore, PgStoreOptions } from './pgTypes.ts';
import type { LogLevel, PgStore, PgStoreOptions, PgStoreStats } from './pgTypes.ts';


const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/postgres/', import.meta.url));
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 3;
/** What a caller refused for an unreachable database is told to wait before trying again. */
const UNREACHABLE_RETRY_AFTER_SECONDS = 5;

class PgEngine implements PgStore {
  readonly dialect = 'postgres' as const;
  readonly sharedByInstances = true as const;
  private readonly pool: pg.Pool;
  /** Connections that hold a session (migrations, cursors): direct when a pooler fronts `pool`, else `pool` itself. */
  private readonly sessionPool: pg.Pool;
  private readonly log: (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
  private writes = 0;
  private readonly sender: StatementSender;
  private observer: StoreObserver | null = null;
  private closing: Promise<void> | null = null;
  private readonly notifications: NotificationListener;
  private readonly copies: CopyOutPool;
  private readonly memo: SharedMemo;
  private readonly sealer: SecretKeyring;
  private readonly keyFile: string | null;
  private readonly autocommitEngine: AutocommitEngine;
  readonly replicaSet: ReplicaSet | null;
  private readonly replicaReads: ReplicaReads | null;

  constructor(options: PgStoreOptions) {
    this.sealer = options.sealer;
    const targets = connectionTargets(options);
    // Named prepared statements are a session's: through a transaction pooler they would meet other clients.
    this.sender = new StatementSender(options.sealer, !targets.transactionPooler);
    this.keyFile = options.keyFile ?? null;
    const connect = () => this.connect();
    this.autocommitEngine = { sender: this.sender, groups: new InsertGroups(this.sender, connect), sealer: this.sealer, connect };
    // Pipeline mode: a statement is written as soon as it is asked for, so BEGIN can share a packet with the first one.
    this.pool = new pg.Pool({ ...targets.pooled, pipeline: true, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 });
    this.sessionPool = targets.transactionPooler ? new pg.Pool({ ...targets.session, pipeline: true, max: 2, idleTimeoutMillis: 30_000 }) : this.pool;
    const config = targets.session;
    const onLog = options.onLog;
    this.log = (level, msg, fields = {}) => onLog?.(level, msg, { engine: 'postgres', ...fields });
    this.notifications = new NotificationListener(config, this.log);
    this.copies = new CopyOutPool(config, (err) => this.log('warn', 'COPY connection failed', { err: err.message }), options.exportWorkers ?? 1);
    this.memo = new SharedMemo(
      () => this.notifications.isListening(MEMO_CHANNEL),
      undefined,
      () => this.notifications.listen(MEMO_CHANNEL, () => this.memo.clear()),
    );
    // An idle connection that the server dropped must not crash the process.
    this.pool.on('error', (err) => this.log('warn', 'idle database connection failed', { err: err.message }));
    this.replicaSet = null;
    this.replicaReads = null;
    if (options.replicas && options.replicas.urls.length > 0) {
      const set = new ReplicaSet(
        { ...options.replicas, poolMax: options.poolMax ?? 10, applicationName: options.applicationName ?? 'mortgage-origination' },
        async () => (await this.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn,
        this.log,
      );
      const engine = this;
      this.replicaSet = set;
      this.replicaReads = new ReplicaReads(set, {
        read: (fn) => this.read(fn),
        cursor: (sql, params, batchSize) => this.cursor(sql, params, batchSize),
        copyText: (select) => this.copyText(select),
        sender: this.sender,
        get observer() {
          return engine.observer;
        },
        memoView: () => this.memoView(true),
        exportWorkers: options.exportWorkers ?? 1,
        log: this.log,
      });
    }
    if (this.sessionPool !== this.pool) this.sessionPool.on('error', (err) => this.log('warn', 'idle session connection failed', { err: err.message }));
  }

  /** The memo for a unit (MEMO_CHANNEL is listened on once a row is first offered to it). */
  private memoView(immediate: boolean): MemoView {
    return this.memo.view(immediate);
  }

  private assertOpen(): void {
    if (this.closing) throw new StoreUnavailableError('store is closed');
  }

  /** False after a connection attempt failed, until one succeeds again (GET /readyz answers 503 meanwhile). */
  private reachable = true;
  private probing = false;

  private async connect(pool: pg.Pool = this.pool): Promise<pg.PoolClient> {
    const started = this.observer ? performance.now() : 0;
    try {
      const client = await pool.connect();
      this.observer?.phase('postgres', 'pool_wait', (performance.now() - started) / 1000);
      this.reachable = true;
      this.guardWhileLent(client);
      return client;
    } catch (err) {
      this.reachable = false;
      throw new DatabaseUnavailableError(`the database is unreachable: ${(err as Error).message}`, UNREACHABLE_RETRY_AFTER_SECONDS, { cause: err });
    }
  }

  /**
   * pg-pool takes its own 'error' listener off a client while it is lent out, so a connection the
   * server ends between two statements (a restart, a failover, pg_terminate_backend) would crash
   * the process with an unhandled 'error' event. With this listener the statement in flight, or
   * the next one, fails instead, and the release that follows discards the connection.
   */
  private guardWhileLent(client: pg.PoolClient): void {
    const onError = (err: Error) => {
      this.reachable = false;
      this.log('warn', 'database connection failed while in use', { err: err.message });
    };
    client.on('error', onError);
    const release = client.release;
    client.release = (err?: Error | boolean) => {
      client.removeListener('error', onError);
      return release.call(client, err);
    };
  }

  /** A statement's error as callers should see it: a lost connection is the database being unavailable, not a fault of the request. */
  private failure(err: unknown): unknown {
    if (err instanceof StoreUnavailableError || !isConnectionFailure(err)) return err;
    this.reachable = false;
    return new DatabaseUnavailableError(`the database connection failed: ${(err as Error).message}`, UNREACHABLE_RETRY_AFTER_SECONDS, { cause: err });
  }

  // ---- Store ---------------------------------------------------------------------------

  /** Tells `observer` about each unit, pool wait, statement and COMMIT from now on (metrics and traces). */
  observe(observer: StoreObserver | null): void {
    this.observer = observer;
    this.sender.observer = observer;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const o = this.observer;
    return o ? o.unit('postgres', 'transaction', (counted) => this.transactionUnit(fn, counted)) : this.transactionUnit(fn);
  }

  autocommit<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const o = this.observer;
    return o ? o.unit('postgres', 'transaction', (counted) => this.autocommitUnit(fn, counted)) : this.autocommitUnit(fn);
  }

  read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T> {
    const o = this.observer;
    return o ? o.unit('postgres', 'read', (counted) => this.readUnit(fn, counted)) : this.readUnit(fn);
  }

  private async transactionUnit<T>(fn: (tx: Tx) => Promise<T>, counted?: { statements: number }): Promise<T> {
    this.assertOpen();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      const unit: Unit = { began: false, wrote: false, memo: this.memoView(false), counted };
      const { executor, finish } = this.sender.executor(client, 'write', unit);
      let broken: Error | undefined;
      try {
        const value = await fn(executor);
        finish();
        if (unit.began) {
          // A row forgotten is forgotten by every instance once this commits (NOTIFY is delivered at commit).
          if (unit.memo.forgotten.size > 0) await this.sender.statement(client, unit, BEGIN_WRITE, 'SELECT pg_notify(?, ?)', [MEMO_CHANNEL, '']);
          await this.sender.control(client, 'COMMIT');
        }
        unit.memo.committed();
        if (unit.wrote) this.writes++;
        return value;
      } catch (err) {
        finish();
        if (unit.began) await this.sender.control(client, 'ROLLBACK').catch((rollbackErr: Error) => (broken = rollbackErr));
        const code = (err as { code?: string }).code;
        if (code !== undefined && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) {
          this.log('info', 'transaction retried', { code, attempt });
          continue;
        }
        throw this.failure(err);
      } finally {
        client.release(broken);
      }
    }
  }

  private async autocommitUnit<T>(fn: (tx: Tx) => Promise<T>, counted?: { statements: number }): Promise<T> {
    this.assertOpen();
    // `began` from the start: no BEGIN is sent, each statement commits on its own (durable before it answers).
    const unit: Unit = { began: true, wrote: false, memo: this.memoView(false), counted };
    try {
      const value = await runAutocommit(this.autocommitEngine, unit, fn);
      if (unit.wrote) this.writes++;
      return value;
    } catch (err) {
      throw this.failure(err);
    }
  }

  private async readUnit<T>(fn: (db: SqlExecutor) => Promise<T>, counted?: { statements: number }): Promise<T> {
    this.assertOpen();
    const client = await this.connect();
    const unit: Unit = { began: false, wrote: false, memo: this.memoView(true), counted };
    const { executor, finish } = this.sender.executor(client, 'read', unit);
    let broken: Error | undefined;
    try {
      const value = await fn(executor);
      finish();
      // Ends a read-only snapshot: nothing waits for the answer. The connection goes back to the pool at
      // once; whoever takes it next has its statements written behind this COMMIT, answered after it.
      if (unit.began) this.sender.control(client, 'COMMIT', false).catch((err: Error) => this.log('warn', 'read COMMIT failed', { err: err.message }));
      return value;
    } catch (err) {
      finish();
      if (unit.began) await this.sender.control(client, 'ROLLBACK').catch((rollbackErr: Error) => (broken = rollbackErr));
      throw this.failure(err);
    } finally {
      client.release(broken);
    }
  }

  cursor(sql: string, params: SqlParams, batchSize: number): AsyncGenerator<SqlValue[][]> {
    this.assertOpen();
    return cursorBatches(this.cursorHost, sql, params, batchSize);
  }

  private readonly cursorHost: CursorHost = {
    // A cursor lives as long as its reader: on a session of its own, never a pooler's shared server connection.
    connect: () => this.connect(this.sessionPool),
    failure: (err) => this.failure(err),
  };

  async *copyText(select: string): AsyncGenerator<CopiedText> {
    this.assertOpen();
    try {
      yield* this.copies.text(select);
    } catch (err) {
      throw this.failure(err);
    }
  }

  listen(channel: string, listener: () => void): () => void {
    return this.notifications.listen(channel, listener);
  }

  forReplicaReads(client: string): Store {
    return this.replicaReads ? this.replicaReads.view<Store>(this, client) : this;
  }

  clientWrote(client: string): void {
    this.replicaSet?.wrote(client);
  }

  isOpen(): boolean {
    if (!this.reachable && !this.probing && !this.closing) {
      // Asked while the database was unreachable: look again in the background for the next ask.
      this.probing = true;
      this.connect()
        .then((client) => client.release(), () => {})
        .finally(() => (this.probing = false));
    }
    return !this.closing && this.reachable;
  }

  secretsStatus(): Promise<SharedSecretsStatus> {
    return this.read((db) => sharedSecretsStatus(db, this.sealer, this.keyFile));
  }

  async rotateSecretsKey(): Promise<never> {
    throw sharedKeyRotationRefused();
  }

  stats(): PgStoreStats {
    return {
      lsn: this.writes,
      pool: { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount },
      statements: this.sender.statements,
      roundTrips: this.sender.roundTrips,
      groupCommit: { ...this.autocommitEngine.groups.stats },
      replicas: this.replicaSet && { replicas: this.replicaSet.status(), readYourWrites: this.replicaSet.primaryReads, fallbacks: this.replicaSet.fallbacks },
    };
  }

  async checkpoint(): Promise<void> {
    this.assertOpen();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.notifications.close();
      await this.replicaSet?.close();
      await this.replicaReads?.close();
      await Promise.all([this.pool.end(), this.copies.end(), this.sessionPool === this.pool ? null : this.sessionPool.end()]);
      this.log('info', 'store closed', { writes: this.writes });
    })();
    return this.closing;
  }

  // ---- opening -------------------------------------------------------------------------

  migrate(migrationsDir: string): Promise<void> {
    // The advisory lock is the session's: taken and released on one direct connection.
    return applyMigrationsLocked(() => this.connect(this.sessionPool), migrationsDir, this.log);
  }
}

/** Connects, migrates and returns the store; throws (with nothing left open) when the database cannot be used. */
export async function openPgStore(options: PgStoreOptions): Promise<PgStore> {
  await ensureDatabase(options.sessionUrl && options.pooler === 'transaction' ? options.sessionUrl : options.url, (msg, fields) => options.onLog?.('info', msg, { engine: 'postgres', ...fields }));
  const engine = new PgEngine(options);
  try {
    await engine.migrate(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
    const adopted = await engine.transaction((tx) => adoptSecretsKey(tx, options.sealer, options.sealerOrigin ?? 'SECRETS_KEY'));
    const { anchors, ...sealed } = adopted;
    if (sealed.previousKeyId !== null || sealed.resealed > 0) {
      options.onLog?.('info', 'secrets sealed under this instance\'s key', { engine: 'postgres', ...sealed });
    }
    if (anchors.anchored + anchors.reanchored > 0) options.onLog?.('info', 'audit chain anchors made under this instance\'s key', { engine: 'postgres', ...anchors });
    if (engine.replicaSet) {
      const { system } = (await engine.read((db) => db.get<{ system: string }>('SELECT system_identifier::text AS system FROM pg_control_system()')))!;
      await engine.replicaSet.start(system);
    }
    if (anchors.foundMoved + anchors.unverifiable > 0) {
      options.onLog?.('warn', 'audit chain anchors found moved in the database, or made under a key not held: run audit verify', { engine: 'postgres', ...anchors });
    }
  } catch (err) {
    await engine.close().catch(() => {});
    throw err;
  }
  return engine;
}
