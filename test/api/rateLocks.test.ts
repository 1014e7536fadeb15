/**
 * Rate locks over HTTP, through the contract-checked client: locking a quote for a period of the
 * rate sheet, the snapshot that a rate-sheet change does not move, extension and cancellation,
 * reading and listing, the expiry job with its warning, and the event matrix (each rate_lock.*
 * kind delivered only to the endpoints that chose it). Time is a clock the test moves by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_SHEET } from '../../src/domain/pricing/rateSheet.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { sweepRateLocks } from '../../src/services/rateLocks.ts';
import { startTestApp, type ApiClient, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock, specPayloadErrors, startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const clock = manualClock(Date.parse('2026-11-21T18:30:00.000Z'));
let app: TestApp;
let lender: TestAccount;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ clock, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', RATE_LOCK_EXPIRING_LEAD_HOURS: '48' } });
  lender = await app.newAccount('Harbor Lending');
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

async function quote(as: ApiClient = lender.client, amount = 350000) {
  const { data, response, error } = await as.POST('/v1/quotes', { body: { amount, term: 30 } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

async function lock(quoteId: string, body: { periodDays: number; mortgageId?: string } = { periodDays: 30 }, as: ApiClient = lender.client) {
  return as.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId } }, body });
}

async function application(as: ApiClient = lender.client) {
  const { data } = await as.POST('/v1/applications', { body: { applicant: { name: 'Jane Doe', amount: 350000 }, term: 30 } });
  return data!.mortgageId;
}

/** Resolves once no delivery of the environment is pending (every attempt recorded), so a clock jump cannot expire a lease in flight. */
async function deliveriesSettled(environmentId: string): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    const row = await app.ctx.store.read((db) => db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE account_id = ? AND state = 'pending'", [environmentId]));
    if (Number(row!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('deliveries still pending after 10 s');
}

describe('lockQuote', () => {
  it('locks the quote for the chosen period: its rate plus the period adjustment, its fees, until now + the period', async () => {
    const q = await quote();
    const { data, response, error } = await lock(q.quoteId, { periodDays: 30 });
    expect(response.status, JSON.stringify(error)).toBe(201);
    expect(data).toMatchObject({
      quoteId: q.quoteId,
      mortgageId: null,
      status: 'active',
      periodDays: 30,
      amount: 350000,
      term: 30,
      currency: q.currency,
      interestRate: q.interestRate,
      rateAdjustment: 0,
      monthlyPayment: q.monthlyPayment,
      fees: q.fees,
      extensionFeePerDay: 25,
      extendedDays: 0,
      extensionFees: 0,
      lockedAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 30 * DAY).toISOString(),
      endedAt: null,
      livemode: true,
    });
    expect(data!.lockId).toMatch(/^lck-[0-9a-z]{26}$/);
  });

  it('a longer period costs its rate adjustment: 45 days adds 0.125 points and a higher payment', async () => {
    const q = await quote();
    const { data } = await lock(q.quoteId, { periodDays: 45 });
    expect(data!.rateAdjustment).toBe(0.125);
    expect(data!.interestRate).toBe(Number((q.interestRate + 0.125).toFixed(3)));
    expect(data!.monthlyPayment).toBeGreaterThan(q.monthlyPayment);
    expect(data!.expiresAt).toBe(new Date(clock.now().getTime() + 45 * DAY).toISOString());
  });

  it('a period the rate sheet does not offer is 422 lock_period_not_offered, naming the offered ones', async () => {
    const q = await quote();
    const { error, response } = await lock(q.quoteId, { periodDays: 90 });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'lock_period_not_offered', errors: [{ pointer: '/periodDays' }] });
    expect(error!.detail).toContain('30, 45, 60');
  });

  it('an application of the account can be named; an unknown one is 422 application_not_found', async () => {
    const mortgageId = await application();
    const { data } = await lock((await quote()).quoteId, { periodDays: 30, mortgageId });
    expect(data!.mortgageId).toBe(mortgageId);
    const other = await app.newAccount('Other Lending');
    const foreign = await application(other.client);
    const { error, response } = await lock((await quote()).quoteId, { periodDays: 30, mortgageId: foreign });
    expect(response.status).toBe(422);
    expect(error!.code).toBe('application_not_found');
  });

  it('a second active lock of the quote or of the application is 409 rate_lock_exists', async () => {
    const mortgageId = await application();
    const q = await quote();
    const first = await lock(q.quoteId, { periodDays: 30, mortgageId });
    const again = await lock(q.quoteId, { periodDays: 45 });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'rate_lock_exists', existingLockId: first.data!.lockId });
    const sameApplication = await lock((await quote()).quoteId, { periodDays: 30, mortgageId });
    expect(sameApplication.response.status).toBe(409);
  });

  it('an expired quote is 422 quote_expired, and a quote of another account 404', async () => {
    const q = await quote();
    clock.advance(31 * DAY);
    try {
      const { error, response } = await lock(q.quoteId);
      expect(response.status).toBe(422);
      expect(error!.code).toBe('quote_expired');
    } finally {
      clock.advance(-31 * DAY);
    }
    const other = await app.newAccount('Other Lending');
    const { response } = await lock(q.quoteId, { periodDays: 30 }, other.client);
    expect(response.status).toBe(404);
  });

  it('a locked quote keeps its rate and fees when the rate sheet changes; a new quote gets the new sheet', async () => {
    const account = await app.newAccount('Sheet Changer');
    const q = await quote(account.client);
    const { data: locked } = await lock(q.quoteId, { periodDays: 30 }, account.client);
    const put = await account.client.PUT('/v1/pricing', {
      body: {
        ...structuredClone(DEFAULT_RATE_SHEET),
        baseRates: [{ minTermYears: 1, maxTermYears: 40, rate: 7.25 }],
        flatFees: [{ name: 'appraisal', amount: 900, prepaidFinanceCharge: false }],
        lockExtensionFeePerDay: 40,
      },
    });
    expect(put.response.status, JSON.stringify(put.error)).toBe(200);
    const { data: after } = await account.client.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: locked!.lockId } } });
    expect(after).toEqual(locked);
    const fresh = await quote(account.client);
    expect(fresh.interestRate).not.toBe(q.interestRate);
    const { data: freshLock } = await lock(fresh.quoteId, { periodDays: 30 }, account.client);
    expect(freshLock!.interestRate).toBe(fresh.interestRate);
    expect(freshLock!.extensionFeePerDay).toBe(40);
  });

  it('lock periods and the extension fee come from the rate sheet, with rules: a repeated period is 422', async () => {
    const account = await app.newAccount('Custom Periods');
    const sheet = { ...structuredClone(DEFAULT_RATE_SHEET), lockPeriods: [{ days: 15, rateAdjustment: -0.125 }, { days: 90, rateAdjustment: 0.5 }] };
    expect((await account.client.PUT('/v1/pricing', { body: sheet })).response.status).toBe(200);
    const q = await quote(account.client);
    const { data } = await lock(q.quoteId, { periodDays: 15 }, account.client);
    expect(data!.interestRate).toBe(Number((q.interestRate - 0.125).toFixed(3)));
    expect((await lock((await quote(account.client)).quoteId, { periodDays: 30 }, account.client)).response.status).toBe(422);
    const repeated = { ...sheet, lockPeriods: [{ days: 30, rateAdjustment: 0 }, { days: 30, rateAdjustment: 0.1 }] };
    const { error, response } = await account.client.PUT('/v1/pricing', { body: repeated });
    expect(response.status).toBe(422);
    expect(error!.errors).toEqual([{ pointer: '/lockPeriods/1/days', message: 'repeats the lock period of 30 days' }]);
    const cents = await account.client.PUT('/v1/pricing', { body: { ...sheet, lockExtensionFeePerDay: 12.345 } });
    expect(cents.response.status).toBe(400);
  });
});

