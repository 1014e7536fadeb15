/**
 * Delivery behaviour of the outbox and the dispatcher, against the real app and receivers on
 * 127.0.0.1, under a clock the test moves by hand: the retry schedule, Retry-After, 410, five days
 * of failure, a receiver down then up, the per-endpoint concurrency limit, timeouts, redirects,
 * leases left by a dead dispatcher, and the transactional outbox itself.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import { publish } from '../../../src/events/outbox.ts';
import { newId } from '../../../src/ids.ts';
import { dueDeliveries, leaseDeliveries } from '../../../src/store/outbox.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { manualClock, specPayloadErrors, startReceiver, type Delivery, type Receiver } from '../../helpers/webhookReceiver.ts';

/** The documented schedule (docs/partners/webhooks.md, "What a delivery looks like"), written out here rather than read from the code's own table. */
const S = 1_000;
const MIN = 60 * S;
const H = 60 * MIN;
const DOCUMENTED_DELAYS_MS = [5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 10 * H];

const clock = manualClock();
let app: TestApp;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({
    clock,
    env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '1000' },
  });
  dispatcher = startDispatcher();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await dispatcher.stop();
  await app.close();
});

function startDispatcher(): WebhookDispatcher {
  // random() = 0.5 puts the jitter factor at exactly 1, so each delay is the schedule's own.
  return new WebhookDispatcher(app.ctx, { random: () => 0.5 }).start();
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

type EventName = 'application.approved' | 'document.uploaded';

async function register(owner: TestAccount, url: string, events: EventName[]) {
  const { data, response, error } = await owner.client.POST('/v1/webhooks', { body: { url, events } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

function payloadOf(event: EventName, tag = 'Jane Doe') {
  const mortgageId = newId('mtg');
  if (event === 'application.approved') {
    return { event, mortgageId, status: 'approved' as const, applicant: { name: tag, amount: 250000.5 }, timestamp: clock.now().toISOString() };
  }
  return { event, mortgageId, documentType: 'bank_statement' as const, url: `${app.baseUrl}/v1/applications/${mortgageId}/documents/${newId('doc')}/content` };
}

async function publishEvent(accountId: string, event: EventName, tag?: string) {
  return app.ctx.store.transaction((tx) => publish(tx, { accountId, payload: payloadOf(event, tag), occurredAt: clock.now() }));
}

async function attemptsOf(owner: TestAccount, webhookId: string) {
  const { data } = await owner.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId }, query: { limit: 100 } } });
  return data!.data;
}

