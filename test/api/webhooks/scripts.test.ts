/**
 * The partner kit: `webhooks:listen` (a verifying receiver), `webhooks:send` (a signed sample
 * sender) and `webhooks:forward` (the events feed delivered to a local receiver), run as the child
 * processes a partner runs, on 127.0.0.1 only; and the real service's deliveries verified by the
 * listener.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import { newWebhookSecret } from '../../../src/events/signing.ts';
import { forwardTool, listen, send, stopChildren, uploadDocument, withdraw } from '../../helpers/webhookScripts.ts';
import { startTestApp } from '../../helpers/testApp.ts';
import { specWebhooks, startReceiver } from '../../helpers/webhookReceiver.ts';

afterAll(stopChildren);

describe('webhooks:send and webhooks:listen', () => {
  it("send delivers the spec's sample, signed; listen verifies it with standardwebhooks and checks it against the spec", async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret]);
    const sent = await send(['--url', `http://127.0.0.1:${listener.port}/hooks`, '--secret', secret, '--event', 'document.uploaded']);
    expect(sent.code).toBe(0);
    expect(sent.output).toMatchObject({ event: 'document.uploaded', status: 200 });
    const [, received] = await listener.waitForLines(2);
    expect(received).toMatchObject({ id: sent.output!.id, verified: true, matchesSpec: true, answered: 200, signatures: 1 });
    expect(received!.payload).toEqual(specWebhooks['document.uploaded']!.example);
  }, 60_000);

  it('send renders in --version: the first version sends application.approved as it is and has no rate lock event to send', async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret]);
    const url = `http://127.0.0.1:${listener.port}/hooks`;
    const sent = await send(['--url', url, '--secret', secret, '--event', 'application.approved', '--version', '2026-11-21']);
    expect(sent.output).toMatchObject({ event: 'application.approved', status: 200 });
    const [, received] = await listener.waitForLines(2);
    expect(received!.payload).toEqual(specWebhooks['application.approved']!.example);
    const refused = await send(['--url', url, '--secret', secret, '--event', 'rate_lock.created', '--version', '2026-11-21']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/2026-11-21 has no rate_lock.created event/);
  }, 60_000);

  it('send and listen know the rate lock events: each kind is sent as its spec sample and matches the spec', async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret]);
    const kinds = ['rate_lock.created', 'rate_lock.extended', 'rate_lock.expiring', 'rate_lock.expired', 'rate_lock.cancelled'];
    for (const kind of kinds) {
      const sent = await send(['--url', `http://127.0.0.1:${listener.port}/hooks`, '--secret', secret, '--event', kind]);
      expect(sent.output, kind).toMatchObject({ event: kind, status: 200 });
    }
    const lines = await listener.waitForLines(1 + kinds.length);
    expect(lines.slice(1).map((l) => [l.payload.event, l.verified, l.matchesSpec])).toEqual(kinds.map((kind) => [kind, true, true]));
  }, 60_000);

  it.each(['application.submitted', 'application.referred', 'application.declined', 'application.withdrawn', 'application.conditions_updated', 'application.cleared_to_close'])(
    'send delivers the sample of %s, which listen verifies and finds as the spec says',
    async (event) => {
      const secret = newWebhookSecret();
      const listener = await listen(['--secret', secret]);
      const sent = await send(['--url', `http://127.0.0.1:${listener.port}/hooks`, '--secret', secret, '--event', event]);
      expect(sent.output).toMatchObject({ event, status: 200 });
      const [, received] = await listener.waitForLines(2);
      expect(received).toMatchObject({ verified: true, matchesSpec: true, answered: 200 });
      expect(received!.payload).toEqual(specWebhooks[event]!.example);
    },
    60_000,
  );

  it('listen rejects a delivery signed with another secret (401), and can fail on purpose to exercise retries', async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret, '--fail-first', '1', '--status', '503', '--retry-after', '7']);
    const url = `http://127.0.0.1:${listener.port}/hooks`;
    const forged = await send(['--url', url, '--secret', newWebhookSecret()]);
    expect(forged.code).toBe(1);
    expect(forged.output).toMatchObject({ status: 401 });
    const id = 'evt-01jdz8q5s7u9w1y3a5c7e9g1j3';
    const first = await send(['--url', url, '--secret', secret, '--id', id]);
    const second = await send(['--url', url, '--secret', secret, '--id', id]);
    expect([first.code, first.output?.status, second.code, second.output?.status]).toEqual([1, 503, 0, 200]);
    const lines = await listener.waitForLines(4);
    expect(lines[1]).toMatchObject({ rejected: true, reason: 'No matching signature found' });
    expect(lines.slice(2).map((l) => [l.attempt, l.answered])).toEqual([
      [1, 503],
      [2, 200],
    ]);
  }, 60_000);

  it('send refuses an event name the spec does not have', async () => {
    const result = await send(['--url', 'http://127.0.0.1:9/hooks', '--secret', newWebhookSecret(), '--event', 'application.rejected']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--event must be one of application.approved, document.uploaded');
  }, 30_000);

  it("listen verifies the service's own deliveries", async () => {
    const app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    const dispatcher = new WebhookDispatcher(app.ctx).start();
    try {
      const account = await app.newAccount();
      // The listener needs the endpoint's secret, and the endpoint the listener's port: register,
      // start the listener with the secret, then point the endpoint at it.
      const created = await account.client.POST('/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hooks', events: ['application.approved'] } });
      const { webhookId, secret } = created.data!;
      const real = await listen(['--secret', secret]);
      await account.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId } }, body: { url: `http://127.0.0.1:${real.port}/hooks` } });
      await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId } }, body: { event: 'application.approved' } });
      const [, received] = await real.waitForLines(2);
      expect(received).toMatchObject({ verified: true, matchesSpec: true, answered: 200 });
      expect(received!.payload).toEqual(specWebhooks['application.approved']!.example);
    } finally {
      await dispatcher.stop();
      await app.close();
    }
  }, 60_000);
});

describe('webhooks:forward', () => {
  it("follows the feed from now and delivers each new event to a local receiver, signed (standardwebhooks verifies it) with the event's id and exact payload; one line per event with the receiver's status", async () => {
    // No WEBHOOK_ALLOWED_HOSTS: the service never connects to the receiver, the tool does.
    const app = await startTestApp();
    const receiver = await startReceiver();
    try {
      const account = await app.newAccount();
      await withdraw(account); // before the start: not forwarded
      const forward = forwardTool(['--api-key', account.memberKey, '--to', receiver.url('/hooks'), '--base-url', app.baseUrl]);
      const [ready] = await forward.waitForLines(1);
      expect(ready).toMatchObject({ msg: 'forwarding', to: receiver.url('/hooks') });
      const secret = ready!.secret as string;
      expect(secret).toMatch(/^whsec_/);
      expect(forward.stderr()).toContain(secret);

      const mortgageId = await withdraw(account);
      await uploadDocument(app, account);
      const lines = (await forward.waitForLines(3)).slice(1);
      const { data: feed } = await account.client.GET('/v1/events', { params: { query: { limit: 2 } } });
      const newest = [...feed!.data].reverse(); // oldest first, as forwarded
      expect(lines).toEqual(newest.map((e) => ({ id: e.eventId, event: e.event, createdAt: e.createdAt, status: 200, ms: expect.any(Number) })));
      expect(newest[0]!.payload).toMatchObject({ event: 'application.withdrawn', mortgageId });

      await receiver.waitFor(2);
      const verifier = new Webhook(secret);
      receiver.deliveries.forEach((d, i) => {
        expect(d.path).toBe('/hooks');
        expect(verifier.verify(d.body, d.headers as Record<string, string>)).toEqual(newest[i]!.payload);
        expect(d.headers['webhook-id']).toBe(newest[i]!.eventId);
        expect(d.body).toBe(JSON.stringify(newest[i]!.payload));
      });

      // A failing receiver: the line says so.
      receiver.answer(() => ({ status: 503 }));
      await withdraw(account);
      const [, , , failed] = await forward.waitForLines(4);
      expect(failed).toMatchObject({ event: 'application.withdrawn', status: 503 });
      expect(receiver.deliveries).toHaveLength(3);

      forward.child.kill('SIGTERM');
      expect(await forward.exited()).toBe(0);
    } finally {
      await receiver.close();
      await app.close();
    }
  }, 60_000);

  it('signs with the --secret it is given and does not print it; a receiver that is down is reported, not fatal', async () => {
    const app = await startTestApp();
    const receiver = await startReceiver();
    try {
      const account = await app.newAccount();
      const secret = newWebhookSecret();
      const forward = forwardTool(['--api-key', account.apiKey, '--to', receiver.url(), '--base-url', app.baseUrl, '--secret', secret]);
      const [ready] = await forward.waitForLines(1);
      expect(ready!.secret).toBeUndefined();
      await receiver.down();
      await withdraw(account);
      const [, refused] = await forward.waitForLines(2);
      expect(refused).toMatchObject({ event: 'application.withdrawn', error: 'ECONNREFUSED' });
      await receiver.up();
      await uploadDocument(app, account);
      const [, , delivered] = await forward.waitForLines(3);
      expect(delivered).toMatchObject({ event: 'document.uploaded', status: 200 });
      const [d] = await receiver.waitFor(1);
      expect(new Webhook(secret).verify(d!.body, d!.headers as Record<string, string>)).toMatchObject({ event: 'document.uploaded' });
    } finally {
      await receiver.close();
      await app.close();
    }
  }, 60_000);

  it('stops with exit code 2 when the API key is refused, or an option is missing', async () => {
    const app = await startTestApp();
    try {
      const refused = forwardTool(['--api-key', 'mos_live_not_a_key', '--to', 'http://127.0.0.1:9/hooks', '--base-url', app.baseUrl]);
      expect(await refused.exited()).toBe(2);
      expect(refused.stderr()).toContain('401');
      const missing = forwardTool(['--api-key', 'x']);
      expect(await missing.exited()).toBe(2);
      expect(missing.stderr()).toContain('--to is required');
      const badSecret = forwardTool(['--api-key', 'x', '--to', 'http://127.0.0.1:9/hooks', '--secret', 'not-a-secret']);
      expect(await badSecret.exited()).toBe(2);
      expect(badSecret.stderr()).toContain('--secret is not a valid whsec_ secret');
    } finally {
      await app.close();
    }
  }, 60_000);
});
