/**
 * The request log as lenders and operators read it, on each engine (src/services/requestLogs.ts
 * over src/store/requestLogs.ts): a long path stored before paths were bounded comes back cut, a
 * minute's marker keeps its count and first time, paging walks many small batches (a quiet
 * environment's one-entry flushes), the entry cursor's form is checked, a batch row holds at most
 * REQUEST_LOG_BATCH_ENTRIES entries at under 75 bytes each, and the retention sweep deletes every
 * expired batch however many there are, and says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.ts';
import { testEnvironmentId } from '../../src/domain/accounts/environments.ts';
import { newId } from '../../src/ids.ts';
import { getRequestLog, isRequestLogEntryId, listRequestLogs, pruneExpiredRequestLogs, REQUEST_LOG_PATH_KEPT } from '../../src/services/requestLogs.ts';
import type { OpenedStore } from '../../src/store/open.ts';
import {
  insertRequestLogBatch,
  listRequestLogs as listRecords,
  pruneRequestLogsBefore,
  REQUEST_LOG_BATCH_ENTRIES,
  type RequestLogEntry,
} from '../../src/store/requestLogs.ts';
import { openTestStore } from '../helpers/engine.ts';

const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const KEY = 'key-01m8aaaaaaaaaaaaaaaaaaaaaa';

let store: OpenedStore;
let close: () => Promise<void>;
let ctx: AppContext;

beforeAll(async () => {
  ({ store, close } = await openTestStore());
  ctx = { store, clock: { now: () => new Date(NOW) }, config: { requestLogs: { retentionDays: 30 } } } as unknown as AppContext;
});
afterAll(() => close?.());

/** Each test its own environment (an account's test one: livemode false). */
const environment = () => testEnvironmentId(newId('acc'));

function entry(accountId: string, n: number, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    accountId,
    requestId: newId('req'),
    clientRequestId: null,
    keyId: KEY,
    method: 'GET',
    operationId: 'getQuote',
    path: '/v1/quotes/qte-01m8aaaaaaaaaaaaaaaaaaaaaa',
    pathLength: 41,
    status: 200,
    latencyMs: 1.5,
    clientAddress: '127.0.0.1',
    idempotencyKey: null,
    idempotentReplayed: false,
    problem: null,
    arrivedAt: NOW - 3_600_000 + n * 1_000,
    ...overrides,
  };
}

const write = (accountId: string, entries: RequestLogEntry[]) =>
  store.transaction((tx) => insertRequestLogBatch(tx, { id: newId('rlg'), accountId, entries, keyNames: new Map([[KEY, 'Key']]) }));

describe('reading the request log', () => {
  it('cuts a long path stored before paths were bounded as it is read, and keeps one of exactly 512 characters whole', async () => {
    const account = environment();
    const long = `/v1/quotes/${'q'.repeat(REQUEST_LOG_PATH_KEPT - 12)}%41${'r'.repeat(1_000)}`; // the cut falls inside %41
    const atBound = `/v1/quotes/${'q'.repeat(REQUEST_LOG_PATH_KEPT - 12)}%`;
    const old = entry(account, 1, { path: long, pathLength: long.length });
    const bounded = entry(account, 2, { path: atBound, pathLength: atBound.length });
    await write(account, [old, bounded]);

    const read = await getRequestLog(ctx, account, old.requestId);
    expect(read.path).toBe(long.slice(0, REQUEST_LOG_PATH_KEPT - 1));
    expect(read.pathLength).toBe(long.length);
    expect((await getRequestLog(ctx, account, bounded.requestId)).path).toBe(atBound);
    const { items } = await listRequestLogs(ctx, account, {}, { limit: 10 });
    expect(items.map((e) => [e.requestId, e.path.length, e.livemode])).toEqual([
      [bounded.requestId, REQUEST_LOG_PATH_KEPT, false],
      [old.requestId, REQUEST_LOG_PATH_KEPT - 1, false],
    ]);
  });

  it('says how long entries are kept when there is none for a request id', async () => {
    await expect(getRequestLog(ctx, environment(), newId('req'))).rejects.toMatchObject({ kind: 'not_found', detail: expect.stringContaining('kept for 30 days') });
  });

  it('keeps a minute’s marker with its count and when the first request past the budget arrived', async () => {
    const account = environment();
    const marker = entry(account, 40, { omitted: { count: 17, firstAt: NOW - 3_600_000 + 12_345 } });
    await write(account, [entry(account, 1), marker]);
    const read = await getRequestLog(ctx, account, marker.requestId);
    expect(read.omitted).toEqual({ count: 17, firstAt: new Date(NOW - 3_600_000 + 12_345).toISOString() });
  });

  it('pages through many one-entry batches, a page ending where a read of rows ends included', async () => {
    const account = environment();
    const written: string[] = [];
    for (let n = 0; n < 11; n++) {
      const e = entry(account, n);
      written.unshift(e.requestId);
      await write(account, [e]);
    }
    for (const limit of [1, 3, 4, 8]) {
      const seen: string[] = [];
      let afterId: string | undefined;
      for (;;) {
        const page = await store.read((db) => listRecords(db, { accountId: account, keptSince: '2026-01-01T00:00:00.000Z' }, { limit, afterId }));
        seen.push(...page.items.map((e) => e.requestId));
        if (page.lastId === null) break;
        afterId = page.lastId;
      }
      expect(seen, `limit ${limit}`).toEqual(written);
    }
  });

  it('takes as a cursor only an entry’s id', () => {
    const batch = newId('rlg');
    expect(isRequestLogEntryId(`${batch}.0042`)).toBe(true);
    for (const bad of [batch, `${batch}.42`, `${newId('qte')}.0042`, 'x.0042', `${batch}.0042.0001`]) expect(isRequestLogEntryId(bad), bad).toBe(false);
  });
});

