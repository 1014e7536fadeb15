/**
 * At-least-once across a crash: the real service as a child process is killed with SIGKILL after
 * an event committed and while its delivery is in flight (the receiver has not answered), then
 * restarted; the delivery left leased by the dead process is sent again and arrives, signed.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { apiClient } from '../../helpers/testApp.ts';
import { createAccountWithCli, eventually, startService, tempDataDir, type ServiceProcess } from '../../helpers/server.ts';
import { specPayloadErrors, specWebhooks, startReceiver, type Receiver } from '../../helpers/webhookReceiver.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

describe('webhook delivery across a crash', () => {
  it('an event committed before SIGKILL is delivered after the restart', async () => {
    const dir = await tempDataDir('mos-webhooks-');
    cleanups.push(() => dir.remove());
    const { apiKey } = await createAccountWithCli(dir.dataDir);
    const receiver: Receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    let answering = false;
    // Until the crash, the receiver takes each delivery and never answers: it stays in flight.
    receiver.answer(() => (answering ? { status: 200 } : { status: 200, delayMs: 60_000 }));

    const env = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_POLL_INTERVAL_MS: '100' };
    let service: ServiceProcess = await startService({ dataDir: dir.dataDir, env });
    cleanups.push(() => service.stop('SIGKILL'));
    let client = apiClient(service.baseUrl, apiKey);
    const created = await client.POST('/v1/webhooks', { body: { url: receiver.url(), events: ['application.approved'] } });
    expect(created.response.status).toBe(201);
    const { webhookId, secret } = created.data!;
    const sent = await client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId } }, body: { event: 'application.approved' } });
    expect(sent.response.status).toBe(202); // committed
    const eventId = sent.data!.eventId;
    await receiver.waitFor(1); // the first attempt is in flight, unanswered

    const killed = await service.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    answering = true;

    service = await startService({ dataDir: dir.dataDir, env });
    client = apiClient(service.baseUrl, apiKey);
    const deliveries = await receiver.waitFor(2, 40_000);
    const again = deliveries[1]!;
    expect(again.headers['webhook-id']).toBe(eventId);
    expect(new Webhook(secret).verify(again.body, again.headers as Record<string, string>)).toEqual(specWebhooks['application.approved']!.example);
    expect(specPayloadErrors(again.body)).toBeNull();
    const log = await eventually(async () => {
      const { data } = await client.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId } } });
      return data!.data.find((a) => a.outcome === 'succeeded') && data!.data;
    }, 10_000);
    expect(log[0]).toMatchObject({ eventId, attempt: 1, outcome: 'succeeded', statusCode: 200, test: true });
    await service.stop('SIGTERM');
  }, 120_000);
});
