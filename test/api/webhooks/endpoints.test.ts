/**
 * /v1/webhooks over HTTP against the real app, with the dispatcher running and receivers on
 * 127.0.0.1 (allow-listed: WEBHOOK_ALLOWED_HOSTS=127.0.0.1,localhost). Every response is checked
 * against the spec by the contract client; every delivery is verified with the `standardwebhooks`
 * package and validated against the spec's webhooks schemas.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import { publish } from '../../../src/events/outbox.ts';
import { newId } from '../../../src/ids.ts';
import { eventually } from '../../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { deliveriesBeforeSentinel, specPayloadErrors, specWebhooks, startReceiver, type Delivery, type Receiver } from '../../helpers/webhookReceiver.ts';

let app: TestApp;
let account: TestAccount;
let other: TestAccount;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // One account registers an endpoint per test here, more than the default cap of 16 (test/api/accountCaps.test.ts checks the cap).
  // One delivery at a time per endpoint: absence checks wait for a sentinel (deliveriesBeforeSentinel).
  app = await startTestApp({
    env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_ENDPOINTS_PER_ACCOUNT: '64', WEBHOOK_ENDPOINT_CONCURRENCY: '1' },
  });
  account = await app.newAccount();
  other = await app.newAccount('Other Bank');
  dispatcher = new WebhookDispatcher(app.ctx).start();
});
afterAll(async () => {
  await dispatcher.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await app.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function register(owner: TestAccount, url: string, events: Array<'application.approved' | 'document.uploaded'>) {
  const { data, response, error } = await owner.client.POST('/v1/webhooks', { body: { url, events, description: 'Test endpoint' } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

function approvedPayload(name = 'Jane Doe', amount = 350000) {
  return {
    event: 'application.approved' as const,
    mortgageId: newId('mtg'),
    status: 'approved' as const,
    applicant: { name, amount },
    timestamp: new Date().toISOString(),
  };
}

function uploadedPayload() {
  const mortgageId = newId('mtg');
  return {
    event: 'document.uploaded' as const,
    mortgageId,
    documentType: 'income_proof' as const,
    url: `${app.baseUrl}/v1/applications/${mortgageId}/documents/${newId('doc')}/content`,
  };
}

async function publishFor(accountId: string, payload: ReturnType<typeof approvedPayload> | ReturnType<typeof uploadedPayload>) {
  return app.ctx.store.transaction((tx) => publish(tx, { accountId, payload, occurredAt: app.ctx.clock.now() }));
}

/** Verifies with the standardwebhooks package (throws when no signature matches). */
function verify(secret: string, d: Delivery): unknown {
  return new Webhook(secret).verify(d.body, d.headers as Record<string, string>);
}

