/**
 * The request log's batch rows (src/store/requestLogs.ts, migration 018) on each engine: entries
 * written as a few batch rows are listed newest first across batch boundaries, every filter finds
 * exactly the entries it names (the batches' sets only skip rows), a cursor continues where a page
 * ended, retention hides and prunes by time, and the rows migration 018 found in the old
 * one-row-per-request table are read back as they were.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { newSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import type { OpenedStore } from '../../src/store/open.ts';
import { openPgStore } from '../../src/store/postgres/pgStore.ts';
import {
  findRequestLog,
  insertRequestLogBatch,
  listRequestLogs,
  pruneRequestLogsBefore,
  type RequestLogEntry,
  type RequestLogQuery,
} from '../../src/store/requestLogs.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { onPostgres, openTestStore, testDatabase, testEngine } from '../helpers/engine.ts';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const ACCOUNT = 'acct-01m8aaaaaaaaaaaaaaaaaaaaaa';
const OTHER = 'acct-01m8bbbbbbbbbbbbbbbbbbbbbb';
const KEY_A = 'key-01m8aaaaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'key-01m8bbbbbbbbbbbbbbbbbbbbbb';

let store: OpenedStore;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close?.());

function entry(n: number, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    accountId: ACCOUNT,
    requestId: `req-${n}`,
    clientRequestId: null,
    keyId: n % 3 === 0 ? KEY_B : KEY_A,
    method: n % 2 === 0 ? 'GET' : 'POST',
    operationId: n % 2 === 0 ? 'getAccount' : 'createQuote',
    path: n % 2 === 0 ? '/v1/account' : '/v1/quotes',
    pathLength: n % 2 === 0 ? 11 : 10,
    status: n % 5 === 0 ? 404 : n % 2 === 0 ? 200 : 201,
    latencyMs: n / 10,
    clientAddress: '127.0.0.1',
    idempotencyKey: n === 7 ? 'idem "7"' : null,
    idempotentReplayed: n === 7,
    problem: n % 5 === 0 ? JSON.stringify({ type: '/problems/not-found', status: 404, detail: `no "${n}"` }) : null,
    arrivedAt: T0 + n * 60_000,
    ...overrides,
  };
}

const query = (q: Partial<RequestLogQuery> = {}): RequestLogQuery => ({ accountId: ACCOUNT, keptSince: '2026-01-01T00:00:00.000Z', ...q });

/** Every page of a listing, following the cursors: the request ids in order. */
async function allPages(q: RequestLogQuery, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let afterId: string | undefined;
  for (;;) {
    const page = await store.read((db) => listRequestLogs(db, q, { limit, afterId }));
    seen.push(...page.items.map((e) => e.requestId));
    if (page.lastId === null) return seen;
    afterId = page.lastId;
  }
}

describe('request log batches', () => {
  const ids = (ns: number[]) => ns.map((n) => `req-${n}`);
  // Entries 1..30 in three batches of 10, 15 and 5, and another environment's in between.
  beforeAll(async () => {
    await store.transaction(async (tx) => {
      const names = new Map([
        [KEY_A, 'Key A'],
        [KEY_B, 'Key "B"'],
      ]);
      const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));
      await insertRequestLogBatch(tx, { id: newId('rlg'), accountId: ACCOUNT, entries: range(1, 10), keyNames: names });
      await insertRequestLogBatch(tx, { id: newId('rlg'), accountId: OTHER, entries: [entry(100, { accountId: OTHER })], keyNames: names });
      await insertRequestLogBatch(tx, { id: newId('rlg'), accountId: ACCOUNT, entries: range(11, 25), keyNames: names });
      await insertRequestLogBatch(tx, { id: newId('rlg'), accountId: ACCOUNT, entries: range(26, 30), keyNames: new Map([[KEY_A, 'Key A renamed']]) });
    });
  });

  it('lists newest first across batch boundaries, every page by cursor, and only the environment asked for', async () => {
    const newestFirst = Array.from({ length: 30 }, (_, i) => 30 - i);
    for (const limit of [1, 4, 7, 30, 100]) expect(await allPages(query(), limit), `limit ${limit}`).toEqual(ids(newestFirst));
    expect(await allPages(query({ accountId: OTHER }), 10)).toEqual(['req-100']);
  });

  it('keeps every field as recorded, with the key name its batch was written with', async () => {
    const seven = await store.read((db) => findRequestLog(db, ACCOUNT, 'req-7', query().keptSince));
    expect(seven).toMatchObject({
      accountId: ACCOUNT,
      requestId: 'req-7',
      keyId: KEY_A,
      keyName: 'Key A',
      method: 'POST',
      operationId: 'createQuote',
      path: '/v1/quotes',
      status: 201,
      latencyMs: 0.7,
      clientAddress: '127.0.0.1',
      idempotencyKey: 'idem "7"',
      idempotentReplayed: true,
      problem: null,
      createdAt: new Date(T0 + 7 * 60_000).toISOString(),
    });
    expect(seven!.id).toMatch(/^rlg-[0-9a-z]{26}\.0006$/);
    const ten = await store.read((db) => findRequestLog(db, ACCOUNT, 'req-10', query().keptSince));
    expect(JSON.parse(ten!.problem!)).toEqual({ type: '/problems/not-found', status: 404, detail: 'no "10"' });
    expect((await store.read((db) => findRequestLog(db, ACCOUNT, 'req-29', query().keptSince)))!.keyName).toBe('Key A renamed');
    expect((await store.read((db) => findRequestLog(db, ACCOUNT, 'req-27', query().keptSince)))!.keyName).toBeNull(); // key B: not named in its batch
    expect(await store.read((db) => findRequestLog(db, ACCOUNT, 'req-100', query().keptSince))).toBeUndefined(); // another environment's
    expect(await store.read((db) => findRequestLog(db, ACCOUNT, 'req-1%', query().keptSince))).toBeUndefined(); // LIKE's wildcard only widens the scan
  });

  it('filters exactly by status, status class, key, operation and time, paging through what matches', async () => {
    const all = Array.from({ length: 30 }, (_, i) => entry(30 - i));
    const expected = (keep: (e: RequestLogEntry) => boolean) => all.filter(keep).map((e) => e.requestId);
    expect(await allPages(query({ status: 404 }), 2)).toEqual(expected((e) => e.status === 404));
    expect(await allPages(query({ statusClass: 2 }), 3)).toEqual(expected((e) => e.status < 300));
    expect(await allPages(query({ statusClass: 5 }), 3)).toEqual([]);
    expect(await allPages(query({ keyId: KEY_B }), 2)).toEqual(expected((e) => e.keyId === KEY_B));
    expect(await allPages(query({ operationId: 'getAccount', statusClass: 4 }), 1)).toEqual(expected((e) => e.operationId === 'getAccount' && e.status === 404));
    const from = new Date(T0 + 8 * 60_000).toISOString();
    const to = new Date(T0 + 27 * 60_000).toISOString();
    expect(await allPages(query({ createdFrom: from, createdTo: to }), 4)).toEqual(expected((e) => e.arrivedAt >= Date.parse(from) && e.arrivedAt < Date.parse(to)));
  });

  it('hides entries older than the retention cutoff and prunes only batches wholly past it', async () => {
    const keptSince = new Date(T0 + 12 * 60_000).toISOString(); // inside the second batch
    expect(await allPages(query({ keptSince }), 5)).toEqual(ids(Array.from({ length: 19 }, (_, i) => 30 - i)));
    const pruned = await store.transaction((tx) => pruneRequestLogsBefore(tx, keptSince, 10));
    // The first batch (entries 1-10) and the other environment's (entry 100, at T0 + 100 min) are not the same age: only the first goes.
    expect(pruned).toEqual({ entries: 10, more: false });
    expect(await allPages(query(), 50)).toEqual(ids(Array.from({ length: 20 }, (_, i) => 30 - i)));
  });
});

