/**
 * The dashboard's integration and team pages doing their work, over HTTP against the real app (on
 * each engine), each change checked through the API: a webhook endpoint registered, edited,
 * disabled and enabled, its secret rotated (each secret shown once), a test event sent and
 * verified, a failed delivery retried from the log; an API key revoked after its confirmation; an
 * application's documents downloaded and its bank verification shown by mask only; a member's
 * read-only view and 403 on every integration form; roles changed, a user removed (signed out
 * everywhere), an invitation withdrawn, and one that expires after seven days.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { deliveriesAt, manualClock, startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';
import { eventually } from '../helpers/server.ts';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith, type PageResponse } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
// Real time at the start: receivers check a delivery's timestamp against their own clock.
const clock = manualClock(Date.now());
let app: TestApp;
let dispatcher: WebhookDispatcher;
let receiver: Receiver;
let admin: DashboardClient;
let api: ApiClient;
let max: DashboardClient;

/** The text of the element with this id on a page (a secret shown once, a link). */
function shown(page: PageResponse, id: string): string {
  const m = new RegExp(`id="${id}">([^<]+)<`).exec(page.body);
  if (!m) throw new Error(`no #${id} on the page: ${page.body.slice(0, 300)}`);
  return m[1]!;
}


/** Reloads the endpoint's page until its delivery log holds `count` attempts (they are recorded after the answer). */
function logWith(webhookId: string, count: number): Promise<string> {
  return eventually(async () => {
    const page = await admin.get(`/dashboard/webhooks/${webhookId}`);
    return (page.body.match(/<td class="outcome-/g) ?? []).length >= count && page.body;
  }, 5_000, 25);
}

beforeAll(async () => {
  app = await startTestApp({ clock, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  dispatcher = new WebhookDispatcher(app.ctx).start();
  receiver = await startReceiver();
  const signedUp = await signUpWith(app.baseUrl, { name: 'Works Lending', email: 'ana@works.test', password: PASSWORD });
  admin = signedUp.client;
  api = apiClient(app.baseUrl, signedUp.firstKey);
  // A member, invited and joined through the dashboard.
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'max@works.test', '/role': 'member' });
  const link = new URL(shown(invited, 'invitation-link')).pathname;
  max = new DashboardClient(app.baseUrl);
  expect((await max.post(link, { '/password': 'another long passphrase' }, { csrfFrom: (await max.get(link)).body })).status).toBe(303);
}, 120_000);

afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await app?.close();
});

