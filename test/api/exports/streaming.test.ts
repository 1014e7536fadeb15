/**
 * The export streams: it reads the store a batch at a time only as fast as the client takes the
 * bytes (backpressure), the first bytes leave long before the last batch is read, and a client
 * that disconnects stops the reading. Batches are counted by watching the store: its `read` calls
 * (sql.js), the batches of its cursor (PostgreSQL), or the pieces of its COPY (PostgreSQL's CSV,
 * which the database writes itself); records by the rows each of those brings.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/ids.ts';
import { insertApplication } from '../../../src/store/applications.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { steady } from '../../helpers/server.ts';
import { EMPTY_APPLICATION_DATA } from '../../../src/domain/applications/applicationData.ts';

const RECORDS = 10_000;
const BATCH = 100;
/** The batches of the whole export: 100 rows first, then BATCH at a time, up to the first short (or empty) one. */
const ALL_BATCHES = Math.floor((RECORDS - 100) / BATCH) + 2;

let app: TestApp;
let lender: TestAccount;
/** Reads of the store of any kind (the API key's look-up, the export's preparation, its batches). */
let reads = 0;
/** Export batches (or COPY pieces) and records the store has handed over, whichever way. */
let batches = 0;
let records = 0;
/** The store's read, not counted: for the test's own look-ups. */
let uncountedRead: TestApp['ctx']['store']['read'];

beforeAll(async () => {
  app = await startTestApp({ env: { EXPORT_BATCH_SIZE: String(BATCH) } });
  lender = await app.newAccount('Streaming Lender');
  const createdAt = '2026-11-21T12:00:00.000Z';
  // Made through the applications repository rather than 10,000 HTTP requests; each row carries
  // a long name so the export (about 22 MB of CSV) is far bigger than what the socket buffers of
  // both ends hold (several MB on loopback).
  await app.ctx.store.transaction(async (tx) => {
    for (let i = 0; i < RECORDS; i++) {
      await insertApplication(tx, {
        ...EMPTY_APPLICATION_DATA,
        mortgageId: newId('mtg'),
        accountId: lender.accountId,
        status: 'draft',
        applicantName: `Applicant ${i} ${'x'.repeat(2000)}`,
        applicantEmail: `applicant${i}@example.test`,
        amount: 350000,
        annualIncome: 120000,
        monthlyDebts: 650,
        creditScore: 720,
        termYears: 30,
        propertyValue: 450000,
        quoteId: null,
        decision: null,
        submittedAt: null,
        decidedAt: null,
        withdrawnAt: null,
        createdAt,
        updatedAt: createdAt,
      });
    }
  });
  const store = app.ctx.store;
  const read = store.read.bind(store);
  uncountedRead = read;
  store.read = async (fn) => {
    reads++;
    const result = await read(fn);
    if (Array.isArray(result)) {
      batches++;
      records += result.length;
    }
    return result;
  };
  // On PostgreSQL the batches come through a server-side cursor: each batch fetched counts as a read.
  const cursor = store.cursor?.bind(store);
  if (cursor) {
    store.cursor = async function* (sql, params, batchSize) {
      for await (const batch of cursor(sql, params, batchSize)) {
        reads++;
        batches++;
        records += batch.length;
        yield batch as never;
      }
    };
  }
  // PostgreSQL writes CSV itself through COPY: each piece that arrives counts as a read.
  const copyText = store.copyText?.bind(store);
  if (copyText) {
    store.copyText = async function* (select) {
      for await (const piece of copyText(select)) {
        reads++;
        batches++;
        records += piece.rows;
        yield piece;
      }
    };
  }
}, 120_000);
afterAll(() => app?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const readsSettle = () => steady(() => reads, 'the export', 400, 10_000);

/**
 * PostgreSQL: the sessions of the app's database busy with an export: holding a transaction open
 * while sending nothing (`idle in transaction`: a cursor between FETCHes), or running a COPY (a
 * paused one waits on its full socket). A paused export is one (the app runs no background work);
 * a client that went away must leave none: the query ended.
 */
async function openExportSessions(): Promise<number> {
  const rows = await uncountedRead((db) =>
    db.all<{ n: number }>(
      `SELECT COUNT(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND (state = 'idle in transaction' OR (state = 'active' AND query LIKE 'COPY %'))`,
    ),
  );
  return Number(rows[0]!.n);
}

/** Waits until `fn` gives `want` (a query ending is asynchronous), and returns what it last gave. */
async function settlesAt(fn: () => Promise<number>, want: number, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let value = await fn();
  while (value !== want && Date.now() < deadline) {
    await sleep(50);
    value = await fn();
  }
  return value;
}

/** Starts an export with a raw request, so the test decides when (and whether) to read. */
function startExport(format: string): Promise<{ request: http.ClientRequest; response: http.IncomingMessage }> {
  const url = new URL(`/v1/mortgages/export?format=${format}`, app.baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { Authorization: `Bearer ${lender.apiKey}` } }, (response) => resolve({ request, response }));
    request.on('error', reject);
  });
}

