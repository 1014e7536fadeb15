/**
 * The email notifications recipe (examples/email-notifications/) against the real service in test
 * mode: the service delivers application.approved to the recipe's receiver, which verifies it,
 * reads the application through the SDK and mails the applicant through a local SMTP sink
 * (smtp-server on 127.0.0.1). A forged delivery sends nothing; a repeated one sends nothing more.
 * The recipe runs on a restricted key that only reads applications, made through the API.
 */
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotifier } from '../../examples/email-notifications/notifier.ts';
import { testValues } from '../../src/contract/testValues.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

let app: TestApp;
let lender: TestAccount;
let dispatcher: WebhookDispatcher;
let smtp: SMTPServer;
let notifier: http.Server;
let notifierUrl: string;
let secret: string;
let recipeKey: string;
const mails: Mail[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
  lender = await app.newAccount('Harbor Lending');
  dispatcher = new WebhookDispatcher(app.ctx).start();
  // The least the recipe needs: it reads applications, nothing else.
  const { data: key, response } = await lender.test.POST('/v1/api-keys', { body: { name: 'Email notifications', scopes: { applications: 'read' } } });
  expect(response.status).toBe(201);
  expect(key).toMatchObject({ role: 'restricted', scopes: { applications: 'read' } });
  recipeKey = key!.apiKey;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  // The endpoint is registered first (its secret is shown once), then the receiver starts with it.
  notifierUrl = '';
  const placeholder = await new Promise<http.Server>((resolve) => {
    const server = createNotifier({ baseUrl: app.baseUrl, apiKey: recipeKey, webhookSecret: `whsec_${Buffer.alloc(32).toString('base64')}`, smtp: { host: '127.0.0.1', port: smtpPort }, from: 'x@example.test' });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
  const port = (placeholder.address() as AddressInfo).port;
  await new Promise((resolve) => placeholder.close(resolve));
  notifierUrl = `http://127.0.0.1:${port}/hooks`;
  const { data: hook } = await lender.test.POST('/v1/webhooks', { body: { url: notifierUrl, events: ['application.approved'], description: 'Email notifications' } });
  secret = hook!.secret;
  notifier = createNotifier({ baseUrl: app.baseUrl, apiKey: recipeKey, webhookSecret: secret, smtp: { host: '127.0.0.1', port: smtpPort }, from: 'Mortgage team <mortgages@harbor.test>' });
  await new Promise<void>((resolve) => notifier.listen(port, '127.0.0.1', resolve));
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await new Promise((resolve) => (notifier ? notifier.close(resolve) : resolve(undefined)));
  await new Promise((resolve) => (smtp ? smtp.close(() => resolve(undefined)) : resolve(undefined)));
  await app?.close();
});

describe('the email notifications recipe', () => {
  it('runs on a restricted test key that may read applications and nothing more', async () => {
    expect(recipeKey.startsWith('mos_test_')).toBe(true);
    const recipe = app.clientFor(recipeKey);
    expect((await recipe.GET('/v1/applications')).response.status).toBe(200);
    const events = await recipe.GET('/v1/events');
    expect(events.response.status).toBe(403);
    expect(events.error).toMatchObject({ code: 'scope_missing', requiredScope: 'events:read' });
    const write = await recipe.POST('/v1/applications', { body: { applicant: { name: 'Nobody', amount: 1000 }, term: 30 } });
    expect(write.error).toMatchObject({ code: 'scope_missing', requiredScope: 'applications:write' });
  });

  it('mails the applicant when the application is approved, once', async () => {
    const approved = testValues().applicants.find((a) => a.outcome === 'approved')!.request as { applicant: Record<string, unknown>; term: number; propertyValue: number };
    const { accountNumber: _n, ...applicant } = approved.applicant;
    const { data: application } = await lender.test.POST('/v1/applications', { body: { ...approved, applicant } as never });
    const { data: submitted } = await lender.test.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: application!.mortgageId } } });
    expect(submitted!.status).toBe('approved');

    const [mail] = await eventually(async () => mails.length >= 1 && mails, 10_000, 25);
    expect(mail!.to).toEqual([applicant.email]);
    expect(mail!.from).toBe('mortgages@harbor.test');
    // Header lines longer than 78 characters are folded (RFC 5322 § 2.2.3): unfold before reading.
    const unfolded = mail!.raw.replace(/\r\n[ \t]+/g, ' ');
    expect(unfolded).toContain(`Subject: Your mortgage application ${application!.mortgageId} is approved`);
    expect(unfolded).toContain(`Dear ${String(applicant.name)}`);

    // The same delivery again (at least once): answered 200, not mailed twice.
    const body = JSON.stringify({ event: 'application.approved', mortgageId: application!.mortgageId, status: 'approved', applicant: { name: applicant.name, amount: applicant.amount }, timestamp: new Date().toISOString() });
    const { data: events } = await lender.test.GET('/v1/events', { params: { query: { event: 'application.approved' } } });
    const id = events!.data[0]!.eventId;
    const repeat = await post(body, id, secret);
    expect(repeat).toBe(200);
    expect(mails).toHaveLength(1);
  });

  it('refuses a delivery it cannot verify (401) and mails nothing', async () => {
    const before = mails.length;
    const body = JSON.stringify({ event: 'application.approved', mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', status: 'approved', applicant: { name: 'Mallory', amount: 1 }, timestamp: new Date().toISOString() });
    expect(await post(body, 'evt-01jdz8k3n4q2v6x9b7c5t1r0zz', `whsec_${Buffer.alloc(32, 7).toString('base64')}`)).toBe(401);
    expect(mails).toHaveLength(before);
  });
});

async function post(body: string, id: string, signingSecret: string): Promise<number> {
  const timestamp = new Date();
  const signature = new Webhook(signingSecret).sign(id, timestamp, body);
  const response = await fetch(notifierUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature },
    body,
  });
  return response.status;
}