describe('createWebhook', () => {
  it('never stores the signing secret for an Idempotency-Key retry: the retry gets 409 naming the endpoint', async () => {
    const headers = { 'Idempotency-Key': 'register-once' };
    const body = { url: 'https://hooks.harborlending.example/once', events: ['application.approved' as const] };
    const first = await account.client.POST('/v1/webhooks', { body, headers });
    expect(first.response.status).toBe(201);
    const retry = await account.client.POST('/v1/webhooks', { body, headers });
    expect(retry.response.status).toBe(409);
    expect(retry.error).toMatchObject({ code: 'idempotency_secret_withheld' });
    expect(retry.error!.detail).toContain(first.data!.webhookId);
    const stored = await app.ctx.store.read((db) => db.all('SELECT response_body FROM idempotency_keys'));
    expect(JSON.stringify(stored)).not.toContain(first.data!.secret);
  });

  it('returns a whsec_ secret once; reads show only its hint', async () => {
    const created = await register(account, 'https://hooks.harborlending.example/created', ['application.approved']);
    expect(created.webhookId).toMatch(/^whk-[0-9a-z]{26}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created.secretHint).toBe(`whsec_…${created.secret.slice(-4)}`);
    expect(created).toMatchObject({ enabled: true, events: ['application.approved'], disabledReason: null, description: 'Test endpoint' });
    const read = await account.member.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: created.webhookId } } });
    expect(read.data).not.toHaveProperty('secret');
    expect(JSON.stringify(read.data)).not.toContain(created.secret.slice(6, 30));
  });

  it('a member key may not register endpoints (403)', async () => {
    const { response, error } = await account.member.POST('/v1/webhooks', {
      body: { url: 'https://hooks.harborlending.example/member', events: ['application.approved'] },
    });
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'forbidden' });
  });

  it('refuses an unknown event name, naming the valid ones', async () => {
    const response = await app.fetch('/v1/webhooks', {
      method: 'POST',
      headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://hooks.harborlending.example/x', events: ['application.rejected'] }),
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { code: string; errors: Array<{ pointer: string; message: string }> };
    expect(problem.code).toBe('unknown_event_type');
    expect(problem.errors).toContainEqual({
      pointer: '/events/0',
      message: `is not an event kind; valid events: ${Object.keys(specWebhooks).join(', ')}`,
    });
  });

  it.each([
    ['a private IPv4 address', 'https://10.0.0.1/hook', /10\.0\.0\.1 is not a public address \(private network\)/],
    ['a loopback address that is not allow-listed', 'https://127.0.0.2/hook', /127\.0\.0\.2 is not a public address \(loopback\)/],
    ['the IPv6 loopback', 'https://[::1]/hook', /::1 is not a public address \(loopback\)/],
    ['an IPv4-mapped private address', 'https://[::ffff:10.0.0.1]/hook', /\(10\.0\.0\.1\) is not a public address/],
    ['the metadata service address', 'https://169.254.169.254/latest', /link-local/],
    ['plain http to a host that is not allow-listed', 'http://hooks.harborlending.example/hook', /must use https/],
    ['a localhost name that is not allow-listed', 'https://app.localhost/hook', /loopback name/],
    ['credentials in the URL', 'https://user:pw@hooks.harborlending.example/hook', /user name or password/],
  ])('refuses %s (422 webhook_url_not_allowed)', async (_label, url, detail) => {
    const { response, error } = await account.client.POST('/v1/webhooks', { body: { url, events: ['application.approved'] } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'webhook_url_not_allowed' });
    expect(error!.detail).toMatch(detail);
  });

  it('accepts plain http to an allow-listed host', async () => {
    const created = await register(account, 'http://127.0.0.1:9/allowed', ['document.uploaded']);
    expect(created.url).toBe('http://127.0.0.1:9/allowed');
  });
});

describe('listWebhooks', () => {
  it('pages newest first with a cursor, readable by a member key, without secrets', async () => {
    const fresh = await app.newAccount('Paging Lender');
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await register(fresh, `https://hooks.harborlending.example/p${i}`, ['application.approved'])).webhookId);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await fresh.member.GET('/v1/webhooks', { params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } } });
      for (const hook of data!.data) expect(hook).not.toHaveProperty('secret');
      seen.push(...data!.data.map((h) => h.webhookId));
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
  });

  it("shows none of another account's endpoints", async () => {
    const mine = await register(account, 'https://hooks.harborlending.example/mine', ['application.approved']);
    const { data } = await other.client.GET('/v1/webhooks', { params: { query: { limit: 100 } } });
    expect(data!.data.map((h) => h.webhookId)).not.toContain(mine.webhookId);
  });
});

describe('getWebhook', () => {
  it("answers 404 for another account's endpoint", async () => {
    const mine = await register(account, 'https://hooks.harborlending.example/private', ['application.approved']);
    const { response, error } = await other.client.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: mine.webhookId } } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ code: 'not_found' });
  });
});

