/**
 * What each dashboard route needs, walked over every route the router holds (not a list of named
 * pages, so a new page or form cannot slip by): every form says whether it asks for a fresh code,
 * and the ones that must, do; a form or page has one spelling (another is a 404 that changes
 * nothing); a user who must enrol reaches only the Security page, and a session still owing its
 * code only the code page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardRoutes } from '../../src/dashboard/index.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { csrfTokenOf, DashboardClient, signUpWith } from './httpClient.ts';
import { enrol, invite, PASSWORD, signInWithPassword } from './secondFactor.ts';

/**
 * Every form of the dashboard, by route name, and whether it asks for a fresh code. The forms that
 * grant access, show or redirect a secret, or weaken security ask; a form that takes a code in its
 * own fields needs none more. A new form fails the walk until it is added here, decided.
 */
const FORMS: Record<string, 'fresh-code' | 'own-code' | 'none'> = {
  'api-keys.create': 'fresh-code', // shows a key's secret
  'api-keys.revoke': 'fresh-code',
  'webhooks.create': 'fresh-code', // shows the signing secret
  'webhooks.update': 'fresh-code', // can move the events to another URL
  'webhooks.rotate-secret': 'fresh-code',
  'team.invite': 'fresh-code', // grants access, as admin or member
  'team.role': 'fresh-code',
  'team.mfa-reset': 'fresh-code',
  'team.mfa-requirement': 'fresh-code',
  'team.remove': 'fresh-code',
  'sign-in.code.send': 'own-code',
  'security.enrol.confirm': 'own-code',
  'security.recovery-codes': 'own-code',
  'security.disable': 'own-code',
  'sign-up.send': 'none',
  'sign-in.send': 'none',
  'sign-out': 'none',
  'invitation.accept': 'none',
  'security.enrol': 'none',
  environment: 'none',
  'webhooks.enabled': 'none',
  'webhooks.test': 'none',
  'webhooks.retry': 'none',
  'team.invitation.withdraw': 'none',
  'application.approve': 'none',
  'application.decline': 'none',
  'application.conditions.add': 'none',
  'application.conditions.satisfy': 'none',
  'application.conditions.waive': 'none',
  'settings.pricing': 'none',
  'settings.underwriting': 'none',
  'settings.lender': 'none',
  'settings.api-version.upgrade': 'none',
  'settings.api-version.rollback': 'none',
};

const clock = manualClock(Date.parse('2026-11-02T09:00:15Z'));
let app: TestApp;
let routes: ReturnType<typeof dashboardRoutes>;

/** A route's path with a made-up value for each parameter (the checks under test run before any page looks). */
const pathOf = (route: { path: string }) => route.path.replace(/:([A-Za-z]+)/g, 'x1');
/** Other spellings of a route's path that an unstrict router took for it: a trailing slash, another case (of its words, not its ids). */
const otherSpellings = (route: { path: string }) => {
  const segments = route.path.split('/').slice(2); // after '', 'dashboard'
  const spelt = (change: (word: string, i: number) => string) =>
    pathOf({ path: ['/dashboard', ...segments.map((word, i) => (word.startsWith(':') ? word : change(word, i)))].join('/') });
  const capitalised = spelt((word, i) => (i === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : word));
  return [`${pathOf(route)}/`, capitalised, spelt((word) => word.toUpperCase()), `${capitalised}/`];
};
const forms = () => routes.filter((route) => route.methods.includes('POST'));
const pages = () => routes.filter((route) => route.methods.includes('GET'));
/** The session's CSRF token, from a page that has one for the session (a restricted session's own page). */
const tokenOf = async (client: DashboardClient, page: string) => csrfTokenOf((await client.get(page)).body);

