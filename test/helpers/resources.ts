/**
 * How the cross-operation harnesses (auth matrix, bad input) get a real resource for each path
 * parameter of the spec. Every path parameter name used in openapi/paths must have a factory
 * here; the auth matrix fails, naming the parameter, when one is missing.
 *
 * A factory creates the resource in `owner`'s account through the API and returns its id. It
 * receives the ids already made for the parameters before it in the same path (for example
 * `mortgageId` before `documentId`).
 */
import { runAdminCommand } from '../../src/cli/commands.ts';
import type { TestAccount, TestApp } from './testApp.ts';

export type ResourceFactory = (app: TestApp, owner: TestAccount, earlier: Record<string, string>) => Promise<string>;

export const resourceFactories: Record<string, ResourceFactory> = {
  async mortgageId(_app, owner) {
    const { data } = await owner.client.POST('/v1/applications', {
      body: {
        applicant: { name: 'Matrix Applicant', amount: 350000, email: 'matrix@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
        term: 30,
        propertyValue: 450000,
      },
    });
    return data!.mortgageId;
  },
  async documentId(app, owner, earlier) {
    // A real upload through the API: a minimal PDF (its first bytes say so) to the application made just before.
    const form = new FormData();
    form.set('documentType', 'income_proof');
    form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'matrix.pdf');
    const response = await app.fetch(`/v1/applications/${earlier.mortgageId!}/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.apiKey}` },
      body: form,
    });
    return ((await response.json()) as { documentId: string }).documentId;
  },
  async conditionId(_app, owner, earlier) {
    // The application made just before, submitted: approvable, so approved with the default conditions; the first is open.
    const { data } = await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: earlier.mortgageId! } } });
    const condition = data?.conditions.find((c) => c.status === 'open');
    if (!condition) throw new Error(`the matrix application was ${data?.status} with no open condition`);
    return condition.conditionId;
  },
  async noticeId(_app, owner, earlier) {
    // The application made just before, its score lowered beyond the referral limit and submitted: declined, with its notice.
    const path = { params: { path: { mortgageId: earlier.mortgageId! } } };
    await owner.client.PATCH('/v1/applications/{mortgageId}', { ...path, body: { applicant: { creditScore: 500 } } });
    const { data: decided } = await owner.client.POST('/v1/applications/{mortgageId}/submit', path);
    if (decided?.status !== 'declined') throw new Error(`the matrix application was ${decided?.status}, not declined`);
    const { data } = await owner.client.GET('/v1/applications/{mortgageId}/notices', path);
    return data!.data[0]!.noticeId;
  },
  async keyId(_app, owner) {
    const { data } = await owner.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Matrix key' } });
    return data!.keyId;
  },
  async quoteId(_app, owner) {
    const { data } = await owner.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    return data!.quoteId;
  },
  async lockId(_app, owner) {
    // A fresh quote each time, locked for the sheet's shortest default period.
    const { data: quote } = await owner.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    const { data } = await owner.client.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30 } });
    return data!.lockId;
  },
  async webhookId(_app, owner) {
    // One endpoint per URL in an account: a fresh path each time a harness asks.
    const url = `https://hooks.harborlending.example/mortgage-events/${Math.random().toString(36).slice(2, 10)}`;
    const { data } = await owner.client.POST('/v1/webhooks', {
      body: { url, events: ['application.approved', 'document.uploaded'], description: 'Matrix endpoint' },
    });
    return data!.webhookId;
  },
  async eventId(app, owner, earlier) {
    if (earlier.webhookId) {
      // A test event queued for the endpoint made just before: a delivery the retry operation can find.
      const { data } = await owner.client.POST('/v1/webhooks/{webhookId}/test', {
        params: { path: { webhookId: earlier.webhookId } },
        body: { event: 'application.approved' },
      });
      return data!.eventId;
    }
    // An event of the account's feed (test events are not in it): an application approved at submission.
    const mortgageId = await resourceFactories.mortgageId!(app, owner, {});
    const { data: submitted } = await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
    if (submitted?.status !== 'approved') throw new Error(`the matrix application was ${submitted?.status}, not approved`);
    const { data: events } = await owner.client.GET('/v1/events', { params: { query: { event: 'application.approved', limit: 1 } } });
    return events!.data[0]!.eventId;
  },
  async requestId(app, owner) {
    // A request of the owner's, written to its request log (entries are written in batches after the answer).
    const { response } = await owner.client.GET('/v1/account', {});
    await app.flushRequestLogs();
    return response.headers.get('x-request-id')!;
  },
  async formatName(_app, owner) {
    // Names are unique per account: a fresh one each time a harness asks.
    const name = `matrix-${Math.random().toString(36).slice(2, 10)}`;
    const { data } = await owner.client.POST('/v1/export-formats', { body: { name, base: 'csv', csv: { delimiter: ';' } } });
    return data!.name;
  },
};

/**
 * How the harnesses get a valid credential of each security scheme for `owner` (bad input sends
 * valid credentials; the auth matrix sends one scheme's credential where another is required).
 * A feature that adds a scheme (the bank token) adds its factory here; the harnesses fail,
 * naming the scheme, when one is missing.
 */
export type CredentialFactory = (app: TestApp, owner: TestAccount) => Promise<string>;

export const credentialFactories: Record<string, CredentialFactory> = {
  async apiKey(_app, owner) {
    return owner.apiKey;
  },
  async bankToken(app) {
    // A sandbox partner registered by the operator, and a token it minted for an account at it.
    const partner = await runAdminCommand(app.ctx, 'bank-partner create', { name: 'Matrix Sandbox Bank', connector: 'sandbox' });
    const minted = await runAdminCommand(app.ctx, 'bank-partner sandbox-token', {
      partner: partner.partnerId as string,
      holder: 'Matrix Applicant',
      'account-number': '000123456789',
    });
    return minted.token as string;
  },
};