async function until<T>(check: () => Promise<T | undefined | false>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Lets the dispatcher look (several polls) and asserts nothing new arrived. */
async function settle(ms = 200): Promise<void> {
  dispatcher.wake();
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('fan-out', () => {
  it('sends each event to every endpoint that chose it and to no other; every payload matches the spec', async () => {
    const owner = await app.newAccount('Fan Out Lending');
    const stranger = await app.newAccount('Stranger Bank');
    const approvals = await receiver();
    const documents = await receiver();
    const both = await receiver();
    const foreign = await receiver();
    await register(owner, approvals.url(), ['application.approved']);
    await register(owner, documents.url(), ['document.uploaded']);
    await register(owner, both.url(), ['application.approved', 'document.uploaded']);
    await register(stranger, foreign.url(), ['application.approved', 'document.uploaded']);
    for (const event of ['application.approved', 'document.uploaded', 'application.approved'] as const) await publishEvent(owner.accountId, event);
    await Promise.all([approvals.waitFor(2), documents.waitFor(1), both.waitFor(3)]);
    await settle();
    const events = (r: Receiver) => r.deliveries.map((d) => JSON.parse(d.body).event).sort();
    expect(events(approvals)).toEqual(['application.approved', 'application.approved']);
    expect(events(documents)).toEqual(['document.uploaded']);
    expect(events(both)).toEqual(['application.approved', 'application.approved', 'document.uploaded']);
    expect(foreign.deliveries).toHaveLength(0);
    for (const d of [...approvals.deliveries, ...documents.deliveries, ...both.deliveries]) {
      expect(specPayloadErrors(d.body)).toBeNull();
      expect(d.headers['content-type']).toBe('application/json');
      expect(d.headers['webhook-id']).toMatch(/^evt-[0-9a-z]{26}$/);
      expect(d.headers['webhook-timestamp']).toBe(String(Math.floor(clock.now().getTime() / 1000)));
    }
  });

  it('an event published in a transaction that rolls back is never sent', async () => {
    const owner = await app.newAccount('Rollback Lending');
    const r = await receiver();
    await register(owner, r.url(), ['application.approved']);
    await expect(
      app.ctx.store.transaction(async (tx) => {
        await publish(tx, { accountId: owner.accountId, payload: payloadOf('application.approved'), occurredAt: clock.now() });
        throw new Error('the approval failed after publishing');
      }),
    ).rejects.toThrow('the approval failed');
    await settle(300);
    expect(r.deliveries).toHaveLength(0);
  });

  it('publish refuses a payload that does not match the spec', async () => {
    const owner = await app.newAccount('Bad Payload Lending');
    const bad = { ...payloadOf('application.approved'), status: 'declined' } as unknown as ReturnType<typeof payloadOf>;
    await expect(
      app.ctx.store.transaction((tx) => publish(tx, { accountId: owner.accountId, payload: bad as never, occurredAt: clock.now() })),
    ).rejects.toThrow(/does not match the spec/);
  });
});

describe('retry schedule', () => {
  it('tries at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later, then gives up', async () => {
    const owner = await app.newAccount('Schedule Lending');
    const r = await receiver();
    r.answer(() => ({ status: 500 }));
    const hook = await register(owner, r.url(), ['application.approved']);
    const { eventId } = await publishEvent(owner.accountId, 'application.approved');
    await r.waitFor(1);
    for (let attempt = 1; attempt <= DOCUMENTED_DELAYS_MS.length; attempt++) {
      const [last] = await until(async () => {
        const log = await attemptsOf(owner, hook.webhookId);
        return log.length === attempt && log;
      });
      const delay = DOCUMENTED_DELAYS_MS[attempt - 1]!;
      expect(last).toMatchObject({ eventId, attempt, outcome: 'failed', statusCode: 500 });
      expect(Date.parse(last!.nextAttemptAt!) - clock.now().getTime()).toBe(delay);
      clock.advance(delay - 1);
      await settle(100);
      expect(r.deliveries).toHaveLength(attempt); // not a millisecond early
      clock.advance(1);
      dispatcher.wake();
      await r.waitFor(attempt + 1);
    }
    const log = await until(async () => {
      const l = await attemptsOf(owner, hook.webhookId);
      return l.length === 8 && l;
    });
    expect(log[0]).toMatchObject({ attempt: 8, outcome: 'failed', nextAttemptAt: null });
    clock.advance(48 * 3_600_000);
    await settle();
    expect(r.deliveries).toHaveLength(8);
    // A manual retry still sends it once more.
    const retry = await owner.client.POST('/v1/webhooks/{webhookId}/deliveries/{eventId}/retry', { params: { path: { webhookId: hook.webhookId, eventId } } });
    expect(retry.data).toMatchObject({ state: 'pending', attempts: 8 });
    await r.waitFor(9);
  });

  it("honours the receiver's Retry-After when it asks for a longer wait", async () => {
    const owner = await app.newAccount('Retry After Lending');
    const r = await receiver();
    r.answer(() => ({ status: 429, headers: { 'Retry-After': '120' } }));
    const hook = await register(owner, r.url(), ['application.approved']);
    await publishEvent(owner.accountId, 'application.approved');
    const [first] = await until(async () => {
      const log = await attemptsOf(owner, hook.webhookId);
      return log.length === 1 && log;
    });
    expect(first).toMatchObject({ statusCode: 429, outcome: 'failed' });
    expect(Date.parse(first!.nextAttemptAt!) - clock.now().getTime()).toBe(120_000);
    clock.advance(60_000); // past the schedule's 5 s, short of the 120 s asked for
    await settle();
    expect(r.deliveries).toHaveLength(1);
    r.answer(() => ({ status: 204 }));
    clock.advance(60_000);
    dispatcher.wake();
    await r.waitFor(2);
  });

  it('a receiver that was down gets every event once it is up again', async () => {
    const owner = await app.newAccount('Down Then Up Lending');
    const r = await receiver();
    const hook = await register(owner, r.url(), ['application.approved', 'document.uploaded']);
    await r.down();
    const published = [];
    for (let i = 0; i < 5; i++) published.push((await publishEvent(owner.accountId, i % 2 ? 'document.uploaded' : 'application.approved')).eventId);
    const failed = await until(async () => {
      const log = await attemptsOf(owner, hook.webhookId);
      return log.length === 5 && log;
    });
    for (const a of failed) expect(a).toMatchObject({ outcome: 'failed', statusCode: null, error: 'connection refused' });
    await r.up();
    clock.advance(DOCUMENTED_DELAYS_MS[0]!);
    dispatcher.wake();
    await r.waitFor(5);
    expect(r.deliveries.map((d) => d.headers['webhook-id']).sort()).toEqual([...published].sort());
    const endpoint = await owner.member.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
    expect(endpoint.data).toMatchObject({ enabled: true, failingSince: null });
  });
});

describe('secret rotation', () => {
  it('the previous secret stops signing when the 24-hour overlap ends', async () => {
    const owner = await app.newAccount('Rotation Lending');
    const r = await receiver();
    const hook = await register(owner, r.url(), ['application.approved']);
    const rotated = await owner.client.POST('/v1/webhooks/{webhookId}/rotate-secret', { params: { path: { webhookId: hook.webhookId } } });
    const signatureOf = (secret: string, d: Delivery) =>
      new Webhook(secret).sign(String(d.headers['webhook-id']), new Date(Number(d.headers['webhook-timestamp']) * 1000), d.body);

    clock.advance(24 * 3_600_000 - 1);
    await publishEvent(owner.accountId, 'application.approved');
    const [during] = await r.waitFor(1);
    expect(String(during!.headers['webhook-signature']).split(' ')).toEqual([signatureOf(rotated.data!.secret, during!), signatureOf(hook.secret, during!)]);

    clock.advance(1);
    await publishEvent(owner.accountId, 'application.approved');
    const [, after] = await r.waitFor(2);
    expect(after!.headers['webhook-signature']).toBe(signatureOf(rotated.data!.secret, after!));
    const { data } = await owner.member.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
    expect(data!.previousSecretExpiresAt).toBeNull();
  });
});

describe('endpoint health', () => {
  it('410 Gone disables the endpoint, which then gets no more events', async () => {
    const owner = await app.newAccount('Gone Lending');
    const r = await receiver();
    r.answer(() => ({ status: 410 }));
    const hook = await register(owner, r.url(), ['application.approved']);
    await publishEvent(owner.accountId, 'application.approved');
    const endpoint = await until(async () => {
      const { data } = await owner.member.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
      return data!.enabled === false && data;
    });
    expect(endpoint).toMatchObject({ disabledReason: 'gone', disabledAt: clock.now().toISOString() });
    const [attempt] = await attemptsOf(owner, hook.webhookId);
    expect(attempt).toMatchObject({ statusCode: 410, outcome: 'failed', nextAttemptAt: null });
    await publishEvent(owner.accountId, 'application.approved');
    clock.advance(3_600_000);
    await settle();
    expect(r.deliveries).toHaveLength(1);
  });

  it('an endpoint whose every attempt failed for five days is disabled; a success in between resets the count', async () => {
    const owner = await app.newAccount('Failing Lending');
    const r = await receiver();
    r.answer(() => ({ status: 503 }));
    const hook = await register(owner, r.url(), ['application.approved']);
    const read = async () => (await owner.member.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } })).data!;
    const start = clock.now().toISOString();
    await publishEvent(owner.accountId, 'application.approved');
    await until(async () => (await read()).failingSince === start);

    clock.advance(4 * 24 * 3_600_000); // four days of failure: still enabled
    await publishEvent(owner.accountId, 'application.approved');
    await r.waitFor(2);
    await until(async () => (await attemptsOf(owner, hook.webhookId)).length >= 2);
    expect(await read()).toMatchObject({ enabled: true, failingSince: start });

    clock.advance(24 * 3_600_000); // five days
    await publishEvent(owner.accountId, 'application.approved');
    const disabled = await until(async () => {
      const e = await read();
      return !e.enabled && e;
    });
    expect(disabled).toMatchObject({ disabledReason: 'failing', failingSince: start });

    // Enabled again, a success clears the run of failures.
    r.answer(() => ({ status: 200 }));
    await owner.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: true } });
    const before = r.deliveries.length;
    clock.advance(DOCUMENTED_DELAYS_MS.at(-1)!); // every pending retry is due
    dispatcher.wake();
    await r.waitFor(before + 1);
    await until(async () => {
      const e = await read();
      return e.enabled && e.failingSince === null;
    });
  });
});