describe('a webhook endpoint', () => {
  let webhookId: string;
  let secret: string;

  it('is registered with events from the catalog; its secret is shown once', async () => {
    const form = await admin.get('/dashboard/webhooks/new');
    expect(form.body).toContain('value="application.approved"');
    expect(form.body).toContain('value="document.uploaded"');
    const created = await admin.post('/dashboard/webhooks', { '/url': receiver.url('/first'), '/description': 'Servicing', '/events': 'application.approved' }, { csrfFrom: form.body });
    expect(created.status).toBe(200);
    secret = shown(created, 'webhook-secret');
    expect(secret).toMatch(/^whsec_/);
    webhookId = /\/dashboard\/webhooks\/(whk-[0-9a-z]+)/.exec(created.body)![1]!;
    const { data } = await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } });
    expect(data).toMatchObject({ url: receiver.url('/first'), description: 'Servicing', events: ['application.approved'], enabled: true });
    expect((await admin.get(`/dashboard/webhooks/${webhookId}`)).body).not.toContain(secret);
  });

  it('is edited, disabled (a test event is then refused) and enabled again', async () => {
    const page = await admin.get(`/dashboard/webhooks/${webhookId}`);
    const saved = await admin.post(`/dashboard/webhooks/${webhookId}`, { '/url': receiver.url('/hooks'), '/description': 'Loan servicing', '/events': ['application.approved', 'document.uploaded'] }, { csrfFrom: page.body });
    expect(saved.status).toBe(303);
    expect((await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })).data).toMatchObject({
      url: receiver.url('/hooks'),
      description: 'Loan servicing',
      events: ['application.approved', 'document.uploaded'],
    });

    expect((await admin.post(`/dashboard/webhooks/${webhookId}/enabled`, { '/enabled': 'false' }, { csrfFrom: page.body })).status).toBe(303);
    expect((await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })).data!.enabled).toBe(false);
    const refused = await admin.post(`/dashboard/webhooks/${webhookId}/test`, { '/event': 'application.approved' }, { csrfFrom: page.body });
    expect(refused.status).toBe(409);
    expect((await admin.post(`/dashboard/webhooks/${webhookId}/enabled`, { '/enabled': 'true' }, { csrfFrom: page.body })).status).toBe(303);
    expect((await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })).data!.enabled).toBe(true);
  });

  it('gets a test event signed with its secret, shown in the delivery log', async () => {
    const page = await admin.get(`/dashboard/webhooks/${webhookId}`);
    expect((await admin.post(`/dashboard/webhooks/${webhookId}/test`, { '/event': 'document.uploaded' }, { csrfFrom: page.body })).status).toBe(303);
    const [delivery] = await deliveriesAt(receiver, '/hooks', 1);
    expect((new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as { event: string }).event).toBe('document.uploaded');
    const log = await logWith(webhookId, 1);
    expect(log).toMatch(/<code>document\.uploaded<\/code> <mark>test<\/mark>/);
    expect(log).toMatch(/class="outcome-succeeded">200/);
  });

  it('has its secret rotated: the new one is shown once and signs the next delivery', async () => {
    const page = await admin.get(`/dashboard/webhooks/${webhookId}`);
    const rotated = await admin.post(`/dashboard/webhooks/${webhookId}/rotate-secret`, {}, { csrfFrom: page.body });
    expect(rotated.status).toBe(200);
    const next = shown(rotated, 'webhook-secret');
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect((await admin.get(`/dashboard/webhooks/${webhookId}`)).body).not.toContain(next);
    await admin.post(`/dashboard/webhooks/${webhookId}/test`, { '/event': 'application.approved' }, { csrfFrom: page.body });
    const deliveries = await deliveriesAt(receiver, '/hooks', 2);
    const latest = deliveries[1]!;
    expect((new Webhook(next).verify(latest.body, latest.headers as Record<string, string>) as { event: string }).event).toBe('application.approved');
    secret = next;
  });

  it('retries a failed delivery from the log', async () => {
    receiver.answer(() => ({ status: 500 }));
    const page = await admin.get(`/dashboard/webhooks/${webhookId}`);
    await admin.post(`/dashboard/webhooks/${webhookId}/test`, { '/event': 'application.approved' }, { csrfFrom: page.body });
    await deliveriesAt(receiver, '/hooks', 3);
    const failedLog = await logWith(webhookId, 3);
    expect(failedLog).toMatch(/class="outcome-failed">500/);
    const eventId = /<small>(evt-[0-9a-z]+)<\/small><\/td>\s*<td>1<\/td>\s*<td class="outcome-failed">/.exec(failedLog)![1]!;
    receiver.answer(() => ({ status: 200 }));
    expect((await admin.post(`/dashboard/webhooks/${webhookId}/deliveries/${eventId}/retry`, {}, { csrfFrom: failedLog })).status).toBe(303);
    const [, , , again] = await deliveriesAt(receiver, '/hooks', 4);
    expect(again!.headers['webhook-id']).toBe(eventId);
    const log = await logWith(webhookId, 4);
    expect(log).toMatch(new RegExp(`<small>${eventId}</small></td>\\s*<td>2</td>\\s*<td class="outcome-succeeded">200`));
  });

  it('is read-only for a member: the page without its forms, 403 on every form', async () => {
    const page = await max.get(`/dashboard/webhooks/${webhookId}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Delivery log');
    for (const action of ['/enabled', '/rotate-secret', '/test', '" novalidate']) expect(page.body).not.toContain(`action="/dashboard/webhooks/${webhookId}${action}`);
    expect(page.body).not.toContain('/retry"');
    const eventId = /<small>(evt-[0-9a-z]+)<\/small>/.exec(page.body)![1]!;
    const before = (await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })).data!;
    for (const [action, fields] of [
      ['/dashboard/webhooks', { '/url': receiver.url('/member'), '/events': 'application.approved' }],
      [`/dashboard/webhooks/${webhookId}`, { '/url': receiver.url('/member'), '/events': 'application.approved' }],
      [`/dashboard/webhooks/${webhookId}/enabled`, { '/enabled': 'false' }],
      [`/dashboard/webhooks/${webhookId}/rotate-secret`, {}],
      [`/dashboard/webhooks/${webhookId}/test`, { '/event': 'application.approved' }],
      [`/dashboard/webhooks/${webhookId}/deliveries/${eventId}/retry`, {}],
    ] as const) {
      expect((await max.post(action, fields, { csrfFrom: page.body })).status, action).toBe(403);
    }
    expect((await max.get('/dashboard/webhooks/new')).status).toBe(403);
    expect((await api.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } })).data).toEqual(before);
  });
});

