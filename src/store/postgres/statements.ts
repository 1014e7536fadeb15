/**
 * How the PostgreSQL engine sends a unit of work's statements on its pooled connection, and counts
 * them (statements sent, round trips waited for):
 *
 * - every statement is prepared once per connection under a name (up to PREPARED_LIMIT texts),
 *   except behind a pooler in transaction mode, where a name would outlive the transaction on a
 *   server session other clients share: there each is sent unnamed (parsed each time);
 * - the connections run in pipeline mode: BEGIN is written in the same packet as the unit's first
 *   statement (corked socket), so it costs no round trip of its own, and a unit that runs no
 *   statement sends neither BEGIN nor COMMIT;
 * - the executor a repository gets checks what it is asked: no transaction control, only reads in
 *   a read, nothing after the unit finished.
 */
import pg from 'pg';
import type { SecretKeyring } from '../core/sealing.ts';
import type { Row, SqlParams, SqlValue, StoreObserver, Tx } from '../store.ts';
import type { MemoView } from './sharedMemo.ts';
import { pgParams, toPgPlaceholders } from './sql.ts';

const PREPARED_LIMIT = 500;

function isPureRead(sql: string): boolean {
  const head = sql.trimStart().slice(0, 6).toUpperCase();
  return head === 'SELECT' || (head.startsWith('WITH') && !/\b(INSERT|UPDATE|DELETE)\b/i.test(sql));
}

const TX_CONTROL = /^\s*(BEGIN|COMMIT|END|ROLLBACK|START\s+TRANSACTION)\b/i;
export const BEGIN_WRITE = 'BEGIN';
const BEGIN_READ = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** Where a unit of work stands on its connection: `began` once BEGIN has been sent (with the first statement). */
export interface Unit {
  began: boolean;
  wrote: boolean;
  memo: MemoView;
  /** The observer's count of the unit's statements (metrics and traces), when one watches. */
  counted?: { statements: number } | undefined;
}

/** The driver's socket, corked so that BEGIN and the first statement leave in one write. */
function socketOf(client: pg.PoolClient): { cork(): void; uncork(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { cork(): void; uncork(): void } } }).connection?.stream;
}

export class StatementSender {
  private readonly statementNames = new Map<string, string>();
  private readonly sealer: SecretKeyring;
  /** Statements sent (BEGIN and COMMIT included), and the waits for an answer they cost. */
  statements = 0;
  roundTrips = 0;
  /** Times each statement and COMMIT when set (PgEngine.observe). */
  observer: StoreObserver | null = null;

  private readonly named: boolean;

  /** `named` false: no named prepared statements (DATABASE_POOLER=transaction). */
  constructor(sealer: SecretKeyring, named = true) {
    this.sealer = sealer;
    this.named = named;
  }

  private query(client: pg.PoolClient, sql: string, params: SqlParams | undefined, rowMode?: 'array'): Promise<pg.QueryResult> {
    const text = toPgPlaceholders(sql);
    let name = this.statementNames.get(text);
    if (name === undefined && this.named && this.statementNames.size < PREPARED_LIMIT) {
      name = `mos_${this.statementNames.size}`;
      this.statementNames.set(text, name);
    }
    const values = pgParams(params);
    const config = { text, values, ...(rowMode ? { rowMode } : {}) };
    this.statements++;
    const observer = this.observer;
    if (observer === null) return client.query(name === undefined ? config : { name, ...config });
    const started = performance.now();
    return client.query(name === undefined ? config : { name, ...config }).finally(() => observer.phase('postgres', 'query', (performance.now() - started) / 1000));
  }

  /** One statement outside any transaction, committed on its own before it answers: one round trip. */
  autocommitStatement(client: pg.PoolClient, sql: string, params: SqlParams | undefined): Promise<pg.QueryResult> {
    this.roundTrips++;
    return this.query(client, sql, params);
  }

  /** A control statement (BEGIN, COMMIT, ROLLBACK); `awaited` false when nothing waits for its answer. */
  control(client: pg.PoolClient, sql: string, awaited = true): Promise<unknown> {
    this.statements++;
    if (awaited) this.roundTrips++;
    const observer = this.observer;
    if (observer === null || sql !== 'COMMIT') return client.query(sql);
    const started = performance.now();
    return client.query(sql).finally(() => observer.phase('postgres', 'commit', (performance.now() - started) / 1000));
  }

  /**
   * A unit's statement: the first is written in one packet with the unit's BEGIN (pipeline mode),
   * so the unit costs no round trip of its own for BEGIN. Should BEGIN fail, the statement fails with it.
   */
  statement(client: pg.PoolClient, unit: Unit, begin: string, sql: string, params: SqlParams | undefined, rowMode?: 'array'): Promise<pg.QueryResult> {
    this.roundTrips++;
    if (unit.began) return this.query(client, sql, params, rowMode);
    unit.began = true;
    const socket = socketOf(client);
    socket?.cork();
    this.statements++;
    const began = client.query(begin);
    let first: Promise<pg.QueryResult>;
    try {
      first = this.query(client, sql, params, rowMode);
    } catch (err) {
      began.catch(() => {}); // the caller rolls back: its failure is this statement's
      throw err;
    } finally {
      socket?.uncork();
    }
    return Promise.all([began, first]).then(([, result]) => result);
  }

  /** The executor repositories use for one unit on `client`; `finish()` once the unit is over. */
  executor(client: pg.PoolClient, mode: 'write' | 'read', unit: Unit): { executor: Tx; finish(): void } {
    let active = true;
    const begin = mode === 'write' ? BEGIN_WRITE : BEGIN_READ;
    const send = (sql: string, params: SqlParams | undefined, rowMode?: 'array') => this.statement(client, unit, begin, sql, params, rowMode);
    const check = (sql: string) => {
      if (!active) throw new Error(`${mode === 'write' ? 'transaction' : 'read'} executor used after it finished`);
      if (TX_CONTROL.test(sql)) throw new Error('transaction control statements are not allowed inside transaction()');
      if (unit.counted) unit.counted.statements++;
    };
    const executor: Tx = {
      dialect: 'postgres',
      sealer: this.sealer,
      memo: unit.memo,
      run: async (sql, params) => {
        check(sql);
        if (mode === 'read') throw new Error('run() is not allowed inside read(); use transaction()');
        unit.wrote = true;
        const result = await send(sql, params);
        return { changes: result.rowCount ?? 0 };
      },
      get: async <R extends object = Row>(sql: string, params?: SqlParams) => {
        check(sql);
        if (!isPureRead(sql)) {
          if (mode === 'read') throw new Error('only SELECT statements are allowed inside read(); use transaction()');
          unit.wrote = true;
        }
        return (await send(sql, params)).rows[0] as R | undefined;
      },
      all: async <R extends object = Row>(sql: string, params?: SqlParams) => {
        check(sql);
        if (!isPureRead(sql)) {
          if (mode === 'read') throw new Error('only SELECT statements are allowed inside read(); use transaction()');
          unit.wrote = true;
        }
        return (await send(sql, params)).rows as R[];
      },
      values: async (sql, params) => {
        check(sql);
        if (!isPureRead(sql)) throw new Error('values() is for SELECT statements only');
        // Rows as arrays (node-postgres rowMode 'array'): no object per row for long scans. Prepared
        // like every other statement: an export runs its verification query once per batch.
        const result = await send(sql, params, 'array');
        return result.rows as SqlValue[][];
      },
    };
    return { executor, finish: () => (active = false) };
  }
}
