/**
 * The dashboard's Request logs page (admins): a lender finds a failed API request by the request id
 * its problem gave and sees the problem body it was answered with; the list filters like the API
 * and links each row to its operation in the reference; switched to test data it shows only the
 * test environment's requests; a member gets 403; another account's request is not found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { insertRequestLogBatch } from '../../src/store/requestLogs.ts';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
let app: TestApp;
let admin: DashboardClient;
let api: ApiClient;
let failedRequestId: string;
let okRequestId: string;

beforeAll(async () => {
  app = await startTestApp();
  const signedUp = await signUpWith(app.baseUrl, { name: 'Logged Lending', email: 'lee@logged.test', password: PASSWORD });
  admin = signedUp.client;
  api = apiClient(app.baseUrl, signedUp.firstKey);
  const failed = await api.POST('/v1/quotes', { body: { amount: 350000, term: 360 } });
  expect(failed.response.status).toBe(400);
  failedRequestId = failed.error!.requestId;
  okRequestId = (await api.POST('/v1/quotes', { body: { amount: 350000, term: 30 } })).response.headers.get('x-request-id')!;
  await app.flushRequestLogs();
}, 60_000);
afterAll(() => app?.close());

describe('the Request logs page', () => {
  it('is in the admins\' navigation and lists requests newest first, each linked to its operation in the reference', async () => {
    const page = await admin.get('/dashboard/request-logs');
    expect(page.status).toBe(200);
    expect(page.body).toContain('href="/dashboard/request-logs" aria-current="page"');
    expect(page.body.indexOf(okRequestId)).toBeGreaterThan(-1);
    expect(page.body.indexOf(okRequestId)).toBeLessThan(page.body.indexOf(failedRequestId));
    expect(page.body).toContain('href="/docs#operation/createQuote"');
  });

  it('filters by status class, status and operation as the API does', async () => {
    const failures = await admin.get('/dashboard/request-logs?statusClass=4xx');
    expect(failures.body).toContain(failedRequestId);
    expect(failures.body).not.toContain(okRequestId);
    const created = await admin.get('/dashboard/request-logs?status=201&operationId=createQuote');
    expect(created.body).toContain(okRequestId);
    expect(created.body).not.toContain(failedRequestId);
    const none = await admin.get('/dashboard/request-logs?operationId=listWebhooks');
    expect(none.body).toContain('No requests recorded that match these filters');
  });

  it('finds a failed request by its id and shows the problem body it was answered with', async () => {
    const search = await admin.get(`/dashboard/request-logs?requestId=${failedRequestId}`);
    expect(search.status).toBe(303);
    expect(search.headers.get('location')).toBe(`/dashboard/request-logs/${failedRequestId}`);
    const detail = await admin.get(search.headers.get('location')!);
    expect(detail.status).toBe(200);
    expect(detail.body).toContain(`Request <code>${failedRequestId}</code>`);
    expect(detail.body).toContain('&quot;code&quot;: &quot;validation_failed&quot;');
    expect(detail.body).toContain('&quot;pointer&quot;: &quot;/term&quot;');
    expect(detail.body).toContain('href="/docs#operation/createQuote"');
  });

  it("answers 404 for another account's request id", async () => {
    const other = await app.newAccount('Other Lending');
    const theirs = (await other.client.GET('/v1/account', {})).response.headers.get('x-request-id')!;
    await app.flushRequestLogs();
    expect((await admin.get(`/dashboard/request-logs/${theirs}`)).status).toBe(404);
  });

  it("shows a minute's marker with how many requests were counted, not stored, and a cut path's whole length", async () => {
    const { data: account } = await api.GET('/v1/account', {});
    const arrivedAt = Date.now();
    const marker = {
      accountId: account!.accountId,
      requestId: 'req-01m8markermarkermarkermark',
      clientRequestId: 'flood-7',
      keyId: 'key-01m8aaaaaaaaaaaaaaaaaaaaaa',
      method: 'GET',
      operationId: 'getQuote',
      path: `/v1/quotes/qte-${'a'.repeat(497)}`,
      pathLength: 15_015,
      status: 429,
      latencyMs: 0.4,
      clientAddress: '127.0.0.1',
      idempotencyKey: null,
      idempotentReplayed: false,
      problem: null,
      arrivedAt,
      omitted: { count: 1400, firstAt: arrivedAt - 30_000 },
    };
    await app.ctx.store.transaction((tx) => insertRequestLogBatch(tx, { id: newId('rlg'), accountId: account!.accountId, entries: [marker], keyNames: new Map() }));
    const page = await admin.get('/dashboard/request-logs?statusClass=4xx');
    expect(page.body).toContain('1400 requests past the minute’s 600 were counted, not stored');
    expect(page.body).toContain('… (15015 characters)');
    const detail = await admin.get(`/dashboard/request-logs/${marker.requestId}`);
    expect(detail.body).toContain('<code>flood-7</code>');
    expect(detail.body).toContain('1400 requests of this minute');
    const byClientId = await admin.get('/dashboard/request-logs?clientRequestId=flood-7');
    expect(byClientId.body).toContain(marker.requestId);
    expect(byClientId.body).not.toContain(okRequestId);
  });

  it("lists only the test environment's requests once switched to test data, and finds no live request there", async () => {
    await admin.submit('/dashboard/request-logs', '/dashboard/environment', { environment: 'test', return: '/dashboard/request-logs' });
    try {
      const created = await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Test logs key', '/role': 'member' });
      const testKey = /mos_test_[0-9A-Za-z]{38}/.exec(created.body)?.[0];
      expect(testKey, created.body.slice(0, 400)).toBeDefined();
      const testRequestId = (await apiClient(app.baseUrl, testKey!).GET('/v1/account', {})).response.headers.get('x-request-id')!;
      await app.flushRequestLogs();

      const page = await admin.get('/dashboard/request-logs');
      expect(page.body).toContain('class="test-banner"');
      expect(page.body).toContain(testRequestId);
      expect(page.body).not.toContain(okRequestId);
      expect(page.body).not.toContain(failedRequestId);
      expect((await admin.get(`/dashboard/request-logs/${testRequestId}`)).status).toBe(200);
      expect((await admin.get(`/dashboard/request-logs/${okRequestId}`)).status).toBe(404);
    } finally {
      await admin.submit('/dashboard/request-logs', '/dashboard/environment', { environment: 'live', return: '/dashboard/request-logs' });
    }
    const live = await admin.get('/dashboard/request-logs');
    expect(live.body).toContain(okRequestId);
  });

  it('is for admins: a member gets 403 and no navigation entry', async () => {
    const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'mo@logged.test', '/role': 'member' });
    const link = new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname;
    const member = new DashboardClient(app.baseUrl);
    expect((await member.post(link, { '/password': 'another long passphrase' }, { csrfFrom: (await member.get(link)).body })).status).toBe(303);
    expect((await member.get('/dashboard/request-logs')).status).toBe(403);
    expect((await member.get(`/dashboard/request-logs/${failedRequestId}`)).status).toBe(403);
    expect((await member.get('/dashboard')).body).not.toContain('href="/dashboard/request-logs"');
  });
});