describe('extendRateLock', () => {
  it('moves expiresAt by the days and charges the fee per day', async () => {
    const { data: locked } = await lock((await quote()).quoteId);
    const { data, response, error } = await lender.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: locked!.lockId } }, body: { days: 15 } });
    expect(response.status, JSON.stringify(error)).toBe(200);
    expect(data).toMatchObject({
      status: 'active',
      interestRate: locked!.interestRate,
      expiresAt: new Date(Date.parse(locked!.expiresAt) + 15 * DAY).toISOString(),
      extendedDays: 15,
      extensionFees: 375,
    });
    const twice = await lender.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: locked!.lockId } }, body: { days: 1 } });
    expect(twice.data).toMatchObject({ extendedDays: 16, extensionFees: 400 });
  });

  it('a cancelled lock, or one past its expiry, is 409 rate_lock_not_active', async () => {
    const { data: locked } = await lock((await quote()).quoteId);
    await lender.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: locked!.lockId } } });
    const { error, response } = await lender.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: locked!.lockId } }, body: { days: 5 } });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ code: 'rate_lock_not_active', currentStatus: 'cancelled' });

    const { data: due } = await lock((await quote()).quoteId);
    clock.advance(30 * DAY);
    try {
      const late = await lender.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: due!.lockId } }, body: { days: 5 } });
      expect(late.response.status).toBe(409);
      expect(late.error).toMatchObject({ code: 'rate_lock_not_active', currentStatus: 'expired' });
      const { data: read } = await lender.client.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: due!.lockId } } });
      expect(read).toMatchObject({ status: 'expired', endedAt: clock.now().toISOString() });
    } finally {
      clock.advance(-30 * DAY);
    }
  });

  it('days outside 1 to 90 are 400', async () => {
    const { data: locked } = await lock((await quote()).quoteId);
    for (const days of [0, 91]) {
      const { response } = await lender.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: locked!.lockId } }, body: { days } });
      expect(response.status).toBe(400);
    }
  });
  it('extensions add at most 180 days to one lock in all: the one past it is 400 and changes nothing', async () => {
    const { data: locked } = await lock((await quote()).quoteId);
    const extend = (days: number) => lender.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: locked!.lockId } }, body: { days } });
    expect((await extend(90)).response.status).toBe(200);
    expect((await extend(89)).response.status).toBe(200);
    const over = await extend(2);
    expect(over.response.status).toBe(400);
    expect(over.error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/days' }] });
    const last = await extend(1);
    expect(last.data).toMatchObject({ extendedDays: 180 });
    expect(last.data!.expiresAt).toBe(new Date(Date.parse(locked!.expiresAt) + 180 * DAY).toISOString());
  });
});

