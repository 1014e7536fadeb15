/**
 * The PostgreSQL store as a request that may read from a replica sees it (Store.forReplicaReads):
 * read(), cursor() and copyText() on the replica ./replicas.ts chooses for the client, everything
 * else on the primary. A replica that fails before a read has answered is dropped and the read runs
 * again on the primary: the caller sees no error (a read has nothing to undo). Rows read from a
 * replica are never offered to the remembered rows (./sharedMemo.ts): a stale row offered after
 * the NOTIFY that forgot it would be remembered as current.
 */
import { isConnectionFailure } from '../core/errors.ts';
import type { SqlExecutor, SqlParams, SqlValue, Store, StoreObserver } from '../store.ts';
import { CopyOutPool, type CopiedText } from './copyOut.ts';
import { cursorBatches } from './cursor.ts';
import type { ReplicaSet, Replica } from './replicas.ts';
import type { MemoView } from './sharedMemo.ts';
import type { StatementSender, Unit } from './statements.ts';

/** What the replica reads borrow from the engine. */
export interface PrimaryReads {
  read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T>;
  cursor(sql: string, params: SqlParams, batchSize: number): AsyncGenerator<SqlValue[][]>;
  copyText(select: string): AsyncGenerator<CopiedText>;
  readonly sender: StatementSender;
  readonly observer: StoreObserver | null;
  memoView(): MemoView;
  exportWorkers: number;
  log(level: 'warn', msg: string, fields?: Record<string, unknown>): void;
}

/** A failure that says the replica, not the query, is at fault: retried on the primary. */
function replicaAtFault(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  // 40001 on a replica: canceled by a conflict with recovery; 57P0x: the replica shutting down.
  return isConnectionFailure(err) || code === '40001' || (typeof code === 'string' && code.startsWith('57P'));
}

export class ReplicaReads {
  private readonly set: ReplicaSet;
  private readonly primary: PrimaryReads;
  private readonly copies = new Map<Replica, CopyOutPool>();

  constructor(set: ReplicaSet, primary: PrimaryReads) {
    this.set = set;
    this.primary = primary;
  }

  /** `store` with its reads routed for `client`. */
  view<S extends Store>(store: S, client: string): S {
    return Object.create(store, {
      read: { value: <T>(fn: (db: SqlExecutor) => Promise<T>) => this.read(client, fn) },
      cursor: { value: (sql: string, params: SqlParams, batchSize: number) => this.cursor(client, sql, params, batchSize) },
      copyText: { value: (select: string) => this.copyText(client, select) },
    }) as S;
  }

  private async read<T>(client: string, fn: (db: SqlExecutor) => Promise<T>): Promise<T> {
    const replica = this.set.choose(client);
    if (replica === null) return this.primary.read(fn);
    try {
      const o = this.primary.observer;
      return await (o ? o.unit('postgres', 'read', (counted) => this.readOn(replica, fn, counted)) : this.readOn(replica, fn));
    } catch (err) {
      if (!replicaAtFault(err)) throw err;
      this.failed(replica, err as Error);
      return this.primary.read(fn);
    }
  }

  private failed(replica: Replica, err: Error): void {
    this.set.fail(replica, err);
    this.set.fallbacks++;
  }

  private async readOn<T>(replica: Replica, fn: (db: SqlExecutor) => Promise<T>, counted?: { statements: number }): Promise<T> {
    const connection = await replica.pool.connect();
    const onError = (err: Error) => this.primary.log('warn', 'replica connection failed while in use', { replica: replica.name, err: err.message });
    connection.on('error', onError);
    const view = this.primary.memoView();
    const unit: Unit = { began: false, wrote: false, memo: { ...view, set: () => {} }, counted };
    const { executor, finish } = this.primary.sender.executor(connection, 'read', unit);
    let broken: Error | undefined;
    try {
      const value = await fn(executor);
      finish();
      replica.reads++;
      if (unit.began) this.primary.sender.control(connection, 'COMMIT', false).catch(() => {});
      return value;
    } catch (err) {
      finish();
      broken = err as Error;
      throw err;
    } finally {
      connection.removeListener('error', onError);
      connection.release(broken);
    }
  }

  /**
   * A long read on the replica; should the replica fail before the first batch, on the primary.
   * Once rows have been handed over a failure is the reader's, as on the primary.
   */
  private async *cursor(client: string, sql: string, params: SqlParams, batchSize: number): AsyncGenerator<SqlValue[][]> {
    const replica = this.set.choose(client);
    if (replica === null) return yield* this.primary.cursor(sql, params, batchSize);
    const host = { connect: () => replica.pool.connect(), failure: (err: unknown) => err };
    yield* this.firstOrPrimary(replica, cursorBatches(host, sql, params, batchSize), () => this.primary.cursor(sql, params, batchSize));
  }

  private async *copyText(client: string, select: string): AsyncGenerator<CopiedText> {
    const replica = this.set.choose(client);
    if (replica === null) return yield* this.primary.copyText(select);
    let copies = this.copies.get(replica);
    if (!copies) {
      copies = new CopyOutPool(replica.config, (err) => this.primary.log('warn', 'replica COPY connection failed', { replica: replica.name, err: err.message }), this.primary.exportWorkers);
      this.copies.set(replica, copies);
    }
    yield* this.firstOrPrimary(replica, copies.text(select), () => this.primary.copyText(select));
  }

  private async *firstOrPrimary<V>(replica: Replica, on: AsyncGenerator<V>, onPrimary: () => AsyncGenerator<V>): AsyncGenerator<V> {
    let first: IteratorResult<V>;
    try {
      first = await on.next();
    } catch (err) {
      if (!replicaAtFault(err)) throw err;
      this.failed(replica, err as Error);
      return yield* onPrimary();
    }
    replica.reads++;
    if (first.done) return;
    yield first.value;
    yield* on;
  }

  async close(): Promise<void> {
    await Promise.all([...this.copies.values()].map((copies) => copies.end().catch(() => {})));
  }
}