describe('updateWebhook', () => {
  it('changes the chosen events, and later events follow the new choice', async () => {
    const r = await receiver();
    const hook = await register(account, r.url(), ['application.approved']);
    const { data } = await account.client.PATCH('/v1/webhooks/{webhookId}', {
      params: { path: { webhookId: hook.webhookId } },
      body: { events: ['document.uploaded'], description: 'Documents only' },
    });
    expect(data).toMatchObject({ events: ['document.uploaded'], description: 'Documents only' });
    await publishFor(account.accountId, approvedPayload());
    // The upload, published after the approval, is the sentinel: the approval would have come first.
    const beforeUpload = await deliveriesBeforeSentinel(r, async () => (await publishFor(account.accountId, uploadedPayload())).eventId);
    expect(beforeUpload).toEqual([]);
    expect(r.deliveries.map((d) => JSON.parse(d.body).event)).toEqual(['document.uploaded']);
  });

  it('refuses a URL that points at a private address (422), and a member key (403)', async () => {
    const hook = await register(account, 'https://hooks.harborlending.example/patch', ['application.approved']);
    const bad = await account.client.PATCH('/v1/webhooks/{webhookId}', {
      params: { path: { webhookId: hook.webhookId } },
      body: { url: 'https://192.168.1.1/hook' },
    });
    expect(bad.response.status).toBe(422);
    expect(bad.error).toMatchObject({ code: 'webhook_url_not_allowed' });
    const member = await account.member.PATCH('/v1/webhooks/{webhookId}', {
      params: { path: { webhookId: hook.webhookId } },
      body: { enabled: false },
    });
    expect(member.response.status).toBe(403);
  });

  it('disabling stops deliveries; enabling again resumes them', async () => {
    const r = await receiver();
    const hook = await register(account, r.url(), ['application.approved']);
    const off = await account.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: false } });
    expect(off.data).toMatchObject({ enabled: false, disabledReason: 'manual' });
    // Published while disabled: the endpoint is not subscribed-and-enabled, so it gets no delivery.
    await publishFor(account.accountId, approvedPayload());
    const on = await account.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: true } });
    expect(on.data).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
    // The first event after enabling is the sentinel: one sent (or kept) from the disabled time would have come first.
    const earlier = await deliveriesBeforeSentinel(r, async () => (await publishFor(account.accountId, approvedPayload('After Enable'))).eventId);
    expect(earlier).toEqual([]);
    expect(JSON.parse(r.deliveries[0]!.body).applicant.name).toBe('After Enable');
  });
});

describe('deleteWebhook', () => {
  it('deletes the endpoint: then 404, and no more deliveries', async () => {
    const r = await receiver();
    const hook = await register(account, r.url(), ['application.approved']);
    const { response } = await account.client.DELETE('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
    expect(response.status).toBe(204);
    const again = await account.client.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
    expect(again.response.status).toBe(404);
    const { eventId } = await publishFor(account.accountId, approvedPayload());
    // Nothing is queued for the deleted endpoint, and a sentinel endpoint on the same receiver,
    // registered and sent to afterwards, gets its event while the deleted one got nothing.
    const queued = await app.ctx.store.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE event_id = ? AND webhook_id = ?', [eventId, hook.webhookId]));
    expect(Number(queued!.n)).toBe(0);
    const sentinel = await account.client.POST('/v1/webhooks', { body: { url: r.url('/sentinel'), events: ['application.approved'] } });
    const earlier = await deliveriesBeforeSentinel(r, async () => {
      const sent = await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: sentinel.data!.webhookId } }, body: { event: 'application.approved' } });
      return sent.data!.eventId;
    });
    expect(earlier).toEqual([]);
    expect(r.deliveries.map((d) => d.path)).toEqual(['/sentinel']);
  });

  it("answers 404 for another account's endpoint and leaves it, its subscriptions and its deliveries in place", async () => {
    const hook = await register(account, 'https://hooks.harborlending.example/keep', ['application.approved']);
    await publishFor(account.accountId, approvedPayload());
    const pendingBefore = await app.ctx.store.read((db) =>
      db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?', [hook.webhookId]),
    );
    const { response } = await other.client.DELETE('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
    expect(response.status).toBe(404);
    const still = await account.client.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } } });
    expect(still.response.status).toBe(200);
    expect(still.data!.events).toEqual(['application.approved']);
    const pendingAfter = await app.ctx.store.read((db) =>
      db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?', [hook.webhookId]),
    );
    expect(pendingAfter).toEqual(pendingBefore);
    expect(pendingBefore!.n).toBeGreaterThan(0);
  });
});