describe('cancelRateLock', () => {
  it('cancels an active lock once; the quote can then be locked again', async () => {
    const q = await quote();
    const { data: locked } = await lock(q.quoteId);
    const { data, response } = await lender.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: locked!.lockId } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ status: 'cancelled', endedAt: clock.now().toISOString() });
    const again = await lender.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: locked!.lockId } } });
    expect(again.response.status).toBe(409);
    expect((await lock(q.quoteId)).response.status).toBe(201);
  });
});

describe('getRateLock', () => {
  it('reads the lock back; another account gets 404', async () => {
    const { data: locked } = await lock((await quote()).quoteId);
    const { data } = await lender.client.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: locked!.lockId } } });
    expect(data).toEqual(locked);
    const other = await app.newAccount('Other Lending');
    const { response } = await other.client.GET('/v1/rate-locks/{lockId}', { params: { path: { lockId: locked!.lockId } } });
    expect(response.status).toBe(404);
  });
});

describe('listRateLocks', () => {
  it('lists the account’s locks newest first, filtered by status, page by page', async () => {
    const account = await app.newAccount('Lister');
    const ids: string[] = [];
    for (let k = 0; k < 3; k++) ids.push((await lock((await quote(account.client)).quoteId, { periodDays: 30 }, account.client)).data!.lockId);
    await account.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: ids[1]! } } });
    const { data: all } = await account.client.GET('/v1/rate-locks', { params: { query: { limit: 2 } } });
    expect(all!.data.map((l) => l.lockId)).toEqual([ids[2], ids[1]]);
    const { data: rest } = await account.client.GET('/v1/rate-locks', { params: { query: { limit: 2, cursor: all!.nextCursor! } } });
    expect(rest!.data.map((l) => l.lockId)).toEqual([ids[0]]);
    expect(rest!.nextCursor).toBeNull();
    const { data: active } = await account.client.GET('/v1/rate-locks', { params: { query: { status: 'active' } } });
    expect(active!.data.map((l) => l.lockId)).toEqual([ids[2], ids[0]]);
    const { data: cancelled } = await account.client.GET('/v1/rate-locks', { params: { query: { status: 'cancelled' } } });
    expect(cancelled!.data.map((l) => l.lockId)).toEqual([ids[1]]);
  });

  it('an application’s active lock: filtered by mortgageId and status', async () => {
    const account = await app.newAccount('Application Lock');
    const mortgageId = await application(account.client);
    const { data: first } = await lock((await quote(account.client)).quoteId, { periodDays: 30, mortgageId }, account.client);
    await account.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: first!.lockId } } });
    const { data: second } = await lock((await quote(account.client)).quoteId, { periodDays: 60, mortgageId }, account.client);
    await lock((await quote(account.client)).quoteId, { periodDays: 30 }, account.client);
    const { data: active } = await account.client.GET('/v1/rate-locks', { params: { query: { mortgageId, status: 'active' } } });
    expect(active!.data).toEqual([second]);
    const { data: all } = await account.client.GET('/v1/rate-locks', { params: { query: { mortgageId } } });
    expect(all!.data.map((l) => l.lockId)).toEqual([second!.lockId, first!.lockId]);
  });
});

