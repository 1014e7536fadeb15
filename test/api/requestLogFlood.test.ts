/**
 * The request log under a flood (issue "Probe fixes", finding 5): one test key sending 2,000
 * requests with a 15,000-character path, some past the rate limit (429), must leave the log
 * bounded: at most REQUEST_LOG_ENTRIES_PER_MINUTE entries for the minute plus its marker, which
 * counts every request that was not stored, each path cut to 512 characters, and the stored bytes
 * (and, on the embedded engine, the journal's growth) a small fraction of what was sent. Sizes
 * and counts, not time: the app's clock is a manual one, so the whole flood is in one minute. On
 * the embedded engine the database lives in memory, so its stored bytes are also what the flood
 * leaves in the process's memory.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEnvironmentId } from '../../src/domain/accounts/environments.ts';
import { REQUEST_LOG_ENTRIES_PER_MINUTE, REQUEST_LOG_PATH_KEPT } from '../../src/services/requestLogs.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

const FLOOD = 2_000;
const RATE_LIMIT = 1_000;
const LONG_PATH = `/v1/quotes/qte-${'a'.repeat(15_000)}`;
const clock = manualClock(Date.parse('2026-12-01T10:00:05.000Z'));
let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ clock, env: { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) } });
  account = await app.newAccount('Flooded Lending');
});
afterAll(() => app?.close());

/** What the environment's batch rows hold: entries, and the bytes of their JSON. */
async function stored(accountId: string): Promise<{ entries: number; bytes: number }> {
  const rows = await app.ctx.store.read((db) =>
    db.all<{ entry_count: number; dictionary: string; entries: string }>('SELECT entry_count, dictionary, entries FROM request_log_batches WHERE account_id = ?', [accountId]),
  );
  return { entries: rows.reduce((sum, r) => sum + Number(r.entry_count), 0), bytes: rows.reduce((sum, r) => sum + r.dictionary.length + r.entries.length, 0) };
}

const journalBytes = async () => (app.engine === 'sqljs' ? (await stat(path.join(app.dataDir, 'journal.log'))).size : 0);

// 2,000 requests take 5-20 s alone; on PostgreSQL on a busy two-core machine past the 30 s default: a bound, not a goal.
describe('a flood of long-path requests from one test key', { timeout: 120_000 }, () => {
  it('stores at most the minute’s budget, each path cut to 512 characters, and a marker that counts the rest (429s included)', async () => {
    await app.flushRequestLogs();
    const journalBefore = await journalBytes();
    const headers = { Authorization: `Bearer ${account.testKey}` };
    const statuses = new Map<number, number>();
    let sent = 0;
    // Twenty at a time, to 127.0.0.1: bounded in count, not in time.
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (sent < FLOOD) {
          sent++;
          const response = await app.fetch(LONG_PATH, { headers });
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(FLOOD);
    expect(statuses.get(429)).toBe(FLOOD - RATE_LIMIT);

    clock.advance(60_000); // the minute is over: its marker is written with the next flush
    await app.flushRequestLogs();
    const { entries, bytes } = await stored(testEnvironmentId(account.accountId));
    expect(entries).toBe(REQUEST_LOG_ENTRIES_PER_MINUTE + 1);
    // About a kilobyte an entry (the cut path in the problem's `instance`), against the 30 MB the flood's paths came to.
    expect(bytes).toBeLessThan(1_000_000);
    if (app.engine === 'sqljs') expect((await journalBytes()) - journalBefore).toBeLessThan(2_000_000);

    const all: Array<{ path: string; pathLength: number; status: number; omitted: { count: number } | null }> = [];
    let cursor: string | undefined;
    do {
      const { data } = await account.test.GET('/v1/request-logs', { params: { query: { limit: 100, operationId: 'getQuote', ...(cursor ? { cursor } : {}) } } });
      all.push(...data!.data);
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
    expect(all).toHaveLength(REQUEST_LOG_ENTRIES_PER_MINUTE + 1);
    for (const entry of all) {
      expect(entry.path.length).toBeLessThanOrEqual(REQUEST_LOG_PATH_KEPT);
      expect(LONG_PATH.startsWith(entry.path)).toBe(true);
      expect(entry.pathLength).toBe(LONG_PATH.length);
    }
    const markers = all.filter((e) => e.omitted !== null);
    expect(markers.map((e) => e.omitted!.count)).toEqual([FLOOD - REQUEST_LOG_ENTRIES_PER_MINUTE]);
    // The marker is the minute's last request, a 429 (the limit had been reached by then).
    expect(markers[0]!.status).toBe(429);
  });

  it("leaves the live environment's log alone, and stores the next minute's requests again", async () => {
    const { response } = await account.test.GET('/v1/account', {});
    await app.flushRequestLogs();
    const { response: got } = await account.test.GET('/v1/request-logs/{requestId}', { params: { path: { requestId: response.headers.get('x-request-id')! } } });
    expect(got.status).toBe(200);
    const live = await account.client.GET('/v1/request-logs', { params: { query: { limit: 100 } } });
    expect(live.data!.data.every((e) => e.omitted === null && e.path.length < 100)).toBe(true);
  });
});