/**
 * CSV (which PostgreSQL writes itself, through COPY) and NDJSON (rows through the cursor and the
 * service's writer on PostgreSQL; keyset pages on sql.js for both).
 */
describe.each([
  { format: 'csv', header: 1 },
  { format: 'ndjson', header: 0 },
])('exportMortgages as $format', ({ format, header }) => {
  /** Whether this export reaches the store through COPY (PostgreSQL's CSV) rather than batches of rows. */
  const copied = () => app.engine === 'postgres' && format === 'csv';

  it('reads the next batch only when the client takes the bytes, and finishes once it reads again', async () => {
    const before = batches;
    const recordsBefore = records;
    const { response } = await startExport(format);
    expect(response.statusCode).toBe(200);
    response.pause(); // a client that stops reading
    await readsSettle();
    const stalled = batches - before;
    // The first bytes are out while most of the records have not been read.
    expect(stalled).toBeGreaterThan(0);
    expect(records - recordsBefore).toBeGreaterThan(0);
    expect(records - recordsBefore).toBeLessThan(RECORDS / 2);
    if (!copied()) expect(stalled).toBeLessThan(ALL_BATCHES / 2);
    // On PostgreSQL the stalled export holds its query open: the check the disconnect test relies on sees it.
    if (app.engine === 'postgres') expect(await openExportSessions()).toBe(1);

    let bytes = 0;
    let lines = 0;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      for (const byte of chunk) if (byte === 0x0a) lines++;
    });
    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    expect(lines).toBe(RECORDS + header); // the header (CSV) and every record
    expect(bytes).toBeGreaterThan(RECORDS * 2000);
    expect(records - recordsBefore).toBe(RECORDS);
    // A cursor knows the end when a fetch comes back short: it never reads the empty batch.
    if (!copied()) expect(batches - before).toBe(app.engine === 'postgres' ? RECORDS / BATCH : ALL_BATCHES);
  });

  it('stops reading batches when the client disconnects', async () => {
    const before = batches;
    const recordsBefore = records;
    const { request, response } = await startExport(format);
    let bytes = 0;
    // A client reading as fast as it can, that goes away after 1 MB.
    await new Promise<void>((resolve) => {
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= 1024 * 1024) {
          request.destroy();
          resolve();
        }
      });
    });
    response.on('error', () => {}); // the aborted response reports its end as an error
    const atDisconnect = batches - before;
    await readsSettle();
    const after = batches - before;
    // At most the batch (or COPY piece) in flight, and the one the buffer had asked for, completes afterwards.
    expect(after - atDisconnect).toBeLessThanOrEqual(2);
    expect(records - recordsBefore).toBeLessThan(RECORDS / 2);
    if (!copied()) expect(after).toBeLessThan(ALL_BATCHES / 2);
    // On PostgreSQL the query ended: the cursor's transaction rolled back, or the COPY's connection dropped.
    if (app.engine === 'postgres') expect(await settlesAt(openExportSessions, 0)).toBe(0);

    // The store is free for the next request.
    const next = await app.fetch('/v1/mortgages/export?format=json&status=approved', { headers: { Authorization: `Bearer ${lender.apiKey}` } });
    expect(await next.json()).toEqual({ data: [] });
  });
});
