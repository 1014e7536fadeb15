/**
 * Recovery (POST /v1/webhooks/{webhookId}/recover): an endpoint that missed events (its receiver
 * failed them, or it was disabled while they happened) gets every retained event since `since` of
 * the kinds it chooses, once more, signed like any delivery, with the same webhook-id; what it
 * already acknowledged is not sent again. Real app, real dispatcher, receivers on 127.0.0.1, a
 * clock the test moves by hand.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import { publish } from '../../../src/events/outbox.ts';
import { newId } from '../../../src/ids.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { manualClock, startReceiver, type Receiver } from '../../helpers/webhookReceiver.ts';

const DAY = 24 * 3_600_000;
// Starts at the real time: receivers verify signatures against it (Standard Webhooks' 5-minute tolerance).
const clock = manualClock();
let app: TestApp;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ clock, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
  dispatcher = new WebhookDispatcher(app.ctx, { random: () => 0.5 }).start();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await dispatcher?.stop();
  await app?.close();
});

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

async function publishEvent(owner: TestAccount, event: EventName): Promise<string> {
  const mortgageId = newId('mtg');
  const payload =
    event === 'application.approved'
      ? { event, mortgageId, status: 'approved' as const, applicant: { name: 'Jane Doe', amount: 250000 }, timestamp: clock.now().toISOString() }
      : { event, mortgageId, documentType: 'income_proof' as const, url: `${app.baseUrl}/v1/applications/${mortgageId}/documents/${newId('doc')}/content` };
  const { eventId } = await app.ctx.store.transaction((tx) => publish(tx, { accountId: owner.accountId, payload, occurredAt: clock.now() }));
  return eventId;
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

async function attempts(owner: TestAccount, webhookId: string) {
  const { data } = await owner.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId }, query: { limit: 100 } } });
  return data!.data;
}

function recover(owner: TestAccount, webhookId: string, since: string, headers: Record<string, string> = {}) {
  return owner.client.POST('/v1/webhooks/{webhookId}/recover', { params: { path: { webhookId }, header: headers as never }, body: { since } });
}

describe('recoverWebhookEvents', () => {
  it('sends an endpoint the events it failed and those it missed while disabled, signed, with their own webhook-id and the payload of the feed; not what it acknowledged', async () => {
    const owner = await app.newAccount('Recovering Lending');
    const r = await receiver();
    const hook = await register(owner, r.url(), ['application.approved']);
    const start = clock.now().toISOString();

    clock.advance(60_000);
    const acknowledged = await publishEvent(owner, 'application.approved');
    // Each attempt is recorded before the clock moves on, or its lease would run out and it would go again.
    await until(async () => (await attempts(owner, hook.webhookId)).length === 1);

    // The receiver goes away for good (410): the delivery fails and the endpoint is disabled.
    r.answer(() => ({ status: 410 }));
    clock.advance(60_000);
    const failed = await publishEvent(owner, 'application.approved');
    await until(async () => (await attempts(owner, hook.webhookId)).length === 2);
    await until(async () => (await owner.member.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } })).data!.enabled === false);

    // Meanwhile: an event it chooses (no delivery: it is disabled), and one it does not choose.
    clock.advance(60_000);
    const betweenFailedAndMissed = clock.now().toISOString();
    clock.advance(60_000);
    const missed = await publishEvent(owner, 'application.approved');
    await publishEvent(owner, 'document.uploaded');

    const whileDisabled = await recover(owner, hook.webhookId, start);
    expect(whileDisabled.response.status).toBe(409);
    expect(whileDisabled.error).toMatchObject({ code: 'webhook_disabled' });

    r.answer(() => ({ status: 200 }));
    await owner.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: true } });
    const succeeded = async (n: number) => until(async () => (await attempts(owner, hook.webhookId)).filter((a) => a.outcome === 'succeeded').length === n);

    // A window that starts after the failed delivery: only the missed event.
    clock.advance(60_000);
    const narrow = await recover(owner, hook.webhookId, betweenFailedAndMissed);
    expect(narrow.response.status).toBe(202);
    expect(narrow.data).toEqual({ webhookId: hook.webhookId, since: betweenFailedAndMissed, until: clock.now().toISOString(), queued: 1, alreadyDelivered: 0, livemode: true });
    await r.waitFor(3);
    await succeeded(2);

    // From the start: the failed one; the acknowledged and the one just recovered are not sent again.
    const wide = await recover(owner, hook.webhookId, start);
    expect(wide.data).toMatchObject({ queued: 1, alreadyDelivered: 2 });
    await r.waitFor(4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    dispatcher.wake();
    expect(r.deliveries).toHaveLength(4);

    const recovered = r.deliveries.slice(2);
    expect(recovered.map((d) => d.headers['webhook-id'])).toEqual([missed, failed]);
    const verifier = new Webhook(hook.secret);
    for (const d of recovered) {
      verifier.verify(d.body, d.headers as Record<string, string>);
      const { data: event } = await owner.member.GET('/v1/events/{eventId}', { params: { path: { eventId: d.headers['webhook-id'] as string } } });
      expect(d.body).toBe(JSON.stringify(event!.payload));
    }
    expect(r.deliveries.filter((d) => d.headers['webhook-id'] === acknowledged)).toHaveLength(1);

    // The delivery log shows the recovered attempts; once everything succeeded there is nothing to queue.
    await succeeded(3);
    expect((await recover(owner, hook.webhookId, start)).data).toMatchObject({ queued: 0, alreadyDelivered: 3 });
  }, 30_000);

  it('brings forward a delivery waiting for its next retry', async () => {
    const owner = await app.newAccount('Impatient Lending');
    const r = await receiver();
    r.answer(() => ({ status: 503 }));
    const hook = await register(owner, r.url(), ['document.uploaded']);
    const since = clock.now().toISOString();
    const eventId = await publishEvent(owner, 'document.uploaded');
    const [first] = await until(async () => {
      const log = await attempts(owner, hook.webhookId);
      return log.length === 1 && log;
    });
    expect(first).toMatchObject({ eventId, outcome: 'failed', statusCode: 503 });
    expect(Date.parse(first!.nextAttemptAt!)).toBeGreaterThan(clock.now().getTime());

    r.answer(() => ({ status: 204 }));
    const { data } = await recover(owner, hook.webhookId, since);
    expect(data).toMatchObject({ queued: 1, alreadyDelivered: 0 });
    await r.waitFor(2); // without moving the clock
    const [latest] = await until(async () => {
      const log = await attempts(owner, hook.webhookId);
      return log.length === 2 && log;
    });
    expect(latest).toMatchObject({ eventId, attempt: 2, outcome: 'succeeded', statusCode: 204 });
  }, 30_000);

  it('leaves out test events and the events of other accounts', async () => {
    const owner = await app.newAccount('Only Mine Lending');
    const other = await app.newAccount('Not Mine Lending');
    const hook = await register(owner, 'http://127.0.0.1:9/hooks', ['application.approved']);
    const since = clock.now().toISOString();
    await owner.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: hook.webhookId } }, body: { event: 'application.approved' } });
    await publishEvent(other, 'application.approved');
    await owner.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: false } });
    await publishEvent(owner, 'application.approved'); // missed while disabled
    await owner.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: true } });
    const { data } = await recover(owner, hook.webhookId, since);
    expect(data).toMatchObject({ queued: 1, alreadyDelivered: 0 });
  });

  it('refuses a since before the retention period or in the future (422), and one that names no moment (400)', async () => {
    const owner = await app.newAccount('Window Lending');
    const hook = await register(owner, 'https://hooks.recovery.example/events', ['application.approved']);
    const now = clock.now().getTime();
    const earliest = new Date(now - 30 * DAY).toISOString();

    const tooOld = await recover(owner, hook.webhookId, new Date(now - 30 * DAY - 1).toISOString());
    expect(tooOld.response.status).toBe(422);
    expect(tooOld.error).toMatchObject({ code: 'since_before_retention', earliestSince: earliest, errors: [{ pointer: '/since' }] });
    expect(tooOld.error!.detail).toContain('30 days');
    expect((await recover(owner, hook.webhookId, earliest)).response.status).toBe(202);

    const future = await recover(owner, hook.webhookId, new Date(now + 1).toISOString());
    expect(future.response.status).toBe(422);
    expect(future.error).toMatchObject({ code: 'since_in_future', errors: [{ pointer: '/since' }] });
    expect((await recover(owner, hook.webhookId, new Date(now).toISOString())).data).toMatchObject({ queued: 0 });

    const impossible = await recover(owner, hook.webhookId, '2026-02-30');
    expect(impossible.response.status).toBe(400);
    expect(impossible.error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/since' }] });
    const missing = await app.fetch(`/v1/webhooks/${hook.webhookId}/recover`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(missing.status).toBe(400);
  });

  it('accepts a date (midnight UTC) and a date-time with an offset, and answers the window in UTC', async () => {
    const owner = await app.newAccount('Offset Lending');
    const hook = await register(owner, 'https://hooks.recovery.example/offset', ['application.approved']);
    const day = new Date(clock.now().getTime() - DAY).toISOString().slice(0, 10);
    expect((await recover(owner, hook.webhookId, day)).data!.since).toBe(`${day}T00:00:00.000Z`);
    expect((await recover(owner, hook.webhookId, `${day}T09:30:00+02:00`)).data!.since).toBe(`${day}T07:30:00.000Z`);
  });

  it('needs an admin key (403 for a member), and an endpoint of the account (404 otherwise)', async () => {
    const owner = await app.newAccount('Admin Only Lending');
    const other = await app.newAccount('Stranger Lending');
    const hook = await register(owner, 'https://hooks.recovery.example/admin', ['application.approved']);
    const since = new Date(clock.now().getTime() - DAY).toISOString();
    const member = await owner.member.POST('/v1/webhooks/{webhookId}/recover', { params: { path: { webhookId: hook.webhookId } }, body: { since } });
    expect(member.response.status).toBe(403);
    const stranger = await recover(other, hook.webhookId, since);
    expect(stranger.response.status).toBe(404);
    expect(stranger.error).toMatchObject({ code: 'not_found' });
  });

  it('replays the first answer for the same Idempotency-Key and body, without queuing again', async () => {
    const owner = await app.newAccount('Idempotent Lending');
    const r = await receiver();
    r.answer(() => ({ status: 500 }));
    const hook = await register(owner, r.url(), ['application.approved']);
    const since = clock.now().toISOString();
    await publishEvent(owner, 'application.approved');
    await r.waitFor(1);
    await until(async () => (await attempts(owner, hook.webhookId)).length === 1);
    r.answer(() => ({ status: 200 }));
    clock.advance(1);

    const key = { 'Idempotency-Key': 'recover-after-outage' };
    const first = await recover(owner, hook.webhookId, since, key);
    expect(first.data).toMatchObject({ queued: 1 });
    await r.waitFor(2);
    const again = await recover(owner, hook.webhookId, since, key);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first.data);
    const reused = await recover(owner, hook.webhookId, new Date(Date.parse(since) + 1).toISOString(), key);
    expect(reused.response.status).toBe(422);
    expect(reused.error).toMatchObject({ code: 'idempotency_key_reused' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.deliveries).toHaveLength(2);
  }, 30_000);
});