describe('migration 018', () => {
  it("reads back the old table's rows, in order, after the step that turns them into batches", async () => {
    const engine = testEngine();
    const all = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'store', 'migrations', engine === 'postgres' ? 'postgres' : 'sqlite');
    const upTo017 = await mkdtemp(path.join(os.tmpdir(), 'mos-migrations-017-'));
    for (const file of await readdir(all)) if (/^0(0\d|1[0-7])_/.test(file)) await copyFile(path.join(all, file), path.join(upTo017, file));
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-store-018-'));
    const database = onPostgres() ? await testDatabase() : null;
    const sealer = new SecretKeyring(newSecretsKey(), []);
    const open = (migrationsDir: string) =>
      database ? openPgStore({ url: database.url, poolMax: 2, sealer, migrationsDir }) : openSqlJsStore({ dataDir, migrationsDir });
    try {
      const before = await open(upTo017);
      const rows = [
        ['rlg-01m8c0000000000000000000a1', 'req-old-1', 200, null, '2026-11-19T08:00:00.000Z', 'Old key'],
        ['rlg-01m8c0000000000000000000a2', 'req-old-2', 422, '{"type":"/problems/validation","status":422}', '2026-11-19T08:00:01.250Z', null],
      ] as const;
      await before.transaction(async (tx) => {
        for (const [id, requestId, status, problem, createdAt, keyName] of rows) {
          await tx.run(
            `INSERT INTO request_logs (id, account_id, request_id, key_id, key_name, method, operation_id, path, status, latency_ms, client_address, idempotency_key, idempotent_replayed, problem, created_at)
             VALUES (?, ?, ?, ?, ?, 'POST', 'createQuote', '/v1/quotes', ?, 2.5, '::1', ?, 0, ?, ?)`,
            [id, ACCOUNT, requestId, KEY_A, keyName, status, status === 200 ? 'idem-1' : null, problem, createdAt],
          );
        }
      });
      await before.close();
      const after = await open(all);
      try {
        const page = await after.read((db) => listRequestLogs(db, query(), { limit: 10 }));
        expect(page.items.map((e) => [e.id, e.requestId, e.status, e.problem, e.createdAt, e.keyName, e.idempotencyKey, e.latencyMs, e.clientAddress])).toEqual([
          ['rlg-01m8c0000000000000000000a2.0000', 'req-old-2', 422, '{"type":"/problems/validation","status":422}', '2026-11-19T08:00:01.250Z', null, null, 2.5, '::1'],
          ['rlg-01m8c0000000000000000000a1.0000', 'req-old-1', 200, null, '2026-11-19T08:00:00.000Z', 'Old key', 'idem-1', 2.5, '::1'],
        ]);
        expect((await after.read((db) => findRequestLog(db, ACCOUNT, 'req-old-1', query().keptSince)))?.status).toBe(200);
      } finally {
        await after.close();
      }
    } finally {
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
      await rm(upTo017, { recursive: true, force: true });
    }
  });
});