describe('sendTestWebhookEvent', () => {
  it("delivers the spec's example, signed, to that endpoint only, and logs it as a test", async () => {
    const target = await receiver();
    const bystander = await receiver();
    const hook = await register(account, target.url(), ['document.uploaded']);
    const bystanderHook = await register(account, bystander.url(), ['application.approved']);
    const { data, response } = await account.client.POST('/v1/webhooks/{webhookId}/test', {
      params: { path: { webhookId: hook.webhookId } },
      body: { event: 'application.approved' },
    });
    expect(response.status).toBe(202);
    expect(data).toMatchObject({ event: 'application.approved', webhookId: hook.webhookId, test: true });
    const [delivery] = await target.waitFor(1);
    expect(JSON.parse(delivery!.body)).toEqual(specWebhooks['application.approved']!.example);
    expect(verify(hook.secret, delivery!)).toEqual(specWebhooks['application.approved']!.example);
    expect(delivery!.headers['webhook-id']).toBe(data!.eventId);
    expect(specPayloadErrors(delivery!.body)).toBeNull();
    // A test event sent to the bystander afterwards is the sentinel: anything it got before would come first.
    const earlier = await deliveriesBeforeSentinel(bystander, async () => {
      const sent = await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: bystanderHook.webhookId } }, body: { event: 'application.approved' } });
      return sent.data!.eventId;
    });
    expect(earlier).toEqual([]);
    const log = await eventually(async () => {
      const { data: page } = await account.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: hook.webhookId } } });
      return page!.data.length > 0 && page!.data;
    });
    expect(log[0]).toMatchObject({ eventId: data!.eventId, event: 'application.approved', test: true, outcome: 'succeeded', statusCode: 200 });
  });

  it('sends the document.uploaded example too', async () => {
    const r = await receiver();
    const hook = await register(account, r.url(), ['application.approved']);
    await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: hook.webhookId } }, body: { event: 'document.uploaded' } });
    const [delivery] = await r.waitFor(1);
    expect(JSON.parse(delivery!.body)).toEqual(specWebhooks['document.uploaded']!.example);
    expect(specPayloadErrors(delivery!.body)).toBeNull();
  });

  it('refuses a disabled endpoint (409) and a member key (403)', async () => {
    const hook = await register(account, 'https://hooks.harborlending.example/off', ['application.approved']);
    await account.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook.webhookId } }, body: { enabled: false } });
    const { response, error } = await account.client.POST('/v1/webhooks/{webhookId}/test', {
      params: { path: { webhookId: hook.webhookId } },
      body: { event: 'application.approved' },
    });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ code: 'webhook_disabled' });
    const member = await account.member.POST('/v1/webhooks/{webhookId}/test', {
      params: { path: { webhookId: hook.webhookId } },
      body: { event: 'application.approved' },
    });
    expect(member.response.status).toBe(403);
  });
});

describe('rotateWebhookSecret', () => {
  it('returns a new secret; deliveries then carry two signatures, each verifying alone', async () => {
    const r = await receiver();
    const hook = await register(account, r.url(), ['application.approved']);
    const { data, response } = await account.client.POST('/v1/webhooks/{webhookId}/rotate-secret', { params: { path: { webhookId: hook.webhookId } } });
    expect(response.status).toBe(200);
    expect(data!.secret).not.toBe(hook.secret);
    expect(data!.secretHint).toBe(`whsec_…${data!.secret.slice(-4)}`);
    const expires = Date.parse(data!.previousSecretExpiresAt!);
    expect(expires - Date.parse(data!.updatedAt)).toBe(24 * 3_600_000);
    await publishFor(account.accountId, approvedPayload());
    const [delivery] = await r.waitFor(1);
    const signatures = String(delivery!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verify(data!.secret, delivery!)).toMatchObject({ event: 'application.approved' });
    expect(verify(hook.secret, delivery!)).toMatchObject({ event: 'application.approved' });
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, delivery!)).toThrow(/No matching signature/);
  });

  it("answers 404 for another account's endpoint", async () => {
    const hook = await register(account, 'https://hooks.harborlending.example/rot', ['application.approved']);
    const { response } = await other.client.POST('/v1/webhooks/{webhookId}/rotate-secret', { params: { path: { webhookId: hook.webhookId } } });
    expect(response.status).toBe(404);
  });
});

