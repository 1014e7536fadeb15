/**
 * The live/test switch of the dashboard, over HTTP against the real app (on each engine): every
 * page shows and changes the environment the session is in, test is clearly marked, and the two
 * never mix (the same isolation the API's test keys have).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';

let app: TestApp;
let lender: DashboardClient;
let liveKey: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ client: lender, firstKey: liveKey } = await signUpWith(app.baseUrl, { name: 'Switch Lending', email: 'ops@switch.test', password: 'correct horse battery staple' }));
}, 120_000);
afterAll(async () => {
  await app?.close();
});

const switchTo = (client: DashboardClient, environment: string, from = '/dashboard/applications') =>
  client.submit(from, '/dashboard/environment', { environment, return: from });

describe('the environment switch', () => {
  it('live at sign-in; test shows and changes only test data, clearly marked; back to live finds live as it was', async () => {
    expect(liveKey).toMatch(/^mos_live_/);
    const { data: liveApp } = await apiClient(app.baseUrl, liveKey).POST('/v1/applications', { body: { applicant: { name: 'Live Applicant', amount: 250000 }, term: 30 } });

    const live = await lender.get('/dashboard/applications');
    expect(live.body).toContain(liveApp!.mortgageId);
    expect(live.body).toContain('Live data');
    expect(live.body).not.toContain('class="test-banner"');

    const switched = await switchTo(lender, 'test');
    expect(switched.status).toBe(303);
    expect(switched.headers.get('location')).toBe('/dashboard/applications');

    const test = await lender.get('/dashboard/applications');
    expect(test.body).toContain('class="test-banner"');
    expect(test.body).toContain('Test data');
    expect(test.body).not.toContain(liveApp!.mortgageId);
    expect((await lender.get(`/dashboard/applications/${liveApp!.mortgageId}`)).status).toBe(404);

    // A key made in test is a test key, listed in test only.
    const created = await lender.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Test integration', '/role': 'member' });
    const testKey = /mos_test_[0-9A-Za-z]{38}/.exec(created.body)?.[0];
    expect(testKey, created.body.slice(0, 400)).toBeDefined();
    const { data: testApp } = await apiClient(app.baseUrl, testKey!).POST('/v1/applications', { body: { applicant: { name: 'Test Applicant', amount: 250000 }, term: 30 } });
    expect(testApp!.livemode).toBe(false);
    expect((await lender.get('/dashboard/applications')).body).toContain(testApp!.mortgageId);
    expect((await lender.get('/dashboard/api-keys')).body).toContain('Test integration');

    await switchTo(lender, 'live');
    const back = await lender.get('/dashboard/applications');
    expect(back.body).toContain(liveApp!.mortgageId);
    expect(back.body).not.toContain(testApp!.mortgageId);
    expect((await lender.get('/dashboard/api-keys')).body).not.toContain('Test integration');
  });

  it('needs the CSRF token, takes only live or test, and goes back only to a dashboard section', async () => {
    const noToken = await lender.post('/dashboard/environment', { environment: 'test', return: '/dashboard' });
    expect(noToken.status).toBe(403);
    expect((await lender.get('/dashboard')).body).toContain('Live data');

    const bad = await switchTo(lender, 'staging');
    expect(bad.status).toBe(400);

    for (const target of ['//evil.example/x', 'https://evil.example/', '/dashboardx', '/elsewhere']) {
      const answer = await switchTo(lender, 'live', '/dashboard');
      expect(answer.status).toBe(303);
      const crafted = await lender.submit('/dashboard', '/dashboard/environment', { environment: 'live', return: target });
      expect(crafted.headers.get('location'), target).toBe('/dashboard');
    }
    // A record's own page returns to its section: the record is the other mode's 404.
    const fromRecord = await lender.submit('/dashboard', '/dashboard/environment', { environment: 'live', return: '/dashboard/applications/mtg-01jdz8k3n4q2v6x9b7c5t1r0aa' });
    expect(fromRecord.headers.get('location')).toBe('/dashboard/applications');
  });

  it('the sign-up form sent again by a reload, once signed in, goes to the overview and makes nothing', async () => {
    const client = new DashboardClient(app.baseUrl);
    const form = await client.get('/dashboard/sign-up');
    const fields = { '/name': 'Reload Lending', '/email': 'ops@reload.test', '/password': 'correct horse battery staple' };
    const first = await client.post('/dashboard/sign-up', fields, { csrfFrom: form.body });
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/mos_live_[0-9A-Za-z]{38}/);
    const again = await client.post('/dashboard/sign-up', fields, { csrfFrom: form.body });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/dashboard');
    const overview = await client.get('/dashboard');
    expect(overview.body).toContain('Reload Lending');
    expect(overview.body).not.toMatch(/mos_live_[0-9A-Za-z]{38}/);
  });

  it('a signed-out visitor is sent to sign-in', async () => {
    const visitor = new DashboardClient(app.baseUrl);
    const page = await visitor.get('/dashboard/sign-in');
    const answer = await visitor.post('/dashboard/environment', { environment: 'test' }, { csrfFrom: page.body });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/dashboard/sign-in');
  });
});
