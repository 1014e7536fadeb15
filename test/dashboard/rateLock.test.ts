/**
 * The application page of the dashboard (the underwriter's desk) shows the application's active
 * rate lock: its rate, payment and expiry; nothing once it is cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { signUpWith, type DashboardClient } from './httpClient.ts';

let app: TestApp;
let admin: DashboardClient;
let api: ApiClient;

beforeAll(async () => {
  app = await startTestApp();
  const signedUp = await signUpWith(app.baseUrl, { name: 'Desk Lending', email: 'desk@desk.test', password: 'correct horse battery staple' });
  admin = signedUp.client;
  api = apiClient(app.baseUrl, signedUp.firstKey);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe('the application page', () => {
  it('shows the active rate lock, and no lock once it is cancelled', async () => {
    const { data: application } = await api.POST('/v1/applications', { body: { applicant: { name: 'Jane Doe', amount: 350000 }, term: 30 } });
    const mortgageId = application!.mortgageId;
    expect((await admin.get(`/dashboard/applications/${mortgageId}`)).body).toContain('No active rate lock.');

    const { data: quote } = await api.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    const { data: lock } = await api.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 45, mortgageId } });
    const page = await admin.get(`/dashboard/applications/${mortgageId}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<code>${lock!.lockId}</code>`);
    expect(page.body).toContain(`${lock!.interestRate} %`);
    expect(page.body).toContain('45 days');
    expect(page.body).toContain(`${lock!.expiresAt.slice(0, 10)} ${lock!.expiresAt.slice(11, 19)} UTC`);

    await api.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: lock!.lockId } } });
    const after = await admin.get(`/dashboard/applications/${mortgageId}`);
    expect(after.body).toContain('No active rate lock.');
    expect(after.body).not.toContain(lock!.lockId);
  });
});