describe('listWebhookDeliveries', () => {
  it('lists each attempt newest first with status, duration and next attempt, paged by cursor', async () => {
    const r = await receiver();
    let calls = 0;
    r.answer(() => (++calls === 1 ? { status: 503 } : { status: 200 }));
    const hook = await register(account, r.url(), ['application.approved']);
    const { eventId } = await publishFor(account.accountId, approvedPayload());
    await r.waitFor(1);
    await eventually(async () => {
      const { data } = await account.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: hook.webhookId } } });
      return data!.data.length === 1;
    });
    // The first attempt failed (503) and is due again in about 5 s; a retry brings it forward.
    const pending = await account.client.POST('/v1/webhooks/{webhookId}/deliveries/{eventId}/retry', {
      params: { path: { webhookId: hook.webhookId, eventId } },
    });
    expect(pending.response.status).toBe(202);
    await r.waitFor(2);
    await eventually(async () => {
      const { data } = await account.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: hook.webhookId } } });
      return data!.data.length === 2;
    });
    const all: Array<{ attempt: number; outcome: string; statusCode: number | null; nextAttemptAt: string | null; durationMs: number }> = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 5; guard++) {
      const { data } = await account.member.GET('/v1/webhooks/{webhookId}/deliveries', {
        params: { path: { webhookId: hook.webhookId }, query: { limit: 1, ...(cursor ? { cursor } : {}) } },
      });
      all.push(...data!.data);
      cursor = data!.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(all.map((a) => [a.attempt, a.outcome, a.statusCode])).toEqual([
      [2, 'succeeded', 200],
      [1, 'failed', 503],
    ]);
    expect(all[0]!.nextAttemptAt).toBeNull();
    expect(all[1]!.nextAttemptAt).not.toBeNull();
    for (const a of all) expect(a.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("answers 404 for another account's endpoint", async () => {
    const hook = await register(account, 'https://hooks.harborlending.example/log', ['application.approved']);
    const { response } = await other.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: hook.webhookId } } });
    expect(response.status).toBe(404);
  });
});

describe('retryWebhookDelivery', () => {
  it('sends a delivered event again with the same webhook-id', async () => {
    const r = await receiver();
    const hook = await register(account, r.url(), ['application.approved']);
    const { eventId } = await publishFor(account.accountId, approvedPayload());
    await r.waitFor(1);
    await eventually(async () => {
      const { data } = await account.member.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: hook.webhookId } } });
      return data!.data.length === 1; // the attempt is recorded: no longer in flight
    });
    const { data, response } = await account.client.POST('/v1/webhooks/{webhookId}/deliveries/{eventId}/retry', {
      params: { path: { webhookId: hook.webhookId, eventId } },
    });
    expect(response.status).toBe(202);
    expect(data).toMatchObject({ webhookId: hook.webhookId, eventId, event: 'application.approved', state: 'pending', attempts: 1 });
    const [first, second] = await r.waitFor(2);
    expect(second!.headers['webhook-id']).toBe(eventId);
    expect(second!.body).toBe(first!.body);
  });

  it('answers 404 for an event the endpoint never had, and for another account', async () => {
    const hook = await register(account, 'https://hooks.harborlending.example/retry', ['application.approved']);
    const unknown = await account.client.POST('/v1/webhooks/{webhookId}/deliveries/{eventId}/retry', {
      params: { path: { webhookId: hook.webhookId, eventId: newId('evt') } },
    });
    expect(unknown.response.status).toBe(404);
    const test = await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: hook.webhookId } }, body: { event: 'application.approved' } });
    const foreign = await other.client.POST('/v1/webhooks/{webhookId}/deliveries/{eventId}/retry', {
      params: { path: { webhookId: hook.webhookId, eventId: test.data!.eventId } },
    });
    expect(foreign.response.status).toBe(404);
  });
});
