/**
 * A unit of work run through Store.autocommit on PostgreSQL: no BEGIN, each statement commits on
 * its own before it answers. The unit takes a pooled connection only when it sends a statement of
 * its own, and gives it back before its INSERT waits for a group (./groupCommit.ts): a quote whose
 * pricing context comes from the memo holds no connection at all, and the group's statement takes
 * one from the pool, which units holding theirs while they wait for it could otherwise exhaust.
 */
import type pg from 'pg';
import { isConnectionFailure } from '../core/errors.ts';
import type { SecretKeyring } from '../core/sealing.ts';
import type { Row, SqlParams, Tx } from '../store.ts';
import type { InsertGroups } from './groupCommit.ts';
import { MEMO_CHANNEL } from './sharedMemo.ts';
import { BEGIN_WRITE, type StatementSender, type Unit } from './statements.ts';

export interface AutocommitEngine {
  readonly sender: StatementSender;
  readonly groups: InsertGroups;
  readonly sealer: SecretKeyring;
  connect(): Promise<pg.PoolClient>;
}

interface Lease {
  client: pg.PoolClient;
  executor: Tx;
  finish(): void;
}

/** Runs `fn` with `unit` (begun from the start: nothing sends BEGIN); errors come back as the driver gave them. */
export async function runAutocommit<T>(engine: AutocommitEngine, unit: Unit, fn: (tx: Tx) => Promise<T>): Promise<T> {
  let lent: Promise<Lease> | null = null;
  let active = true;
  const lease = (): Promise<Lease> => (lent ??= engine.connect().then((client) => ({ client, ...engine.sender.executor(client, 'write', unit) })));
  const giveBack = async (broken?: Error): Promise<void> => {
    const held = lent;
    lent = null;
    await held?.then(
      ({ client, finish }) => {
        finish();
        client.release(broken);
      },
      () => {}, // the connection never came: nothing to give back
    );
  };
  const ensureActive = () => {
    if (!active) throw new Error('transaction executor used after it finished');
  };
  const on = async <R>(send: (executor: Tx) => Promise<R>): Promise<R> => {
    ensureActive();
    return send((await lease()).executor);
  };
  const tx: Tx = {
    dialect: 'postgres',
    sealer: engine.sealer,
    memo: unit.memo,
    run: async (sql, params) => {
      const lane = engine.groups.lane(sql, params);
      if (lane === undefined || params === undefined) return on((executor) => executor.run(sql, params));
      ensureActive();
      if (unit.counted) unit.counted.statements++;
      unit.wrote = true;
      await giveBack();
      return { changes: await engine.groups.insert(lane, params) };
    },
    get: <R extends object = Row>(sql: string, params?: SqlParams) => on((executor) => executor.get<R>(sql, params)),
    all: <R extends object = Row>(sql: string, params?: SqlParams) => on((executor) => executor.all<R>(sql, params)),
    values: (sql, params) => on((executor) => executor.values(sql, params)),
  };
  let broken: Error | undefined;
  try {
    const value = await fn(tx);
    active = false;
    if (unit.memo.forgotten.size > 0) {
      // Every instance forgets the rows this unit changed (its statements have committed already).
      await engine.sender.statement((await lease()).client, unit, BEGIN_WRITE, 'SELECT pg_notify(?, ?)', [MEMO_CHANNEL, '']);
    }
    unit.memo.committed();
    return value;
  } catch (err) {
    active = false;
    if (isConnectionFailure(err)) broken = err as Error;
    throw err;
  } finally {
    await giveBack(broken);
  }
}
