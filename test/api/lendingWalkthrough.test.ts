/**
 * The partner's walk-through (docs/partners/lending-walkthrough.md), step by step as the page
 * writes it, with a test key and a local webhook receiver: quote, application, lock, approval
 * with conditions, clear to close, then the test clock moved until the lock warns and expires.
 * Each step is followed through the webhooks it causes only (verified like a partner would,
 * checked against the spec's payload schemas), and the whole sequence of events is asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { startReceiver, verifiedDeliveries, type Receiver } from '../helpers/webhookReceiver.ts';

let app: TestApp;
let dispatcher: WebhookDispatcher;
let receiver: Receiver;
let lender: TestAccount;

beforeAll(async () => {
  // One delivery in flight per endpoint: the receiver gets each step's events in the order they happened.
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } });
  dispatcher = new WebhookDispatcher(app.ctx, { random: () => 0.5 }).start();
  receiver = await startReceiver();
  lender = await app.newAccount('Walkthrough Lending');
});

afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await app?.close();
});

/** The walk-through's events, as step 1 subscribes to them. */
const EVENTS = [
  'application.submitted',
  'application.approved',
  'application.conditions_updated',
  'application.cleared_to_close',
  'rate_lock.created',
  'rate_lock.expiring',
  'rate_lock.expired',
];

type Payload = Record<string, unknown> & { event: string };

describe('the lending walk-through, in test mode, followed through webhooks', () => {
  it('quote → application → lock → approval with conditions → clear to close → the lock warns and expires on the test clock', async () => {
    const api = lender.test;
    expect(lender.testKey.startsWith('mos_test_')).toBe(true);

    // 1. An endpoint for the walk-through's events; its secret verifies every delivery.
    const { data: hook } = await api.POST('/v1/webhooks', { body: { url: receiver.url(), events: EVENTS, description: 'Lending walk-through' } });
    const next = verifiedDeliveries(receiver, hook!.secret);

    // 2. A quote, and an application on it.
    const { data: quote } = await api.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
    const { data: created } = await api.POST('/v1/applications', {
      body: {
        applicant: { name: 'Avery Approved', email: 'avery@example.test', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 760 },
        term: 30,
        propertyValue: 400000,
        quoteId: quote!.quoteId,
      },
    });
    const mortgageId = created!.mortgageId;

    // 3. Lock the quote's rate for the application, 30 days.
    const { data: lock, response: locked } = await api.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30, mortgageId } });
    expect(locked.status).toBe(201);
    const [lockCreated] = await next(1);
    expect(lockCreated).toMatchObject({ event: 'rate_lock.created', lockId: lock!.lockId, mortgageId, status: 'active', expiresAt: lock!.expiresAt });

    // 4. Submit: the rules approve, with their conditions.
    await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
    const decided = await next(3);
    expect(decided.map((p) => p.event)).toEqual(['application.submitted', 'application.approved', 'application.conditions_updated']);
    expect(decided[1]).toEqual({ event: 'application.approved', mortgageId, status: 'approved', applicant: { name: 'Avery Approved', amount: 300000 }, timestamp: decided[1]!.timestamp });
    const conditions = decided[2]!.conditions as Array<{ conditionId: string; type: string; status: string }>;
    expect(conditions.map((c) => [c.type, c.status])).toEqual([
      ['income_proof', 'open'],
      ['bank_account_verified', 'open'],
      ['property_appraisal', 'open'],
    ]);

    // 5. Clear each condition (here by hand, with a note); the last one makes the application clear to close.
    for (const [index, condition] of conditions.entries()) {
      const { response } = await api.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/satisfy', {
        params: { path: { mortgageId, conditionId: condition.conditionId } },
        body: { note: `Checked ${condition.type.replaceAll('_', ' ')}` },
      });
      expect(response.status).toBe(200);
      const last = index === conditions.length - 1;
      const events = await next(last ? 2 : 1);
      expect(events.map((p) => p.event)).toEqual(last ? ['application.conditions_updated', 'application.cleared_to_close'] : ['application.conditions_updated']);
      const now = events[0]!.conditions as Array<{ status: string }>;
      expect(now.filter((c) => c.status === 'satisfied')).toHaveLength(index + 1);
    }

    // 6. The test clock: 28 days on, the lock is within its warning lead (72 hours) …
    const { data: later } = await api.POST('/v1/test/clock/advance', { body: { by: 'P28D' } });
    expect(later!.offsetSeconds).toBeGreaterThanOrEqual(28 * 86_400);
    const [expiring] = await next(1);
    expect(expiring).toMatchObject({ event: 'rate_lock.expiring', lockId: lock!.lockId, mortgageId, status: 'active' });

    // … and 3 more days on, it has expired.
    await api.POST('/v1/test/clock/advance', { body: { by: 'P3D' } });
    const [expired] = await next(1);
    expect(expired).toMatchObject({ event: 'rate_lock.expired', lockId: lock!.lockId, mortgageId, status: 'expired' });

    // The whole walk, as the receiver saw it.
    expect(receiver.deliveries.map((d) => JSON.parse(d.body) as Payload).map((p) => [p.event, p.status])).toEqual([
      ['rate_lock.created', 'active'],
      ['application.submitted', 'submitted'],
      ['application.approved', 'approved'],
      ['application.conditions_updated', 'approved'],
      ['application.conditions_updated', 'approved'],
      ['application.conditions_updated', 'approved'],
      ['application.conditions_updated', 'approved'],
      ['application.cleared_to_close', 'clear_to_close'],
      ['rate_lock.expiring', 'active'],
      ['rate_lock.expired', 'expired'],
    ]);
    // The application says the same: clear to close, its lock gone.
    const { data: application } = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } });
    expect(application).toMatchObject({ status: 'clear_to_close', rateLock: null });
  });
});