describe('the application’s rateLock', () => {
  it('an application shows its active lock in get, list and submit, and null once the lock is cancelled or expired', async () => {
    const account = await app.newAccount('Application Shows Lock');
    const unlocked = await application(account.client);
    const locked = await application(account.client);
    const { data: made } = await lock((await quote(account.client)).quoteId, { periodDays: 30, mortgageId: locked }, account.client);
    const summary = { lockId: made!.lockId, status: 'active', expiresAt: made!.expiresAt, periodDays: 30, interestRate: made!.interestRate };

    const get = async (mortgageId: string) => (await account.client.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } })).data!;
    expect((await get(locked)).rateLock).toEqual(summary);
    expect((await get(unlocked)).rateLock).toBeNull();
    const { data: list } = await account.client.GET('/v1/applications', {});
    expect(Object.fromEntries(list!.data.map((a) => [a.mortgageId, a.rateLock]))).toEqual({ [locked]: summary, [unlocked]: null });
    const { data: submitted } = await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: locked } } });
    expect(submitted!.rateLock).toEqual(summary);

    await account.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: made!.lockId } } });
    expect((await get(locked)).rateLock).toBeNull();

    const { data: again } = await lock((await quote(account.client)).quoteId, { periodDays: 30, mortgageId: unlocked }, account.client);
    expect((await get(unlocked)).rateLock?.lockId).toBe(again!.lockId);
    clock.advance(31 * DAY);
    await sweepRateLocks(app.ctx);
    expect((await get(unlocked)).rateLock).toBeNull();
  });
});

describe('rate lock events', () => {
  it('each rate_lock.* kind goes only to the endpoints that chose it, with the documented payload', async () => {
    const account = await app.newAccount('Event Matrix');
    const kinds = ['rate_lock.created', 'rate_lock.extended', 'rate_lock.expiring', 'rate_lock.expired', 'rate_lock.cancelled'] as const;
    const hooks: Record<string, Receiver> = {};
    for (const kind of kinds) {
      hooks[kind] = await receiver();
      const { response } = await account.client.POST('/v1/webhooks', { body: { url: hooks[kind].url(`/${kind}`), events: [kind] } });
      expect(response.status).toBe(201);
    }
    const { data: kept } = await lock((await quote(account.client)).quoteId, { periodDays: 30 }, account.client);
    await account.client.POST('/v1/rate-locks/{lockId}/extend', { params: { path: { lockId: kept!.lockId } }, body: { days: 2 } });
    const { data: dropped } = await lock((await quote(account.client)).quoteId, { periodDays: 45 }, account.client);
    await account.client.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: dropped!.lockId } } });
    // Delivered before the clock jumps (a jump past an attempt's lease would send it again: at least once).
    await hooks['rate_lock.created']!.waitFor(2);
    await hooks['rate_lock.extended']!.waitFor(1);
    await hooks['rate_lock.cancelled']!.waitFor(1);
    await deliveriesSettled(account.accountId);

    // 32 days after locking, less 47 hours: within the 48-hour lead of the extended expiry.
    clock.advance(32 * DAY - 47 * HOUR);
    try {
      await sweepRateLocks(app.ctx);
      await sweepRateLocks(app.ctx);
      const [warning] = await hooks['rate_lock.expiring']!.waitFor(1);
      expect(JSON.parse(warning!.body)).toMatchObject({ lockId: kept!.lockId, status: 'active' });
      expect(hooks['rate_lock.expired']!.deliveries).toEqual([]);
      await deliveriesSettled(account.accountId);
      clock.advance(47 * HOUR);
      await sweepRateLocks(app.ctx);
      await sweepRateLocks(app.ctx);
      const expected: Record<string, string[]> = {
        'rate_lock.created': [kept!.lockId, dropped!.lockId],
        'rate_lock.extended': [kept!.lockId],
        'rate_lock.expiring': [kept!.lockId],
        'rate_lock.expired': [kept!.lockId],
        'rate_lock.cancelled': [dropped!.lockId],
      };
      for (const kind of kinds) {
        const deliveries = await hooks[kind]!.waitFor(expected[kind]!.length);
        for (const delivery of deliveries) expect(specPayloadErrors(delivery.body)).toBeNull();
        expect(deliveries.map((d) => JSON.parse(d.body).event), deliveries.map((d) => `${d.headers['webhook-id']} ${d.body}`).join('\n')).toEqual(expected[kind]!.map(() => kind));
        expect(deliveries.map((d) => JSON.parse(d.body).lockId).sort()).toEqual([...expected[kind]!].sort());
      }
      expect(JSON.parse(hooks['rate_lock.expired']!.deliveries[0]!.body)).toMatchObject({ status: 'expired', expiresAt: new Date(Date.parse(kept!.expiresAt) + 2 * DAY).toISOString() });
      const { data: feed } = await account.client.GET('/v1/events', { params: { query: { event: 'rate_lock.expired' } } });
      expect(feed!.data.map((e) => e.payload)).toEqual([JSON.parse(hooks['rate_lock.expired']!.deliveries[0]!.body)]);
      // Nothing else arrived at any endpoint (the sweeps ran twice: still one warning, one expiry).
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const kind of kinds) expect(hooks[kind]!.deliveries).toHaveLength(expected[kind]!.length);
    } finally {
      clock.advance(-32 * DAY);
    }
  });
});
