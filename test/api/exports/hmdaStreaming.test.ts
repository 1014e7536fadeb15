/**
 * The HMDA register streams as the mortgage export does (./streaming.test.ts): once the first
 * pass has counted the year (the transmittal sheet's count, the Hmda-Lar-* headers), the file is
 * read a batch at a time only as fast as the client takes it, and a client that goes away stops
 * the reading. Batches are counted by watching the store: its `read` calls that return rows
 * (sql.js), the batches of its cursor (PostgreSQL).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/ids.ts';
import { insertApplication } from '../../../src/store/applications.ts';
import { storedApplication } from '../../helpers/storedApplication.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { steady } from '../../helpers/server.ts';

const RECORDS = 40_000;
const BATCH = 200;

let app: TestApp;
let lender: TestAccount;
let reads = 0;
let records = 0;

beforeAll(async () => {
  app = await startTestApp({ env: { EXPORT_BATCH_SIZE: String(BATCH) }, clock: { now: () => new Date('2026-12-07T12:00:00.000Z') } });
  lender = await app.newAccount('Streaming HMDA Lender');
  const at = '2026-06-01T12:00:00.000Z';
  // About 26 MB of register: far more than the socket buffers of both ends hold on loopback.
  await app.ctx.store.transaction(async (tx) => {
    for (let i = 0; i < RECORDS; i++) {
      await insertApplication(
        tx,
        storedApplication({
          mortgageId: newId('mtg'),
          accountId: lender.accountId,
          status: 'withdrawn',
          applicantName: `Applicant ${i}`,
          annualIncome: 120000,
          monthlyDebts: 650,
          creditScore: 720,
          propertyValue: 450000,
          submittedAt: at,
          withdrawnAt: at,
          createdAt: at,
          updatedAt: at,
          // The longest address the contract takes, so the file is larger than the sockets' buffers.
          propertyAddress: { street: `${i} ${'Long Street Name '.repeat(11)}`.slice(0, 200), city: 'C'.repeat(100), state: 'IL', zip: '62704', county: '17167', censusTract: '17167000100' },
          loanPurpose: 'purchase',
          occupancy: 'principal_residence',
          propertyType: 'single_family',
          lienStatus: 'first_lien',
          loanType: 'conventional',
        }),
      );
    }
  });
  const store = app.ctx.store;
  const read = store.read.bind(store);
  store.read = async (fn) => {
    const result = await read(fn);
    if (Array.isArray(result) && result.length > 0) {
      reads++;
      records += result.length;
    }
    return result;
  };
  const cursor = store.cursor?.bind(store);
  if (cursor) {
    store.cursor = async function* (sql, params, batchSize) {
      for await (const batch of cursor(sql, params, batchSize)) {
        reads++;
        records += batch.length;
        yield batch as never;
      }
    };
  }
}, 180_000);
afterAll(() => app?.close());


const readsSettle = () => steady(() => reads, 'the register', 400, 20_000);

function startExport(): Promise<{ request: http.ClientRequest; response: http.IncomingMessage }> {
  const url = new URL('/v1/exports/hmda-lar?year=2026', app.baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { Authorization: `Bearer ${lender.apiKey}` } }, (response) => resolve({ request, response }));
    request.on('error', reject);
  });
}

describe('exportHmdaLar streaming', () => {
  it('counts the year before the first byte, then reads the next batch only when the client takes the bytes', async () => {
    const before = records;
    const { response } = await startExport();
    expect(response.statusCode).toBe(200);
    expect(response.headers['hmda-lar-rows']).toBe(String(RECORDS));
    response.pause();
    await readsSettle();
    // The first pass read the whole year; the file's own pass stopped with the client.
    const streamed = records - before - RECORDS;
    expect(streamed).toBeGreaterThan(0);
    expect(streamed).toBeLessThan(RECORDS / 2);

    let lines = 0;
    response.on('data', (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 0x0a) lines++;
    });
    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    expect(lines).toBe(RECORDS + 1); // the transmittal sheet and every row
    expect(records - before).toBe(2 * RECORDS);
  });

  it('stops reading when the client disconnects', async () => {
    const before = records;
    const { request, response } = await startExport();
    expect(response.statusCode).toBe(200);
    let bytes = 0;
    await new Promise<void>((resolve) => {
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= 256 * 1024) {
          request.destroy();
          resolve();
        }
      });
    });
    response.on('error', () => {});
    await readsSettle();
    expect(records - before - RECORDS).toBeLessThan(RECORDS / 2);
    // The store is free for the next request.
    const next = await app.fetch('/v1/exports/hmda-lar/check?year=2026&limit=1', { headers: { Authorization: `Bearer ${lender.apiKey}` } });
    expect(next.status).toBe(200);
  });
});
