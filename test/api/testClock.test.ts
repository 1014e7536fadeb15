/**
 * The test environment's simulated clock: reading, advancing by an ISO 8601 duration, resetting;
 * every time-driven behaviour of the test environment following it (rate lock expiry and its
 * warning, quote expiry, the webhook retry schedule) while live stays on real time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { startTestApp, type ApiClient, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

const DAY = 86_400_000;
let app: TestApp;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
  dispatcher = new WebhookDispatcher(app.ctx, { random: () => 0.5 }).start();
});

afterAll(async () => {
  await dispatcher?.stop();
  for (const r of receivers) await r.close();
  await app?.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const advance = (as: ApiClient, by: string) => as.POST('/v1/test/clock/advance', { body: { by } });

async function lockedQuote(as: ApiClient) {
  const { data: quote } = await as.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
  const { data, response, error } = await as.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30 } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

describe('getTestClock', () => {
  it('reads real time with no offset until the clock is advanced', async () => {
    const lender = await app.newAccount('Clock Reader');
    const before = Date.now();
    const { data, response } = await lender.test.GET('/v1/test/clock');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ offsetSeconds: 0, livemode: false });
    expect(Date.parse(data!.now)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(data!.now)).toBeLessThanOrEqual(Date.now());
  });

  it('a live key gets 404: live has no simulated clock', async () => {
    const lender = await app.newAccount('Live Reader');
    const { error, response } = await lender.client.GET('/v1/test/clock');
    expect(response.status).toBe(404);
    expect(error!.code).toBe('not_found');
  });
});

describe('advanceTestClock', () => {
  it('moves the clock forward by an ISO 8601 duration, adding up', async () => {
    const lender = await app.newAccount('Clock Mover');
    const { data, response, error } = await advance(lender.test, 'P31D');
    expect(response.status, JSON.stringify(error)).toBe(200);
    expect(data!.offsetSeconds).toBe(31 * 86_400);
    expect(Date.parse(data!.now) - Date.now()).toBeGreaterThan(31 * DAY - 60_000);
    const { data: more } = await advance(lender.test, 'PT1H30M');
    expect(more!.offsetSeconds).toBe(31 * 86_400 + 5_400);
    const { data: read } = await lender.test.GET('/v1/test/clock');
    expect(read!.offsetSeconds).toBe(31 * 86_400 + 5_400);
  });

  it('refuses what is not a positive ISO 8601 duration of at most ten years with 400 and a pointer, changing nothing', async () => {
    const lender = await app.newAccount('Bad Durations');
    for (const by of ['31D', 'P', 'PT', 'P0D', '-P1D', 'P1.5D', 'P11Y', 'P3651D', 'P1DT']) {
      const { error, response } = await advance(lender.test, by);
      expect(response.status, by).toBe(400);
      expect(error!.errors?.[0]?.pointer, by).toBe('/by');
    }
    expect((await advance(lender.test, 'P3000D')).response.status).toBe(200);
    const { error, response } = await advance(lender.test, 'P1000D');
    expect(response.status).toBe(400);
    expect(error!.detail).toContain('ten years');
    const { data } = await lender.test.GET('/v1/test/clock');
    expect(data!.offsetSeconds).toBe(3000 * 86_400);
  });

  it('a live key gets 404 and live time never moves', async () => {
    const lender = await app.newAccount('Live Mover');
    const { response } = await advance(lender.client, 'P1D');
    expect(response.status).toBe(404);
  });

  it('expires the test environment’s locks with their warning and expiry events; live locks are untouched', async () => {
    const lender = await app.newAccount('Simulated Expiry');
    const hook = await receiver();
    const { response } = await lender.test.POST('/v1/webhooks', { body: { url: hook.url('/test'), events: ['rate_lock.expiring', 'rate_lock.expired'] } });
    expect(response.status).toBe(201);
    const liveHook = await receiver();
    await lender.client.POST('/v1/webhooks', { body: { url: liveHook.url('/live'), events: ['rate_lock.expiring', 'rate_lock.expired'] } });
    const testLock = await lockedQuote(lender.test);
    const liveLock = await lockedQuote(lender.client);

    await advance(lender.test, 'P28D');
    const [warning] = await hook.waitFor(1);
    expect(JSON.parse(warning!.body)).toMatchObject({ event: 'rate_lock.expiring', lockId: testLock.lockId, status: 'active' });
    const { data: stillActive } = await lender.test.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: testLock.lockId } } });
    expect(stillActive!.status).toBe('active');

    const { data: clock } = await advance(lender.test, 'P3D');
    const [, expiry] = await hook.waitFor(2);
    expect(JSON.parse(expiry!.body)).toMatchObject({ event: 'rate_lock.expired', lockId: testLock.lockId, status: 'expired' });
    const { data: expired } = await lender.test.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: testLock.lockId } } });
    expect(expired!.status).toBe('expired');
    expect(Date.parse(expired!.endedAt!)).toBeLessThanOrEqual(Date.parse(clock!.now));
    expect(Date.parse(expired!.endedAt!)).toBeGreaterThan(Date.now() + 30 * DAY);

    const { data: live } = await lender.client.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: liveLock.lockId } } });
    expect(live).toEqual(liveLock);
    expect(liveHook.deliveries).toEqual([]);
  });

  it('quotes of the test environment expire on its clock; live quotes do not', async () => {
    const lender = await app.newAccount('Quote Expiry');
    const { data: testQuote } = await lender.test.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    const { data: liveQuote } = await lender.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    await advance(lender.test, 'P31D');
    const refused = await lender.test.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: testQuote!.quoteId } }, body: { periodDays: 30 } });
    expect(refused.response.status).toBe(422);
    expect(refused.error!.code).toBe('quote_expired');
    const accepted = await lender.client.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: liveQuote!.quoteId } }, body: { periodDays: 30 } });
    expect(accepted.response.status).toBe(201);

    // What the test environment makes now carries its own time.
    const { data: fresh } = await lender.test.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    expect(Date.parse(fresh!.createdAt)).toBeGreaterThan(Date.now() + 30 * DAY);
    const { data: lock } = await lender.test.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: fresh!.quoteId } }, body: { periodDays: 30 } });
    expect(Date.parse(lock!.lockedAt)).toBeGreaterThan(Date.now() + 30 * DAY);
  });

  it('a lock made after the clock moved is locked at the simulated time and expires its period after that', async () => {
    const lender = await app.newAccount('Lock After Advance');
    const { data: clock } = await advance(lender.test, 'P10D');
    const lock = await lockedQuote(lender.test);
    const { data: after } = await lender.test.GET('/v1/test/clock');
    const lockedAt = Date.parse(lock.lockedAt);
    expect(lockedAt).toBeGreaterThanOrEqual(Date.parse(clock!.now));
    expect(lockedAt).toBeLessThanOrEqual(Date.parse(after!.now));
    expect(lock.expiresAt).toBe(new Date(lockedAt + 30 * DAY).toISOString());
    const { data: read } = await lender.test.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: lock.lockId } } });
    expect(read!.expiresAt).toBe(lock.expiresAt);
  });

  it('brings the test environment’s pending webhook retries forward; live retries keep their time', async () => {
    const lender = await app.newAccount('Retry Schedule');
    const testHook = await receiver();
    const liveHook = await receiver();
    for (const hook of [testHook, liveHook]) hook.answer((d) => ({ status: hook.deliveries.indexOf(d) === 0 ? 500 : 200 }));
    await lender.test.POST('/v1/webhooks', { body: { url: testHook.url('/test'), events: ['rate_lock.created'] } });
    await lender.client.POST('/v1/webhooks', { body: { url: liveHook.url('/live'), events: ['rate_lock.created'] } });
    await lockedQuote(lender.test);
    await lockedQuote(lender.client);
    await testHook.waitFor(1);
    await liveHook.waitFor(1);
    const pending = async (environmentId: string) => {
      for (let tries = 0; tries < 200; tries++) {
        const row = await app.ctx.store.read((db) =>
          db.get<{ next_attempt_at: string; attempts: number }>("SELECT next_attempt_at, attempts FROM webhook_deliveries WHERE account_id = ? AND state = 'pending'", [environmentId]),
        );
        if (row && Number(row.attempts) === 1) return Date.parse(row.next_attempt_at);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('no retry pending');
    };
    const liveDue = await pending(lender.accountId);
    await pending(`${lender.accountId}.test`);

    // The schedule's second attempt is 5 s after the first: a minute of simulated time makes it due at once.
    const advancedAt = Date.now();
    await advance(lender.test, 'PT1M');
    const live = await app.ctx.store.read((db) => db.get<{ next_attempt_at: string }>('SELECT next_attempt_at FROM webhook_deliveries WHERE account_id = ?', [lender.accountId]));
    expect(Date.parse(live!.next_attempt_at)).toBe(liveDue);
    const [, retried] = await testHook.waitFor(2, 4_000);
    expect(retried!.receivedAt - advancedAt).toBeLessThan(4_000);
    expect(retried!.headers['webhook-id']).toBe(testHook.deliveries[0]!.headers['webhook-id']);
  });
});

describe('resetTestClock', () => {
  it('returns the clock to real time; removing the test data does too', async () => {
    const lender: TestAccount = await app.newAccount('Clock Reset');
    await advance(lender.test, 'P10D');
    const { data, response } = await lender.test.POST('/v1/test/clock/reset');
    expect(response.status).toBe(200);
    expect(data!.offsetSeconds).toBe(0);
    expect(Math.abs(Date.parse(data!.now) - Date.now())).toBeLessThan(60_000);
    expect((await lender.test.GET('/v1/test/clock')).data!.offsetSeconds).toBe(0);

    await advance(lender.test, 'P10D');
    expect((await lender.test.DELETE('/v1/test/data')).response.status).toBe(200);
    expect((await lender.test.GET('/v1/test/clock')).data!.offsetSeconds).toBe(0);
  });

  it('a live key gets 404', async () => {
    const lender = await app.newAccount('Live Reset');
    expect((await lender.client.POST('/v1/test/clock/reset')).response.status).toBe(404);
  });
});