describe('an API key', () => {
  it('is revoked after its confirmation page: calls with it get 401; a member can do neither', async () => {
    const created = await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Reporting job', '/role': 'member' });
    const key = shown(created, 'api-key-secret');
    expect((await apiClient(app.baseUrl, key).GET('/v1/account')).response.status).toBe(200);
    const keyId = (await api.GET('/v1/api-keys')).data!.data.find((k) => k.name === 'Reporting job')!.keyId;

    expect((await max.get(`/dashboard/api-keys/${keyId}/revoke`)).status).toBe(403);
    const list = await max.get('/dashboard/api-keys');
    expect(list.body).toContain('Reporting job');
    expect(list.body).not.toContain('/revoke"');
    expect((await max.post(`/dashboard/api-keys/${keyId}/revoke`, {}, { csrfFrom: list.body })).status).toBe(403);
    expect((await apiClient(app.baseUrl, key).GET('/v1/account')).response.status).toBe(200);

    const confirm = await admin.get(`/dashboard/api-keys/${keyId}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('Revoke Reporting job?');
    const revoked = await admin.post(`/dashboard/api-keys/${keyId}/revoke`, {}, { csrfFrom: confirm.body });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe('/dashboard/api-keys?done=revoked');
    expect((await apiClient(app.baseUrl, key).GET('/v1/account')).response.status).toBe(401);
    expect((await admin.get('/dashboard/api-keys')).body).toMatch(/Reporting job<\/td>[\s\S]*?revoked /);
  });
});

describe('a restricted API key', () => {
  it('is created with none/read/write per resource family, shown with its scopes in the list, and may do only that', async () => {
    const families = ['quotes', 'applications', 'documents', 'bankVerifications', 'webhooks', 'events', 'exports', 'pricing', 'underwriting', 'apiKeys', 'audit', 'rateLocks', 'requestLogs', 'testMode'];
    const page = await admin.get('/dashboard/api-keys');
    for (const family of families) expect(page.body, family).toContain(`name="/scopes/${family}"`);
    // As a browser sends the form: a level for every family, most of them none.
    const fields: Record<string, string> = { '/name': 'CRM sync', '/role': 'restricted' };
    for (const family of families) fields[`/scopes/${family}`] = family === 'applications' || family === 'events' ? 'read' : 'none';
    const created = await admin.post('/dashboard/api-keys', fields, { csrfFrom: page.body });
    expect(created.status).toBe(200);
    expect(created.body).toContain('restricted: applications:read, events:read');
    const key = shown(created, 'api-key-secret');

    const listed = (await api.GET('/v1/api-keys')).data!.data.find((k) => k.name === 'CRM sync')!;
    expect(listed).toMatchObject({ role: 'restricted', scopes: { applications: 'read', events: 'read' } });
    expect((await admin.get('/dashboard/api-keys')).body).toMatch(/CRM sync<\/td>\s*<td>restricted<\/td>\s*<td>applications:read, events:read<\/td>/);
    expect((await max.get('/dashboard/api-keys')).body).toContain('applications:read, events:read');

    const crm = apiClient(app.baseUrl, key);
    expect((await crm.GET('/v1/applications')).response.status).toBe(200);
    expect((await crm.GET('/v1/events')).response.status).toBe(200);
    const quote = await crm.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    expect(quote.response.status).toBe(403);
    expect(quote.error).toMatchObject({ code: 'scope_missing', requiredScope: 'quotes:write' });
  });

  it('an admin or member key made with the form ignores the scope choices (a key has a role or scopes)', async () => {
    const page = await admin.get('/dashboard/api-keys');
    const created = await admin.post('/dashboard/api-keys', { '/name': 'Plain member', '/role': 'member', '/scopes/quotes': 'write' }, { csrfFrom: page.body });
    expect(created.status).toBe(200);
    expect((await api.GET('/v1/api-keys')).data!.data.find((k) => k.name === 'Plain member')).toMatchObject({ role: 'member', scopes: null });
  });
});

describe('an application', () => {
  it('shows its documents for download, byte for byte, and its bank verification by mask only', async () => {
    // In test mode, where a bank token is self-served.
    await admin.submit('/dashboard', '/dashboard/environment', { environment: 'test', return: '/dashboard/applications' });
    const testKey = shown(await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Test integration', '/role': 'admin' }), 'api-key-secret');
    const test = apiClient(app.baseUrl, testKey);
    const { data: application } = await test.POST('/v1/applications', { body: { applicant: { name: 'Avery Approved', amount: 300000 }, term: 30 } });
    const mortgageId = application!.mortgageId;
    const pdf = Buffer.from('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n', 'latin1');
    const form = new FormData();
    form.set('documentType', 'income_proof');
    form.set('file', new File([pdf], 'payslip.pdf', { type: 'application/pdf' }));
    const uploaded = await fetch(`${app.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${testKey}` }, body: form });
    expect(uploaded.status).toBe(201);
    const { data: token } = await test.POST('/v1/test/bank-tokens', { body: { holderName: 'Avery Approved', accountNumber: '000123456789' } });
    const { data: verification } = await apiClient(app.baseUrl, token!.bankToken).POST('/v1/banks/verify', { body: { mortgageId, applicant: { accountNumber: '000123456789' } } });
    expect(verification!.verified).toBe(true);

    const page = await admin.get(`/dashboard/applications/${mortgageId}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<code>••••6789</code>');
    expect(page.body).not.toContain('000123456789');
    const href = new RegExp(`href="(/dashboard/applications/${mortgageId}/documents/doc-[0-9a-z]+)" download>payslip\\.pdf</a>`).exec(page.body)![1]!;
    const download = await admin.get(href);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="doc-[0-9a-z]+\.pdf"$/);
    const bytes = Buffer.from(await (await fetch(app.baseUrl + href, { headers: { Cookie: admin.cookieHeader() } })).arrayBuffer());
    expect(bytes.equals(pdf)).toBe(true);

    // The member sees it too (read-only), and the live environment does not.
    await max.submit('/dashboard', '/dashboard/environment', { environment: 'test', return: '/dashboard' });
    expect((await max.get(href)).status).toBe(200);
    await admin.submit('/dashboard', '/dashboard/environment', { environment: 'live', return: '/dashboard' });
    expect((await admin.get(href)).status).toBe(404);
  });
});

/** The fields a form of the page sends as they stand (text values, ticked checkboxes, hidden fields), as a browser would. */
function formFields(html: string, action: string): Array<[string, string]> {
  const form = new RegExp(`<form method="post" action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(html)![1]!;
  const fields: Array<[string, string]> = [];
  for (const [input] of form.matchAll(/<input [^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(input)?.[1];
    if (!name || name === '_csrf' || (/type="checkbox"/.test(input) && !/ checked/.test(input))) continue;
    fields.push([name, (/value="([^"]*)"/.exec(input)?.[1] ?? '').replaceAll('&amp;', '&')]);
  }
  return fields;
}

function post(client: DashboardClient, action: string, fields: Array<[string, string]>, page: string): Promise<PageResponse> {
  const grouped: Record<string, string[]> = {};
  for (const [name, value] of fields) (grouped[name] ??= []).push(value);
  return client.post(action, grouped, { csrfFrom: page });
}

describe('settings and quotes', () => {
  it('the rate sheet and the underwriting rules saved from their forms are what the API answers; quotes follow the sheet', async () => {
    const page = await admin.get('/dashboard/settings');
    const sheet = formFields(page.body, '/dashboard/settings/pricing').map(([name, value]): [string, string] => [name, name === '/originationFeePercent' ? '1.5' : value]);
    expect((await post(admin, '/dashboard/settings/pricing', sheet, page.body)).status).toBe(303);
    const { data: pricing } = await api.GET('/v1/pricing');
    expect(pricing!.isDefault).toBe(false);
    expect(pricing!.rateSheet.originationFeePercent).toBe(1.5);
    const { data: priced } = await api.POST('/v1/quotes', { body: { amount: 200000, term: 30 } });
    expect(priced!.fees.find((fee) => fee.name === 'origination')!.amount).toBe(3000);

    const rules = formFields(page.body, '/dashboard/settings/underwriting').map(([name, value]): [string, string] => [name, name === '/debtToIncome/approveAtMost' ? '40' : value]);
    expect((await post(admin, '/dashboard/settings/underwriting', rules, page.body)).status).toBe(303);
    expect((await api.GET('/v1/underwriting')).data!.debtToIncome.approveAtMost).toBe(40);

    // A value the API refuses: its message beside the field, nothing saved.
    const refused = await post(admin, '/dashboard/settings/underwriting', rules.map(([n, v]): [string, string] => [n, n === '/debtToIncome/referAtMost' ? '30' : v]), page.body);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/id="f-debtToIncome-(approveAtMost|referAtMost)-error" class="field-error">[^<]+</);
    expect((await api.GET('/v1/underwriting')).data!.debtToIncome.referAtMost).not.toBe(30);
  });

  it('a member posting a valid rate sheet or valid underwriting rules gets 403 for the role, and nothing changes', async () => {
    await max.submit('/dashboard', '/dashboard/environment', { environment: 'live', return: '/dashboard' });
    const page = await admin.get('/dashboard/settings');
    const sheet = formFields(page.body, '/dashboard/settings/pricing').map(([name, value]): [string, string] => [name, name === '/originationFeePercent' ? '2.25' : value]);
    const rules = formFields(page.body, '/dashboard/settings/underwriting').map(([name, value]): [string, string] => [name, name === '/debtToIncome/approveAtMost' ? '41' : value]);
    const settings = async () => ({ pricing: (await api.GET('/v1/pricing')).data, rules: (await api.GET('/v1/underwriting')).data });
    const before = await settings();
    const memberPage = await max.get('/dashboard');
    for (const [action, fields] of [['/dashboard/settings/pricing', sheet], ['/dashboard/settings/underwriting', rules]] as const) {
      const refused = await post(max, action, fields, memberPage.body);
      expect(refused.status, action).toBe(403);
      expect(refused.body, action).toContain('your role is member');
    }
    expect(await settings()).toEqual(before);
    // The very same forms from an admin are saved: what the member sent was valid, the refusal was the role's.
    expect((await post(admin, '/dashboard/settings/pricing', sheet, page.body)).status).toBe(303);
    expect((await post(admin, '/dashboard/settings/underwriting', rules, page.body)).status).toBe(303);
    const after = await settings();
    expect(after.pricing!.rateSheet.originationFeePercent).toBe(2.25);
    expect(after.rules!.debtToIncome.approveAtMost).toBe(41);
  });

  it('the calculator shows what POST /v1/quotes prices, and the API\'s message beside a field it refuses', async () => {
    const query = { amount: 350000, term: 30, propertyValue: 450000, creditScore: 720 };
    const page = await admin.get(`/dashboard/quotes?amount=${query.amount}&term=${query.term}&propertyValue=${query.propertyValue}&creditScore=${query.creditScore}`);
    expect(page.status).toBe(200);
    const { data: quote } = await api.POST('/v1/quotes', { body: query });
    const money = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    expect(page.body).toContain(`Monthly payment ${money(quote!.monthlyPayment)} ${quote!.currency}`);
    expect(page.body).toContain(`<dt>APR</dt><dd>${quote!.apr} %</dd>`);
    expect(page.body).toContain(`<dt>Total of payments</dt><dd>${money(quote!.totalOfPayments)} ${quote!.currency}</dd>`);
    for (const fee of quote!.fees) expect(page.body).toContain(`<code>${fee.name}</code></td><td class="number">${money(fee.amount)}</td>`);
    expect(page.body).toContain(`Amortization schedule (${quote!.numberOfPayments} payments)`);

    const refused = await admin.get('/dashboard/quotes?amount=350000&term=360');
    expect(refused.status).toBe(400);
    const { error } = await api.POST('/v1/quotes', { body: { amount: 350000, term: 360 } });
    const apiIssue = (error as { errors: Array<{ pointer: string; message: string }> }).errors[0]!;
    expect(apiIssue.pointer).toBe('/term');
    const escaped = apiIssue.message.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
    expect(refused.body).toContain(`id="f-term-error" class="field-error">${escaped}</small>`);
  });
});

describe('the team', () => {
  const userIdOf = (team: PageResponse, email: string) => new RegExp(`${email.replace('.', '\\.')}[^]*?/dashboard/team/users/(usr-[0-9a-z]+)/role`).exec(team.body)![1]!;

  it('an admin changes a role: the member becomes an admin (settings open to them), then a member again', async () => {
    const team = await admin.get('/dashboard/team');
    const maxId = userIdOf(team, 'max@works.test');
    expect((await max.get('/dashboard/settings')).status).toBe(403);
    expect((await max.post(`/dashboard/team/users/${maxId}/role`, { '/role': 'admin' }, { csrfFrom: (await max.get('/dashboard/team')).body })).status).toBe(403);
    expect((await admin.post(`/dashboard/team/users/${maxId}/role`, { '/role': 'admin' }, { csrfFrom: team.body })).status).toBe(303);
    expect((await max.get('/dashboard')).body).toContain('max@works.test · admin');
    expect((await max.get('/dashboard/settings')).status).toBe(200);
    expect((await admin.post(`/dashboard/team/users/${maxId}/role`, { '/role': 'member' }, { csrfFrom: team.body })).status).toBe(303);
    expect((await max.get('/dashboard/settings')).status).toBe(403);
  });

  it('an admin removes a user after a confirmation page: their session ends at once', async () => {
    const team = await admin.get('/dashboard/team');
    const maxId = userIdOf(team, 'max@works.test');
    expect((await max.get(`/dashboard/team/users/${maxId}/remove`)).status).toBe(403);
    const confirm = await admin.get(`/dashboard/team/users/${maxId}/remove`);
    expect(confirm.status).toBe(200);
    expect((await admin.post(`/dashboard/team/users/${maxId}/remove`, {}, { csrfFrom: confirm.body })).status).toBe(303);
    const after = await max.get('/dashboard');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/dashboard/sign-in');
    expect((await admin.get('/dashboard/team')).body).not.toContain('max@works.test');
  });

  it('a withdrawn invitation, and one older than seven days, no longer opens', async () => {
    const withdrawn = new URL(shown(await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'eve@works.test', '/role': 'member' }), 'invitation-link')).pathname;
    const team = await admin.get('/dashboard/team');
    const invitationId = /\/dashboard\/team\/invitations\/(inv-[0-9a-z]+)\/withdraw/.exec(team.body)![1]!;
    expect((await admin.post(`/dashboard/team/invitations/${invitationId}/withdraw`, {}, { csrfFrom: team.body })).status).toBe(303);
    const closed = await new DashboardClient(app.baseUrl).get(withdrawn);
    expect(closed.status).toBe(422);
    expect(closed.body).toContain('was withdrawn');

    const expiring = new URL(shown(await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'zoe@works.test', '/role': 'member' }), 'invitation-link')).pathname;
    clock.advance(7 * 24 * 3600_000 - 60_000);
    expect((await new DashboardClient(app.baseUrl).get(expiring)).status).toBe(200);
    clock.advance(60_000);
    const expired = await new DashboardClient(app.baseUrl).get(expiring);
    expect(expired.status).toBe(422);
    expect(expired.body).toContain('has expired (invitations are valid for 7 days)');
  });
});