describe('a batch row', () => {
  it('holds at most REQUEST_LOG_BATCH_ENTRIES entries, none is no row, and an ordinary entry takes under 75 bytes', async () => {
    const account = environment();
    const many = Array.from({ length: REQUEST_LOG_BATCH_ENTRIES + 1 }, (_, n) => entry(account, n));
    await expect(write(account, many)).rejects.toThrow(`at most ${REQUEST_LOG_BATCH_ENTRIES} entries`);
    await write(account, []);
    expect((await listRequestLogs(ctx, account, {}, { limit: 10 })).items).toEqual([]);

    await write(account, many.slice(0, REQUEST_LOG_BATCH_ENTRIES));
    const [row] = await store.read((db) => db.all<{ bytes: number }>('SELECT LENGTH(dictionary) + LENGTH(entries) AS bytes FROM request_log_batches WHERE account_id = ?', [account]));
    // 70 for these (a service request id, a request a second; docs/operators/request-logs.md says
    // about 60): every byte is written again by the journal, so a format change that costs more
    // per entry (a value repeated in every entry, or empty fields kept) must show here.
    expect(Number(row!.bytes) / REQUEST_LOG_BATCH_ENTRIES).toBeLessThan(75);
  });
});

describe('the retention sweep', () => {
  // Entries older than every other test's: the sweep deletes by time alone, across environments.
  const longAgo = Date.parse('2025-01-01T00:00:00.000Z');

  it('deletes nothing when nothing is past retention, and says so', async () => {
    expect(await store.transaction((tx) => pruneRequestLogsBefore(tx, new Date(longAgo - 1).toISOString(), 5))).toEqual({ entries: 0, more: false });
  });

  it('deletes every batch wholly past retention, in transactions of 20, and counts their entries', async () => {
    const account = environment();
    for (let n = 0; n < 45; n++) await write(account, [entry(account, n, { arrivedAt: longAgo + n }), entry(account, n, { arrivedAt: longAgo + n + 1 })]);
    const kept = entry(account, 0);
    await write(account, [kept]);
    expect(await pruneExpiredRequestLogs(ctx)).toBe(90);
    expect((await listRequestLogs(ctx, account, {}, { limit: 100 })).items.map((e) => e.requestId)).toEqual([kept.requestId]);
    const [left] = await store.read((db) => db.all<{ n: number }>('SELECT COUNT(*) AS n FROM request_log_batches WHERE account_id = ?', [account]));
    expect(Number(left!.n)).toBe(1);
    expect(await pruneExpiredRequestLogs(ctx)).toBe(0);
  });

  it('says whether expired batches are left after a transaction’s worth', async () => {
    const account = environment();
    for (let n = 0; n < 3; n++) await write(account, [entry(account, n, { arrivedAt: longAgo + n })]);
    const cutoff = new Date(longAgo + 1_000).toISOString();
    expect(await store.transaction((tx) => pruneRequestLogsBefore(tx, cutoff, 2))).toEqual({ entries: 2, more: true });
    expect(await store.transaction((tx) => pruneRequestLogsBefore(tx, cutoff, 2))).toEqual({ entries: 1, more: false });
  });
});