describe('dispatcher', () => {
  it('a slow receiver holds up no other endpoint (per-endpoint concurrency limit)', async () => {
    const owner = await app.newAccount('Concurrency Lending');
    const slow = await receiver();
    const fast = await receiver();
    // On PostgreSQL each publish below is a network round trip: give the slow receiver time enough
    // that the twenty publishes finish well within one of its answers.
    const delayMs = app.engine === 'postgres' ? 2_000 : 800;
    slow.answer(() => ({ status: 200, delayMs }));
    await register(owner, slow.url(), ['document.uploaded']);
    await register(owner, fast.url(), ['application.approved']);
    for (let i = 0; i < 10; i++) await publishEvent(owner.accountId, 'document.uploaded');
    for (let i = 0; i < 10; i++) await publishEvent(owner.accountId, 'application.approved');
    await fast.waitFor(10);
    // All ten reached the fast receiver while the slow one had received only its limit of 2.
    expect(slow.deliveries.length).toBeLessThanOrEqual(2);
    await slow.waitFor(10, 5 * delayMs + 5_000);
  });

  it('an attempt with no answer within the timeout fails and is retried', async () => {
    const owner = await app.newAccount('Timeout Lending');
    const r = await receiver();
    let calls = 0;
    r.answer(() => (++calls === 1 ? { status: 200, delayMs: 3_000 } : { status: 200 }));
    const hook = await register(owner, r.url(), ['application.approved']);
    await publishEvent(owner.accountId, 'application.approved');
    const [attempt] = await until(async () => {
      const log = await attemptsOf(owner, hook.webhookId);
      return log.length === 1 && log;
    });
    expect(attempt).toMatchObject({ outcome: 'failed', statusCode: null, error: 'timed out after 1000 ms' });
    clock.advance(DOCUMENTED_DELAYS_MS[0]!);
    dispatcher.wake();
    await r.waitFor(2);
  });

  it('does not follow redirects', async () => {
    const owner = await app.newAccount('Redirect Lending');
    const r = await receiver();
    const target = await receiver();
    r.answer(() => ({ status: 307, headers: { Location: target.url('/elsewhere') } }));
    const hook = await register(owner, r.url(), ['application.approved']);
    await publishEvent(owner.accountId, 'application.approved');
    const [attempt] = await until(async () => {
      const log = await attemptsOf(owner, hook.webhookId);
      return log.length === 1 && log;
    });
    expect(attempt).toMatchObject({ outcome: 'failed', statusCode: 307, error: 'redirect not followed' });
    expect(target.deliveries).toHaveLength(0);
  });

  it('a delivery claimed by a dispatcher that died is sent once its lease runs out', async () => {
    const owner = await app.newAccount('Lease Lending');
    const r = await receiver();
    await dispatcher.stop(); // only the "dead" claim below may touch the delivery for now
    const hook = await register(owner, r.url(), ['application.approved']);
    const { eventId } = await publishEvent(owner.accountId, 'application.approved');
    const now = clock.now();
    const leaseMs = 60_000;
    await app.ctx.store.transaction(async (tx) => {
      const due = await dueDeliveries(tx, now.toISOString(), [], 100);
      const mine = due.find((d) => d.event_id === eventId && d.webhook_id === hook.webhookId)!;
      expect(await leaseDeliveries(tx, mine.webhook_id, [eventId], now.toISOString(), new Date(now.getTime() + leaseMs).toISOString(), 'dead-dispatcher')).toBe(1);
    });
    dispatcher = startDispatcher();
    await settle(200);
    expect(r.deliveries).toHaveLength(0); // still leased by the dead one
    clock.advance(leaseMs);
    dispatcher.wake();
    const [delivery] = await r.waitFor(1);
    expect(delivery!.headers['webhook-id']).toBe(eventId);
  });
});