beforeAll(async () => {
  app = await startTestApp({
    clock,
    env: {
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE: '1000',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE: '1000',
      DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE: '1000',
      DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0',
    },
  });
  routes = dashboardRoutes(app.ctx);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('step-up', () => {
  it('every form of the router is listed, and says whether it asks for a fresh code and why', () => {
    expect(forms().map((route) => route.name).sort()).toEqual(Object.keys(FORMS).sort());
    for (const route of forms()) {
      expect(route.access.stepUp?.ask, route.name).toBe(FORMS[route.name]);
      expect(route.access.stepUp?.why.length, route.name).toBeGreaterThan(10);
    }
  });

  it('with a last code older than ten minutes, every form that must asks for a fresh code; no other form does', async () => {
    const { client } = await signUpWith(app.baseUrl, { name: 'Alice Lending', email: 'alice@alice.test', password: PASSWORD });
    await enrol(client, clock.now);
    clock.advance(10 * 60_000 + 1_000);
    const token = await tokenOf(client, '/dashboard');
    // Sign-out last: it ends the session the others are sent in.
    for (const route of forms().sort((a, b) => Number(a.name === 'sign-out') - Number(b.name === 'sign-out'))) {
      const answer = await client.post(pathOf(route), {}, { csrfFrom: `name="_csrf" value="${token}"` });
      if (FORMS[route.name] === 'fresh-code') {
        expect(answer.status, route.name).toBe(401);
        expect(answer.body, route.name).toContain('Confirm it is you');
        expect(answer.body, route.name).toContain(`action="${pathOf(route)}"`);
      } else {
        expect(answer.body, route.name).not.toContain('Confirm it is you');
      }
    }
  });

  it('a form sent with a trailing slash or in another case is a 404 that changes nothing, whatever the session', async () => {
    const { client } = await signUpWith(app.baseUrl, { name: 'Bea Banking', email: 'bea@bea.test', password: PASSWORD });
    await enrol(client, clock.now);
    clock.advance(10 * 60_000 + 1_000);
    const keys = async () => ((await client.get('/dashboard/api-keys')).body.match(/\/revoke"/g) ?? []).length;
    const before = await keys();
    const token = await tokenOf(client, '/dashboard');
    for (const route of forms()) {
      for (const spelling of otherSpellings(route)) {
        const answer = await client.post(spelling, { '/name': 'Another spelling', '/role': 'admin', '/email': 'mallory@evil.test', '/required': 'false' }, { csrfFrom: `name="_csrf" value="${token}"` });
        expect(answer.status, `${route.name} at ${spelling}`).toBe(404);
      }
    }
    expect(await keys()).toBe(before);
    expect((await client.get('/dashboard/team')).body).not.toContain('mallory@evil.test');
    expect((await client.get('/dashboard')).status).toBe(200); // still signed in
  });

  it('a page with a trailing slash is redirected to its one path (query kept); in another case it is a 404', async () => {
    const { client } = await signUpWith(app.baseUrl, { name: 'Cleo Credit', email: 'cleo@cleo.test', password: PASSWORD });
    for (const [path, to] of [
      ['/dashboard/', '/dashboard'],
      ['/dashboard/api-keys/', '/dashboard/api-keys'],
      ['/dashboard/audit//?action=x', '/dashboard/audit?action=x'],
    ] as const) {
      const answer = await client.get(path);
      expect(answer.status, path).toBe(301);
      expect(answer.headers.get('location'), path).toBe(to);
    }
    expect((await client.get('/dashboard/nowhere/')).status).toBe(404);
    for (const path of ['/dashboard/API-Keys', '/dashboard/Team', '/dashboard/api-keys/x1/REVOKE']) expect((await client.get(path)).status, path).toBe(404);
    expect((await client.get('/dashboard/api-keys')).status).toBe(200);
  });
});

describe('restricted sessions', () => {
  it('a user who must enrol is sent to the Security page by every page and form but the Security page, its enrolment forms and sign-out', async () => {
    const { client: admin } = await signUpWith(app.baseUrl, { name: 'Dora Loans', email: 'dora@dora.test', password: PASSWORD });
    await enrol(admin, clock.now);
    const eve = await invite(app.baseUrl, admin, 'eve@dora.test', 'admin');
    expect((await admin.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'true' })).headers.get('location')).toBe('/dashboard/team?done=mfa-required');

    const token = await tokenOf(eve, '/dashboard/security');
    const reached: string[] = [];
    for (const route of pages()) {
      const answer = await eve.get(pathOf(route));
      if (answer.headers.get('location') !== '/dashboard/security') reached.push(route.name);
    }
    for (const route of forms().filter((form) => !form.access.beforeSignIn && form.name !== 'sign-out')) {
      const answer = await eve.post(pathOf(route), {}, { csrfFrom: `name="_csrf" value="${token}"` });
      if (answer.headers.get('location') !== '/dashboard/security') reached.push(route.name);
    }
    // The sign-in page sends a signed-in user to the overview, which sends them on to Security.
    expect(reached.sort()).toEqual(['security', 'security.enrol', 'security.enrol.confirm', 'sign-in']);
    expect((await eve.get('/dashboard/sign-in')).headers.get('location')).toBe('/dashboard');
  });

  it('a session still owing the code after the password is sent to the code page by every page and form but that one', async () => {
    const { client: owner } = await signUpWith(app.baseUrl, { name: 'Finn Funding', email: 'finn@finn.test', password: PASSWORD });
    await enrol(owner, clock.now);
    const { client, answer } = await signInWithPassword(app.baseUrl, 'finn@finn.test');
    expect(answer.headers.get('location')).toBe('/dashboard/sign-in/code');
    const token = await tokenOf(client, '/dashboard/sign-in/code');
    const reached: string[] = [];
    for (const route of pages()) {
      if ((await client.get(pathOf(route))).headers.get('location') !== '/dashboard/sign-in/code') reached.push(route.name);
    }
    for (const route of forms().filter((form) => !form.access.beforeSignIn && form.name !== 'sign-out')) {
      const sent = await client.post(pathOf(route), {}, { csrfFrom: `name="_csrf" value="${token}"` });
      if (sent.headers.get('location') !== '/dashboard/sign-in/code') reached.push(route.name);
    }
    expect(reached.sort()).toEqual(['sign-in', 'sign-in.code', 'sign-in.code.send']);
  });
});
