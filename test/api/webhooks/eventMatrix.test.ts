/**
 * The event matrix: one endpoint per event kind, each choosing only its kind, and one lending
 * story that causes every kind. Each endpoint receives exactly the events of its kind and no
 * other (absence proven by a sentinel: a test event sent to the same endpoint after everything,
 * one delivery at a time), each payload valid against the spec; the interface document's two
 * payloads are checked byte for byte (field order included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../../generated/api.d.ts';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { deliveriesBeforeSentinel, specPayloadErrors, startReceiver, type Receiver } from '../../helpers/webhookReceiver.ts';

// The application kinds; the rate_lock.* kinds have their own matrix (test/api/rateLocks.test.ts), the disclosure.* kinds theirs (test/api/loanEstimates.test.ts).
type EventType = Exclude<components['schemas']['WebhookEventType'], `rate_lock.${string}` | `disclosure.${string}`>;

const KINDS: EventType[] = [
  'application.approved',
  'document.uploaded',
  'application.submitted',
  'application.referred',
  'application.declined',
  'application.withdrawn',
  'application.conditions_updated',
  'application.cleared_to_close',
  'application.adverse_action_due',
  'application.adverse_action_reminder',
];

let app: TestApp;
let dispatcher: WebhookDispatcher;
const receivers = new Map<EventType, Receiver>();
const webhookIds = new Map<EventType, string>();
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } });
  dispatcher = new WebhookDispatcher(app.ctx).start();
  account = await app.newAccount('Matrix Lending');
  for (const kind of KINDS) {
    const receiver = await startReceiver();
    receivers.set(kind, receiver);
    const { data } = await account.client.POST('/v1/webhooks', { body: { url: receiver.url('/hooks'), events: [kind] } });
    webhookIds.set(kind, data!.webhookId);
  }
});
afterAll(async () => {
  await dispatcher.stop();
  for (const receiver of receivers.values()) await receiver.close();
  await app.close();
});

const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};
const REFERRABLE = { ...APPROVABLE, applicant: { ...APPROVABLE.applicant, name: 'Riley Referred', creditScore: 600 } };

describe('each event kind goes only to the endpoints that chose it', () => {
  it('one story causes every kind; every endpoint gets exactly its own, valid against the spec', async () => {
    // Approval conditions: only proof of income, due before closing.
    await account.client.PUT('/v1/underwriting', {
      body: {
        debtToIncome: { approveAtMost: 43, referAtMost: 50 },
        loanToValue: { approveAtMost: 97, referAtMost: 100 },
        creditScore: { approveAtLeast: 620, referAtLeast: 580 },
        loanAmount: { approveAtMost: 832750, referAtMost: 1249125 },
        conditions: [{ type: 'income_proof', description: 'Pay stubs', dueBefore: 'closing' }],
      },
    });
    // Approved at submission (submitted, approved, conditions_updated), then cleared by an upload
    // (document.uploaded, conditions_updated, cleared_to_close).
    const approved = (await account.client.POST('/v1/applications', { body: APPROVABLE })).data!;
    const decided = (await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: approved.mortgageId } } })).data!;
    const form = new FormData();
    form.set('documentType', 'income_proof');
    form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'stubs.pdf');
    const uploaded = await app.fetch(`/v1/applications/${approved.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${account.apiKey}` }, body: form });
    const documentId = ((await uploaded.json()) as { documentId: string }).documentId;
    // Referred at submission (submitted, referred), declined by a reviewer (declined).
    const referred = (await account.client.POST('/v1/applications', { body: REFERRABLE })).data!;
    await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: referred.mortgageId } } });
    const declined = (await account.client.POST('/v1/applications/{mortgageId}/decline', { params: { path: { mortgageId: referred.mortgageId } }, body: { note: 'Score too low' } })).data!;
    // A draft withdrawn (withdrawn).
    const withdrawnDraft = (await account.client.POST('/v1/applications', { body: APPROVABLE })).data!;
    const withdrawn = (await account.client.POST('/v1/applications/{mortgageId}/withdraw', { params: { path: { mortgageId: withdrawnDraft.mortgageId } } })).data!;

    const expected: Record<EventType, number> = {
      'application.approved': 1,
      'document.uploaded': 1,
      'application.submitted': 2,
      'application.referred': 1,
      'application.declined': 1,
      'application.withdrawn': 1,
      'application.conditions_updated': 2,
      'application.cleared_to_close': 1,
      // The reviewer's decline makes its notice; its reminder waits 25 days (test/api/notices.test.ts moves the test clock).
      'application.adverse_action_due': 1,
      'application.adverse_action_reminder': 0,
    };
    const received = new Map<EventType, Array<Record<string, unknown>>>();
    for (const kind of KINDS) {
      const receiver = receivers.get(kind)!;
      const deliveries = await deliveriesBeforeSentinel(receiver, async () => {
        const sent = await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: webhookIds.get(kind)! } }, body: { event: kind } });
        return sent.data!.eventId;
      });
      for (const d of deliveries) expect(specPayloadErrors(d.body), d.body).toBeNull();
      const payloads = deliveries.map((d) => JSON.parse(d.body) as Record<string, unknown>);
      expect(payloads.map((p) => p.event), kind).toEqual(Array(expected[kind]).fill(kind));
      received.set(kind, payloads);
    }

    // The interface document's two payloads, byte for byte (field order included).
    const approvedBody = receivers.get('application.approved')!.deliveries[0]!.body;
    expect(approvedBody).toBe(
      JSON.stringify({ event: 'application.approved', mortgageId: approved.mortgageId, status: 'approved', applicant: { name: 'Jane Doe', amount: 350000 }, timestamp: decided.decision!.decidedAt }),
    );
    expect(receivers.get('document.uploaded')!.deliveries[0]!.body).toBe(
      JSON.stringify({
        event: 'document.uploaded',
        mortgageId: approved.mortgageId,
        documentType: 'income_proof',
        url: `${app.baseUrl}/v1/applications/${approved.mortgageId}/documents/${documentId}/content`,
      }),
    );
    // The new kinds' payloads.
    expect(received.get('application.submitted')!.map((p) => [p.mortgageId, p.status])).toEqual([
      [approved.mortgageId, 'submitted'],
      [referred.mortgageId, 'submitted'],
    ]);
    expect(received.get('application.referred')![0]).toMatchObject({ mortgageId: referred.mortgageId, status: 'referred', applicant: { name: 'Riley Referred', amount: 350000 } });
    expect(received.get('application.declined')![0]).toEqual({
      event: 'application.declined',
      mortgageId: referred.mortgageId,
      status: 'declined',
      decidedBy: 'reviewer',
      applicant: { name: 'Riley Referred', amount: 350000 },
      timestamp: declined.decision!.decidedAt,
    });
    expect(received.get('application.withdrawn')![0]).toEqual({
      event: 'application.withdrawn',
      mortgageId: withdrawnDraft.mortgageId,
      status: 'withdrawn',
      applicant: { name: 'Jane Doe', amount: 350000 },
      timestamp: withdrawn.withdrawnAt,
    });
    const [attached, satisfied] = received.get('application.conditions_updated')! as Array<{ status: string; conditions: Array<{ status: string; satisfiedBy: unknown }> }>;
    expect(attached!.conditions.map((c) => c.status)).toEqual(['open']);
    expect(satisfied!.status).toBe('approved');
    expect(satisfied!.conditions[0]).toMatchObject({ status: 'satisfied', satisfiedBy: { kind: 'document', documentId } });
    expect(received.get('application.cleared_to_close')![0]).toMatchObject({ mortgageId: approved.mortgageId, status: 'clear_to_close' });
  }, 60_000);

  it('a declined submission says the rules declined it', async () => {
    const receiver = receivers.get('application.declined')!;
    const before = receiver.deliveries.length;
    const { data } = await account.client.POST('/v1/applications', { body: { ...APPROVABLE, applicant: { ...APPROVABLE.applicant, creditScore: 500 } } });
    await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
    const [delivery] = await receiver.waitFor(before + 1).then((all) => all.slice(before));
    expect(JSON.parse(delivery!.body)).toMatchObject({ event: 'application.declined', mortgageId: data!.mortgageId, decidedBy: 'underwriting_rules' });
  });
});
