/**
 * The session gets a new id and a new CSRF token at every change of privilege (OWASP Session
 * Management: renew the id): the password (sign-in, tested in security.test.ts), the code after
 * it, a step-up, and enrolment. The id before opens nothing (a request with it is signed out),
 * and a form carrying the token before is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { csrfTokenOf, DashboardClient, signUpWith } from './httpClient.ts';
import { codeAt, enrol, PASSWORD, signInWithPassword } from './secondFactor.ts';

const SESSION = 'mos_session';
const clock = manualClock(Date.parse('2026-11-02T09:00:15Z'));
const nextStep = () => clock.advance(30_000);
let app: TestApp;
let secret: string;

/** A client holding only `sessionId`: the browser of someone who planted or saw it. */
function holding(sessionId: string): DashboardClient {
  const other = new DashboardClient(app.baseUrl);
  other.cookies.set(SESSION, sessionId);
  return other;
}

/** The id before is signed out, the id after is signed in, and a form with the token before is refused (403) under the id after. */
async function expectRenewed(client: DashboardClient, before: { id: string; token: string }): Promise<void> {
  const after = client.cookies.get(SESSION)!;
  expect(after).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(after).not.toBe(before.id);
  const old = await holding(before.id).get('/dashboard');
  expect(old.status).toBe(303);
  expect(old.headers.get('location')).toBe('/dashboard/sign-in');
  const page = await client.get('/dashboard/api-keys');
  expect(page.status).toBe(200);
  expect(csrfTokenOf(page.body)).not.toBe(before.token);
  const stale = await client.post('/dashboard/environment', { environment: 'test', return: '/dashboard' }, { csrfFrom: `name="_csrf" value="${before.token}"` });
  expect(stale.status).toBe(403);
}

beforeAll(async () => {
  app = await startTestApp({ clock, env: { DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0' } });
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('session renewal', () => {
  it('enrolling renews the session: the id and the token before it open nothing', async () => {
    const { client } = await signUpWith(app.baseUrl, { name: 'Alice Lending', email: 'alice@alice.test', password: PASSWORD });
    const before = { id: client.cookies.get(SESSION)!, token: csrfTokenOf((await client.get('/dashboard')).body) };
    ({ secret } = await enrol(client, clock.now));
    await expectRenewed(client, before);
  });

  it('the code after the password renews the session: whoever holds the id from before the code is signed out', async () => {
    nextStep();
    const { client } = await signInWithPassword(app.baseUrl, 'alice@alice.test');
    const codePage = await client.get('/dashboard/sign-in/code');
    const before = { id: client.cookies.get(SESSION)!, token: csrfTokenOf(codePage.body) };
    const planted = holding(before.id);
    const signedIn = await client.post('/dashboard/sign-in/code', { '/code': codeAt(secret, clock.now()) }, { csrfFrom: codePage.body });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/dashboard');
    await expectRenewed(client, before);
    expect((await planted.get('/dashboard/api-keys')).headers.get('location')).toBe('/dashboard/sign-in');
  });

  it('a step-up renews the session; the form it held runs under the new one, and a wrong code renews nothing', async () => {
    nextStep();
    const { client } = await signInWithPassword(app.baseUrl, 'alice@alice.test');
    expect((await client.submit('/dashboard/sign-in/code', '/dashboard/sign-in/code', { '/code': codeAt(secret, clock.now()) })).status).toBe(303);
    clock.advance(10 * 60_000 + 1_000);
    const asked = await client.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Stepped up', '/role': 'member' });
    expect(asked.status).toBe(401);
    const before = { id: client.cookies.get(SESSION)!, token: csrfTokenOf(asked.body) };
    const wrong = await client.post('/dashboard/api-keys', { '/name': 'Stepped up', '/role': 'member', _code: '000000' }, { csrfFrom: asked.body });
    expect(wrong.status).toBe(401);
    expect(client.cookies.get(SESSION)).toBe(before.id);
    const ran = await client.post('/dashboard/api-keys', { '/name': 'Stepped up', '/role': 'member', _code: codeAt(secret, clock.now()) }, { csrfFrom: wrong.body });
    expect(ran.status).toBe(200);
    expect(ran.body).toContain('mos_live_');
    // The page the form answered with carries the new session's token.
    expect(csrfTokenOf(ran.body)).not.toBe(before.token);
    await expectRenewed(client, before);
  });
});
