/**
 * A long read through a server-side cursor (DECLARE … CURSOR / FETCH) in a READ ONLY transaction
 * on one pooled connection: memory stays flat however many rows, and ending the iteration (the
 * reader finished, gave up or failed) rolls back, which ends the query.
 */
import type pg from 'pg';
import type { SqlParams, SqlValue } from '../store.ts';
import { pgParams, toPgPlaceholders } from './sql.ts';

/** What the cursor borrows from the engine: a connection, and how its errors read. */
export interface CursorHost {
  connect(): Promise<pg.PoolClient>;
  failure(err: unknown): unknown;
}

export async function* cursorBatches(host: CursorHost, sql: string, params: SqlParams, batchSize: number): AsyncGenerator<SqlValue[][]> {
  const client = await host.connect();
  let broken: Error | undefined;
  let open = false;
  try {
    await client.query('BEGIN READ ONLY');
    open = true;
    // Parameters are bound into the cursor's query (extended protocol), never spliced into the text.
    await client.query({ text: `DECLARE mos_cursor NO SCROLL CURSOR FOR ${toPgPlaceholders(sql)}`, values: pgParams(params) });
    const fetchText = `FETCH FORWARD ${Math.max(1, Math.floor(batchSize))} FROM mos_cursor`;
    const fetchNext = () => {
      const next = client.query({ text: fetchText, rowMode: 'array' });
      next.catch(() => {}); // awaited below, or abandoned with the cursor (ROLLBACK follows it)
      return next;
    };
    let pending = fetchNext();
    for (;;) {
      const { rows } = await pending;
      if (rows.length === 0) break;
      // The next batch is asked for before this one is handed over (pipeline mode): PostgreSQL reads
      // it while the reader formats this one.
      if (rows.length >= batchSize) pending = fetchNext();
      yield rows as SqlValue[][];
      if (rows.length < batchSize) break;
    }
  } catch (err) {
    broken = err as Error;
    throw host.failure(err);
  } finally {
    if (open) {
      // Ends the query whether the reader finished, gave up (client gone) or failed.
      await client.query('ROLLBACK').then(
        () => (broken = undefined),
        (rollbackErr: Error) => (broken = rollbackErr),
      );
    }
    client.release(broken);
  }
}
