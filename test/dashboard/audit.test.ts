/**
 * The dashboard's Audit page (admins): the environment's audit log with the API's filters, paging,
 * and downloads of the filtered range; members are refused; another account's entries never show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
let app: TestApp;
let admin: DashboardClient;
let member: DashboardClient;
let stranger: DashboardClient;

beforeAll(async () => {
  app = await startTestApp();
  admin = (await signUpWith(app.baseUrl, { name: 'Page Lending', email: 'ana@page.test', password: PASSWORD })).client;
  stranger = (await signUpWith(app.baseUrl, { name: 'Stranger Lending', email: 'sam@stranger.test', password: PASSWORD })).client;
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'max@page.test', '/role': 'member' });
  const link = new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname;
  member = new DashboardClient(app.baseUrl);
  expect((await member.submit(link, link, { '/password': PASSWORD })).status).toBe(303);
  await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Page key', '/role': 'member' });
});
afterAll(() => app?.close());

describe('the Audit page', () => {
  it('shows an admin the environment’s entries, newest first, linked from the nav', async () => {
    const page = await admin.get('/dashboard/audit');
    expect(page.status).toBe(200);
    expect(page.body).toContain('href="/dashboard/audit" aria-current="page"');
    const actions = [...page.body.matchAll(/<td><code>([a-zA-Z.]+)<\/code><\/td>/g)].map((m) => m[1]);
    expect(actions).toEqual(['apiKey.created', 'team.invitationAccepted', 'team.invitationCreated', 'account.created']);
    expect(page.body).toContain('ana@page.test');
    expect(page.body).not.toContain('sam@stranger.test');
  });

  it('filters as the API does, and refuses a filter the API would', async () => {
    const page = await admin.get('/dashboard/audit?action=team.invitationCreated&actor=');
    const actions = [...page.body.matchAll(/<td><code>([a-zA-Z.]+)<\/code><\/td>/g)].map((m) => m[1]);
    expect(actions).toEqual(['team.invitationCreated']);
    expect(page.body).toContain('href="/dashboard/audit/export?format=csv&amp;action=team.invitationCreated"');
    expect((await admin.get('/dashboard/audit?action=%3Cscript%3E')).status).toBe(400);
    expect((await admin.get('/dashboard/audit?createdFrom=2026-12-01&createdTo=2026-11-01')).status).toBe(400);
    const empty = await admin.get('/dashboard/audit?createdTo=2000-01-01');
    expect(empty.body).toContain('No entries match these filters.');
  });

  it('downloads the filtered entries as CSV and NDJSON', async () => {
    const csv = await admin.get('/dashboard/audit/export?format=csv&action=apiKey.created');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.body.split('\r\n').filter(Boolean)).toHaveLength(2);
    const ndjson = await admin.get('/dashboard/audit/export?format=ndjson');
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    expect(ndjson.body.trimEnd().split('\n').map((line) => (JSON.parse(line) as { action: string }).action)).toContain('account.created');
  });

  it('is for admins: a member gets 403 and no nav entry', async () => {
    expect((await member.get('/dashboard/audit')).status).toBe(403);
    expect((await member.get('/dashboard/audit/export')).status).toBe(403);
    expect((await member.get('/dashboard')).body).not.toContain('/dashboard/audit');
  });

  it('shows the test environment’s log once switched to it', async () => {
    const page = await stranger.get('/dashboard/audit');
    await stranger.post('/dashboard/environment', { environment: 'test', return: '/dashboard/audit' }, { csrfFrom: page.body });
    const test = await stranger.get('/dashboard/audit');
    expect(test.body).toContain('No entries yet.');
  });
});
