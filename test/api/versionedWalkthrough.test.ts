/**
 * A partner pinned to the first version (2026-11-21) walks the interface document's flow, quote →
 * application → submit → approval → webhook, then the conditions are cleared: it sees only what its
 * version defines (no `clear_to_close`, no event kind it did not have), every response matching the
 * first version's frozen contract (test/helpers/contractFetch.ts checks each against the bundle its
 * Mos-Version names) and every delivery its webhook schemas. The same walk on the current version
 * sees today's contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { CURRENT_VERSION, FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { setAccountApiVersion } from '../../src/store/accounts.ts';
import { versionedPayloadErrors } from '../helpers/contractFetch.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

let app: TestApp;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } });
  dispatcher = new WebhookDispatcher(app.ctx, { random: () => 0.5 }).start();
});
afterAll(async () => {
  await dispatcher?.stop();
  for (const receiver of receivers) await receiver.close();
  await app?.close();
});

/** Every event kind: a partner of the first version asks for all of them, the service delivers only its version's. */
const EVENTS = ['application.approved', 'document.uploaded', 'application.submitted', 'application.conditions_updated', 'application.cleared_to_close'];

type Payload = Record<string, unknown> & { event: string };

/** The interface document's flow on the partner's test key, then its conditions cleared; returns what the partner saw. */
async function walk(partner: TestAccount) {
  const api = partner.test;
  const receiver = await startReceiver();
  receivers.push(receiver);
  const { data: hook } = await api.POST('/v1/webhooks', { body: { url: receiver.url(), events: EVENTS } });
  const { data: quote } = await api.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
  expect(quote!.quoteId).toMatch(/^qte-/);
  const { data: created } = await api.POST('/v1/applications', {
    body: {
      applicant: { name: 'Avery Approved', email: 'avery@example.test', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 760 },
      term: 30,
      propertyValue: 400000,
      quoteId: quote!.quoteId,
    },
  });
  const mortgageId = created!.mortgageId;
  const { data: submitted } = await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
  expect(submitted!.status).toBe('approved');
  for (const condition of submitted!.conditions) {
    await api.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/satisfy', {
      params: { path: { mortgageId, conditionId: condition.conditionId } },
      body: { note: 'Checked' },
    });
  }
  const { data: application, response } = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } });
  const { data: events } = await api.GET('/v1/events', {});
  const { data: endpoint } = await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: hook!.webhookId } } });
  return { receiver, hook: hook!, application: application!, version: response.headers.get('mos-version'), events: events!, endpoint: endpoint!, mortgageId };
}

describe('a partner pinned to the first version', () => {
  it('walks quote → application → submit → approval → webhook seeing only what 2026-11-21 defines', async () => {
    const partner = await app.newAccount('Early Lending');
    await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, partner.accountId, { apiVersion: FIRST_VERSION, previousApiVersion: null, changedAt: null }));
    app.ctx.authenticate.apiKeyRevoked();

    const seen = await walk(partner);
    expect(seen.version).toBe(FIRST_VERSION);
    expect(seen.hook.apiVersion).toBe(FIRST_VERSION);
    // Clear to close today; approved as far as its version goes.
    expect(seen.application.status).toBe('approved');
    expect(seen.endpoint.events).toEqual(['application.approved', 'document.uploaded']);
    expect(new Set(seen.events.data.map((event) => event.event))).toEqual(new Set(['application.approved']));

    // The webhook: application.approved alone, byte for byte as the interface document shapes it.
    const [delivery] = await seen.receiver.waitFor(1, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing else comes
    expect(seen.receiver.deliveries).toHaveLength(1);
    const payload = JSON.parse(delivery!.body) as Payload;
    expect(Object.keys(payload)).toEqual(['event', 'mortgageId', 'status', 'applicant', 'timestamp']);
    expect(payload).toMatchObject({ event: 'application.approved', mortgageId: seen.mortgageId, status: 'approved', applicant: { name: 'Avery Approved', amount: 300000 } });
    expect(versionedPayloadErrors(FIRST_VERSION, payload)).toBeNull();
  });
});

describe('a partner on the current version', () => {
  it("walks the same flow seeing today's contract: clear_to_close and every event kind it chose", async () => {
    const partner = await app.newAccount('Current Lending');
    const seen = await walk(partner);
    expect(seen.version).toBe(CURRENT_VERSION);
    expect(seen.hook.apiVersion).toBe(CURRENT_VERSION);
    expect(seen.application.status).toBe('clear_to_close');
    expect(seen.endpoint.events).toEqual([...EVENTS].sort());
    const deliveries = await seen.receiver.waitFor(1 + 1 + 4 + 1, 10_000);
    const kinds = deliveries.map((d) => (JSON.parse(d.body) as Payload).event);
    expect(kinds).toContain('application.cleared_to_close');
    expect(kinds).toContain('application.submitted');
    for (const d of deliveries) expect(versionedPayloadErrors(CURRENT_VERSION, JSON.parse(d.body) as Payload)).toBeNull();
  });
});
