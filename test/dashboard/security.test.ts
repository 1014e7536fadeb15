/**
 * The dashboard's security, over HTTP against the real app (on each engine): CSRF tokens and the
 * Origin check on every POST, session cookies and their flags, session fixation, sign-out, idle and
 * absolute expiry, another account's ids, password length, and sign-in rate limiting (per email and
 * per address, the same answer after the same work for an unknown email and a wrong password).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sweepSessions } from '../../src/services/sessions.ts';
import { startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { DashboardClient, csrfTokenOf, signUpWith } from './httpClient.ts';

/** Every scrypt the app runs in this process (password hashes and checks), counted. */
const scryptRuns = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  const scrypt = ((...args: Parameters<typeof actual.scrypt>) => {
    scryptRuns.count += 1;
    return (actual.scrypt as (...a: unknown[]) => void)(...args);
  }) as typeof actual.scrypt;
  return { ...actual, scrypt, default: { ...actual, scrypt } };
});

const PASSWORD = 'correct horse battery staple';
const clock = manualClock(Date.parse('2026-11-02T09:00:30Z'));
let app: TestApp;
let alice: DashboardClient;
let bobKey: string;
let bob: DashboardClient;

beforeAll(async () => {
  app = await startTestApp({
    clock,
    env: {
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE: '2',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE: '3',
      DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE: '3',
      DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '3',
    },
  });
  ({ client: alice } = await signUpWith(app.baseUrl, { name: 'Alice Lending', email: 'alice@alice.test', password: PASSWORD }));
  ({ client: bob, firstKey: bobKey } = await signUpWith(app.baseUrl, { name: 'Bob Brokers', email: 'bob@bob.test', password: PASSWORD }));
}, 120_000);
afterAll(async () => {
  await app?.close();
});

/** The next minute: every sign-in window of the limits has ended. */
function nextMinute(): void {
  clock.advance(61_000);
}

async function keyCount(client: DashboardClient): Promise<number> {
  return ((await client.get('/dashboard/api-keys')).body.match(/\/revoke"/g) ?? []).length;
}

describe('headers', () => {
  it('every page has a strict CSP (no inline script or style), X-Frame-Options DENY, a Referrer-Policy, nosniff and no-store', async () => {
    for (const page of [await new DashboardClient(app.baseUrl).get('/dashboard/sign-in'), await alice.get('/dashboard'), await alice.get('/dashboard/nope')]) {
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('referrer-policy')).toBe('same-origin');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.body).not.toMatch(/<script>|<script (?!src=)|\sstyle=|\son[a-z]+=/i);
    }
  });
});

describe('forms password managers understand', () => {
  /** The autocomplete value of the input a label names, from the page's HTML. */
  function autocompleteOf(html: string, label: string): string | undefined {
    const id = new RegExp(`<label for="([^"]+)"[^>]*>${label}</label>`).exec(html)?.[1];
    return id ? new RegExp(`<input [^>]*id="${id}"[^>]*autocomplete="([^"]+)"`).exec(html)?.[1] : undefined;
  }

  it('sign-up, sign-in and an invitation label every field and say organization, email, new-password or current-password', async () => {
    const visitor = new DashboardClient(app.baseUrl);
    const signUp = (await visitor.get('/dashboard/sign-up')).body;
    expect([autocompleteOf(signUp, 'Organisation name'), autocompleteOf(signUp, 'Work email'), autocompleteOf(signUp, 'Password')]).toEqual(['organization', 'email', 'new-password']);
    const signIn = (await visitor.get('/dashboard/sign-in')).body;
    expect([autocompleteOf(signIn, 'Email'), autocompleteOf(signIn, 'Password')]).toEqual(['email', 'current-password']);
    const invited = await alice.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'form@alice.test', '/role': 'member' });
    const invitation = (await visitor.get(new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname)).body;
    // The invitation's email is the account name a password manager stores the new password under.
    expect([autocompleteOf(invitation, 'Email'), autocompleteOf(invitation, 'Password')]).toEqual(['username', 'new-password']);
  });
});

describe('CSRF', () => {
  it('a POST without a CSRF token gets 403 and changes nothing', async () => {
    const before = await keyCount(alice);
    const response = await alice.post('/dashboard/api-keys', { '/name': 'No token', '/role': 'admin' });
    expect(response.status).toBe(403);
    expect(response.body).toContain('CSRF token');
    expect(await keyCount(alice)).toBe(before);
  });

  it("a POST with a wrong CSRF token (random, or another session's) gets 403 and changes nothing", async () => {
    const before = await keyCount(alice);
    const bobsToken = csrfTokenOf((await bob.get('/dashboard')).body);
    for (const token of ['x'.repeat(43), bobsToken, '']) {
      expect((await alice.post('/dashboard/api-keys', { '/name': 'Wrong token', '/role': 'admin', _csrf: token })).status).toBe(403);
    }
    expect(await keyCount(alice)).toBe(before);
  });

  it('a cross-origin POST gets 403 even with the right token; a POST with neither Origin nor Referer too', async () => {
    const page = await alice.get('/dashboard/api-keys');
    const before = await keyCount(alice);
    expect((await alice.post('/dashboard/api-keys', { '/name': 'Cross origin', '/role': 'admin' }, { csrfFrom: page.body, origin: 'http://evil.test' })).status).toBe(403);
    expect((await alice.post('/dashboard/api-keys', { '/name': 'Null origin', '/role': 'admin' }, { csrfFrom: page.body, origin: 'null' })).status).toBe(403);
    expect((await alice.post('/dashboard/api-keys', { '/name': 'No origin', '/role': 'admin' }, { csrfFrom: page.body, origin: null })).status).toBe(403);
    expect(await keyCount(alice)).toBe(before);
    // The same form from this origin is taken: the refusals above were the origin's.
    const created = await alice.post('/dashboard/api-keys', { '/name': 'Same origin', '/role': 'member' }, { csrfFrom: page.body });
    expect(created.status).toBe(200);
    expect(created.body).toContain('mos_live_');
  });

  it('a POST whose Origin is this host under the other scheme (https:// against this http:// service) gets 403 and changes nothing', async () => {
    const page = await alice.get('/dashboard/api-keys');
    const before = await keyCount(alice);
    const here = new URL(app.baseUrl);
    expect(here.protocol).toBe('http:');
    const otherScheme = `https://${here.host}`;
    const refused = await alice.post('/dashboard/api-keys', { '/name': 'Other scheme', '/role': 'admin' }, { csrfFrom: page.body, origin: otherScheme });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('its Origin does not match');
    expect(await keyCount(alice)).toBe(before);
  });

  it('with no Origin header the Referer decides: a page of this origin is taken; another origin, or this host under the other scheme, gets 403', async () => {
    const page = await alice.get('/dashboard/api-keys');
    const before = await keyCount(alice);
    const here = new URL(app.baseUrl);
    for (const referer of ['http://evil.test/dashboard/api-keys', `https://${here.host}/dashboard/api-keys`, `http://${here.hostname}:${Number(here.port) + 1}/dashboard/api-keys`]) {
      const refused = await alice.post('/dashboard/api-keys', { '/name': 'Referer elsewhere', '/role': 'admin' }, { csrfFrom: page.body, origin: null, referer });
      expect(refused.status, referer).toBe(403);
      expect(refused.body).toContain('its Origin does not match');
    }
    expect(await keyCount(alice)).toBe(before);
    // The same form with the Referer of this service's page is taken: the refusals above were the Referer's.
    const taken = await alice.post('/dashboard/api-keys', { '/name': 'Referer here', '/role': 'member' }, { csrfFrom: page.body, origin: null, referer: `${app.baseUrl}/dashboard/api-keys` });
    expect(taken.status).toBe(200);
    expect(taken.body).toContain('mos_live_');
    expect(await keyCount(alice)).toBe(before + 1);
  });

  it('a form not sent urlencoded gets 415, one over 64 KiB gets 413, and neither changes anything; one just under is read', async () => {
    const page = await alice.get('/dashboard/api-keys');
    const before = await keyCount(alice);
    const token = csrfTokenOf(page.body);
    const send = (body: string, contentType: string) =>
      alice.request('/dashboard/api-keys', { method: 'POST', body, headers: { 'Content-Type': contentType, Origin: app.baseUrl } });
    const fields = (name: string) => new URLSearchParams({ _csrf: token, '/name': name, '/role': 'member' }).toString();
    const json = await send(JSON.stringify({ _csrf: token, '/name': 'As JSON', '/role': 'member' }), 'application/json');
    expect(json.status).toBe(415);
    expect(json.body).toContain('Dashboard forms are sent as application/x-www-form-urlencoded.');
    const padded = (size: number) => `${fields('Padded')}&pad=${'x'.repeat(size - fields('Padded').length - 5)}`;
    expect(padded(64 * 1024 + 1)).toHaveLength(64 * 1024 + 1);
    const tooLarge = await send(padded(64 * 1024 + 1), 'application/x-www-form-urlencoded');
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toContain('The form is larger than 65536 bytes.');
    expect(await keyCount(alice)).toBe(before);
    const justUnder = await send(padded(64 * 1024), 'application/x-www-form-urlencoded');
    expect(justUnder.status).toBe(200);
    expect(await keyCount(alice)).toBe(before + 1);
  });

  it('the forms before sign-in (sign-in, sign-up) need their pre-session token too (no login CSRF)', async () => {
    const visitor = new DashboardClient(app.baseUrl);
    await visitor.get('/dashboard/sign-in');
    expect((await visitor.post('/dashboard/sign-in', { '/email': 'alice@alice.test', '/password': PASSWORD })).status).toBe(403);
    expect((await visitor.post('/dashboard/sign-up', { '/name': 'X', '/email': 'x@x.test', '/password': PASSWORD })).status).toBe(403);
    const page = await visitor.get('/dashboard/sign-in');
    expect((await visitor.post('/dashboard/sign-in', { '/email': 'alice@alice.test', '/password': PASSWORD }, { csrfFrom: page.body, origin: 'http://evil.test' })).status).toBe(403);
    expect(visitor.cookies.has('mos_session')).toBe(false);
  });
});

describe("another account's ids", () => {
  it("are 404 on every page and every form, exactly like ids that do not exist", async () => {
    const bobApi: ApiClient = app.clientFor(bobKey);
    const application = (await bobApi.POST('/v1/applications', { body: { applicant: { name: 'Bob Applicant', amount: 200000 }, term: 30 } })).data!;
    const webhook = (await bobApi.POST('/v1/webhooks', { body: { url: 'http://127.0.0.1:9/bob', events: ['application.approved'] } })).data!;
    const bobKeys = (await bobApi.GET('/v1/api-keys')).data!.data;
    const bobUserId = /\/dashboard\/team\/users\/(usr-[0-9a-z]+)\/remove/.exec((await bob.get('/dashboard/team')).body)![1]!;
    const page = await alice.get('/dashboard');
    const gets = [
      `/dashboard/applications/${application.mortgageId}`,
      `/dashboard/webhooks/${webhook.webhookId}`,
      `/dashboard/api-keys/${bobKeys[0]!.keyId}/revoke`,
      `/dashboard/team/users/${bobUserId}/remove`,
      `/dashboard/applications/mtg-00000000000000000000000000`,
    ];
    for (const path of gets) expect((await alice.get(path)).status, path).toBe(404);
    const posts: Array<[string, Record<string, string>]> = [
      [`/dashboard/api-keys/${bobKeys[0]!.keyId}/revoke`, {}],
      [`/dashboard/webhooks/${webhook.webhookId}`, { '/url': 'http://127.0.0.1:9/alice', '/events': 'application.approved' }],
      [`/dashboard/webhooks/${webhook.webhookId}/enabled`, { '/enabled': 'false' }],
      [`/dashboard/webhooks/${webhook.webhookId}/rotate-secret`, {}],
      [`/dashboard/webhooks/${webhook.webhookId}/test`, { '/event': 'application.approved' }],
      [`/dashboard/team/users/${bobUserId}/role`, { '/role': 'member' }],
      [`/dashboard/team/users/${bobUserId}/remove`, {}],
      [`/dashboard/team/users/${bobUserId}/mfa-reset`, {}],
      [`/dashboard/applications/${application.mortgageId}/approve`, { '/note': 'Not mine' }],
      [`/dashboard/applications/${application.mortgageId}/decline`, { '/note': 'Not mine' }],
      [`/dashboard/applications/${application.mortgageId}/conditions`, { '/type': 'custom', '/description': 'Not mine', '/dueBefore': 'closing' }],
      [`/dashboard/applications/${application.mortgageId}/conditions/cnd-00000000000000000000000000/satisfy`, { '/note': 'Not mine' }],
      [`/dashboard/applications/${application.mortgageId}/conditions/cnd-00000000000000000000000000/waive`, { '/note': 'Not mine' }],
    ];
    for (const [path, fields] of posts) expect((await alice.post(path, fields, { csrfFrom: page.body })).status, path).toBe(404);
    // Nothing of Bob's changed.
    expect((await bobApi.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId: webhook.webhookId } } })).data!.url).toBe('http://127.0.0.1:9/bob');
    expect((await bobApi.GET('/v1/api-keys')).data!.data.every((k) => k.revokedAt === null)).toBe(true);
    expect((await bob.get('/dashboard/team')).body).toContain('bob@bob.test');
  });
});

describe('team', () => {
  it("inviting an email that has a user in another organisation answers exactly as inviting a new one; the conflict is met at acceptance", async () => {
    const invite = async (email: string) => {
      const page = await alice.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': email, '/role': 'member' });
      const link = /id="invitation-link">([^<]+)</.exec(page.body)?.[1];
      // The page with what differs by nature (the email, the link, ids and tokens) taken out.
      const shape = page.body.replaceAll(email, 'EMAIL').replace(/\/dashboard\/invitations\/[A-Za-z0-9_-]+/g, 'LINK').replace(/inv-[0-9a-z]+/g, 'ID').replace(/value="[A-Za-z0-9_-]{40,}"/g, 'TOKEN');
      return { status: page.status, link, shape };
    };
    const elsewhere = await invite('bob@bob.test'); // Bob is a user of another organisation
    const nobody = await invite('newcomer@alice.test');
    expect(elsewhere.status).toBe(200);
    expect(nobody.status).toBe(200);
    expect(elsewhere.shape).toBe(nobody.shape);

    const bobsLink = new URL(elsewhere.link!).pathname;
    const visitor = new DashboardClient(app.baseUrl);
    const page = await visitor.get(bobsLink);
    const accepted = await visitor.post(bobsLink, { '/password': 'another long passphrase' }, { csrfFrom: page.body });
    expect(accepted.status).toBe(409);
    expect(accepted.body).toContain('A user with this email already exists');

    // This account's own user: the admin already sees the team, so the answer may say so.
    const own = await alice.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'alice@alice.test', '/role': 'member' });
    expect(own.status).toBe(400); // the form shown again with the message beside the field
    expect(own.body).toContain('already a user of this account');
  }, 60_000);

  it('an invitation link works once, for its email and role; a member gets 403 on admin pages and forms; the last admin stays', async () => {
    const invited = await alice.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'Max@Alice.test', '/role': 'member' });
    expect(invited.status).toBe(200);
    const link = /id="invitation-link">([^<]+)</.exec(invited.body)![1]!;
    const path = new URL(link).pathname;
    expect(path).toMatch(/^\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);

    const max = new DashboardClient(app.baseUrl);
    const page = await max.get(path);
    expect(page.status).toBe(200);
    expect(page.body).toContain('value="max@alice.test"');
    const joined = await max.post(path, { '/password': 'another long passphrase' }, { csrfFrom: page.body });
    expect(joined.status).toBe(303);
    expect((await max.get('/dashboard')).body).toContain('max@alice.test · member');
    // Used once: the link is closed now, for anyone.
    const again = await new DashboardClient(app.baseUrl).get(path);
    expect(again.status).toBe(422);
    expect(again.body).toContain('has already been used');
    expect((await new DashboardClient(app.baseUrl).get('/dashboard/invitations/not-a-token')).status).toBe(404);

    // A member: read-only integrations, 403 on admin pages and on every admin form.
    for (const adminPage of ['/dashboard/settings', '/dashboard/webhooks/new']) expect((await max.get(adminPage)).status, adminPage).toBe(403);
    const home = await max.get('/dashboard/api-keys');
    expect(home.status).toBe(200);
    expect(home.body).not.toContain('Create an API key');
    for (const [action, fields] of [
      ['/dashboard/api-keys', { '/name': 'Member made', '/role': 'admin' }],
      ['/dashboard/team/invitations', { '/email': 'eve@alice.test', '/role': 'admin' }],
      ['/dashboard/settings/underwriting', {}],
    ] as const) {
      expect((await max.post(action, fields, { csrfFrom: home.body })).status, action).toBe(403);
    }

    // The last admin can be neither demoted nor removed.
    const team = await alice.get('/dashboard/team');
    const aliceId = /\/dashboard\/team\/users\/(usr-[0-9a-z]+)\/remove/.exec(team.body)![1]!;
    const demoted = await alice.post(`/dashboard/team/users/${aliceId}/role`, { '/role': 'member' }, { csrfFrom: team.body });
    expect(demoted.status).toBe(422);
    expect(demoted.body).toContain('last admin');
    expect((await alice.post(`/dashboard/team/users/${aliceId}/remove`, {}, { csrfFrom: team.body })).status).toBe(422);
    expect((await alice.get('/dashboard')).body).toContain('alice@alice.test · admin');
  }, 60_000);
});

describe('sessions', () => {
  async function signIn(client: DashboardClient, email = 'alice@alice.test', password = PASSWORD) {
    return client.submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': email, '/password': password });
  }

  it('the session cookie is HttpOnly, SameSite=Lax, Path=/, session-only; over http it is not Secure and has no prefix', async () => {
    nextMinute();
    const client = new DashboardClient(app.baseUrl);
    const response = await signIn(client);
    expect(response.status).toBe(303);
    const cookie = response.setCookies.find((c) => c.startsWith('mos_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure|Max-Age|Expires|Domain/i);
    expect(cookie.split(';')[0]!.split('=')[1]).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits
  });

  it('with an https public URL the cookies are Secure and __Host- prefixed', async () => {
    nextMinute();
    const published = app.ctx.config.publicBaseUrl;
    app.ctx.config.publicBaseUrl = 'https://dashboard.example.test';
    try {
      const client = new DashboardClient(app.baseUrl);
      const page = await client.get('/dashboard/sign-in');
      expect(page.setCookies.join('\n')).toMatch(/^__Host-mos_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/m);
      const response = await client.post('/dashboard/sign-in', { '/email': 'alice@alice.test', '/password': PASSWORD }, { csrfFrom: page.body, origin: 'https://dashboard.example.test' });
      expect(response.status).toBe(303);
      expect(response.setCookies.join('\n')).toMatch(/^__Host-mos_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/m);
      expect((await client.get('/dashboard')).status).toBe(200);
    } finally {
      app.ctx.config.publicBaseUrl = published;
    }
  });

  it('session fixation: sign-in always issues a new session id, and the id the browser had before is dead', async () => {
    nextMinute();
    const client = new DashboardClient(app.baseUrl);
    client.cookies.set('mos_session', 'attacker-chosen-session-id-0000000000000000');
    const signInPage = await client.get('/dashboard/sign-in');
    await client.post('/dashboard/sign-in', { '/email': 'alice@alice.test', '/password': PASSWORD }, { csrfFrom: signInPage.body });
    const first = client.cookies.get('mos_session')!;
    expect(first).not.toBe('attacker-chosen-session-id-0000000000000000');
    expect((await client.get('/dashboard')).status).toBe(200);
    // Signing in again (with the first session's cookie) replaces it with a new one.
    await client.post('/dashboard/sign-in', { '/email': 'alice@alice.test', '/password': PASSWORD }, { csrfFrom: signInPage.body });
    const second = client.cookies.get('mos_session')!;
    expect(second).not.toBe(first);
    const replay = new DashboardClient(app.baseUrl);
    replay.cookies.set('mos_session', first);
    const old = await replay.get('/dashboard');
    expect(old.status).toBe(303);
    expect(old.headers.get('location')).toBe('/dashboard/sign-in');
  });

  it('sign-out destroys the session in the store: its cookie no longer opens anything', async () => {
    nextMinute();
    const client = new DashboardClient(app.baseUrl);
    await signIn(client);
    const id = client.cookies.get('mos_session')!;
    const page = await client.get('/dashboard');
    const out = await client.post('/dashboard/sign-out', {}, { csrfFrom: page.body });
    expect(out.status).toBe(303);
    expect(out.setCookies.join('\n')).toMatch(/mos_session=; .*Max-Age=0/);
    const replay = new DashboardClient(app.baseUrl);
    replay.cookies.set('mos_session', id);
    expect((await replay.get('/dashboard')).status).toBe(303);
  });

  it('a session ends after 30 idle minutes, and 8 hours after sign-in however active', async () => {
    nextMinute();
    const idle = new DashboardClient(app.baseUrl);
    await signIn(idle);
    clock.advance(29 * 60_000);
    expect((await idle.get('/dashboard')).status).toBe(200);
    clock.advance(30 * 60_000 + 1000);
    expect((await idle.get('/dashboard')).status).toBe(303);

    const busy = new DashboardClient(app.baseUrl);
    await signIn(busy);
    for (let minutes = 0; minutes < 8 * 60 - 20; minutes += 20) {
      clock.advance(20 * 60_000);
      expect((await busy.get('/dashboard')).status).toBe(200);
    }
    clock.advance(21 * 60_000);
    expect((await busy.get('/dashboard')).status).toBe(303);
    // The sessions left behind (idle for hours now) are swept by the background task's use case.
    expect(await sweepSessions(app.ctx)).toBeGreaterThan(0);
    expect(await sweepSessions(app.ctx)).toBe(0);
  }, 60_000);
});

describe('passwords', () => {
  it('must be 12 to 128 characters; the message is shown beside the field and nothing is made', async () => {
    nextMinute(); // a minute of its own for the sign-up limit
    for (const password of ['x'.repeat(11), 'x'.repeat(129)]) {
      const client = new DashboardClient(app.baseUrl);
      const response = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', { '/name': 'Short', '/email': 'short@short.test', '/password': password });
      expect(response.status).toBe(400);
      expect(response.body).toMatch(/id="f-password-error" class="field-error">must be (at least 12|at most 128) characters</);
      expect(response.body).not.toContain(password); // a password is never sent back
      expect(client.cookies.has('mos_session')).toBe(false);
    }
  });
});

describe('sign-up rate limiting', () => {
  async function signUpAttempt(fields: { name: string; email: string; password: string }) {
    const client = new DashboardClient(app.baseUrl);
    const before = scryptRuns.count;
    const response = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', { '/name': fields.name, '/email': fields.email, '/password': fields.password });
    return { ...response, client, hashes: scryptRuns.count - before };
  }

  it('per address: every attempt counts, made or refused; past the limit 429 with Retry-After, no hash run and nothing made, until the minute ends', async () => {
    nextMinute();
    expect((await signUpAttempt({ name: 'Carol Credit', email: 'carol@carol.test', password: PASSWORD })).status).toBe(200);
    expect((await signUpAttempt({ name: 'Short', email: 'short@short.test', password: 'too short' })).status).toBe(400);
    expect((await signUpAttempt({ name: 'Alice Again', email: 'alice@alice.test', password: PASSWORD })).status).toBe(409);

    const refused = await signUpAttempt({ name: 'Dave Direct', email: 'dave@dave.test', password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many sign-ups from your address');
    expect(refused.hashes).toBe(0);
    expect(refused.client.cookies.has('mos_session')).toBe(false);

    nextMinute();
    // Dave's account was not made by the refused attempt: his email is still free.
    expect((await signUpAttempt({ name: 'Dave Direct', email: 'dave@dave.test', password: PASSWORD })).status).toBe(200);
  });
});

describe('sign-in rate limiting', () => {
  async function attempt(email: string, password: string, baseUrl = app.baseUrl) {
    const before = scryptRuns.count; // the sign-in page submit() reads first runs no scrypt
    const response = await new DashboardClient(baseUrl).submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': email, '/password': password });
    return { ...response, hashes: scryptRuns.count - before };
  }

  it('an unknown email and a wrong password get the same answer, after the same work: one scrypt each', async () => {
    nextMinute();
    const wrong = await attempt('alice@alice.test', 'not the password at all');
    const unknown = await attempt('nobody@alice.test', 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (body: string) => /class="form-error" role="alert">([^<]+)</.exec(body)?.[1];
    expect(message(unknown.body)).toBe(message(wrong.body));
    expect(message(wrong.body)).toBe('The email or the password is not correct.');
    // What takes the time of a sign-in is scrypt (hundreds of milliseconds at OWASP's cost): an
    // unknown email runs it too, against a decoy hash, so the time does not tell the two apart.
    expect(wrong.hashes).toBe(1);
    expect(unknown.hashes).toBe(1);
  }, 60_000);

  it('per email and address: past the limit every sign-in with that email from that address gets 429, right password or not, known or not, until the minute ends', async () => {
    nextMinute();
    for (const email of ['alice@alice.test', 'nobody@alice.test']) {
      expect((await attempt(email, 'wrong password one')).status).toBe(401);
      expect((await attempt(email.toUpperCase(), 'wrong password two')).status).toBe(401);
      const limited = await attempt(email, email.startsWith('alice') ? PASSWORD : 'whatever it is');
      expect(limited.status).toBe(429);
      expect(limited.hashes).toBe(0); // refused before any password is checked
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.body).toContain('Too many failed sign-ins');
      nextMinute();
    }
    expect((await attempt('alice@alice.test', PASSWORD)).status).toBe(303);
  }, 60_000);

  it("a stranger failing from one address cannot lock the owner out: the owner signs in from another address, and the stranger's refused attempts count toward nothing", async () => {
    nextMinute();
    const otherAddress = await app.baseUrlOnIpv6Loopback();
    const stranger = [];
    for (let i = 0; i < 8; i++) stranger.push((await attempt('alice@alice.test', `stranger guess ${i}`)).status);
    // Two failures count (the per email-and-address limit), the six after are refused unheard.
    expect(stranger).toEqual([401, 401, 429, 429, 429, 429, 429, 429]);
    expect((await attempt('alice@alice.test', PASSWORD, otherAddress)).status).toBe(303);
  }, 60_000);

  it('per email from every address together: a ceiling that failures from several addresses reach', async () => {
    nextMinute();
    const otherAddress = await app.baseUrlOnIpv6Loopback();
    expect((await attempt('alice@alice.test', 'wrong password one')).status).toBe(401);
    expect((await attempt('alice@alice.test', 'wrong password two')).status).toBe(401);
    expect((await attempt('alice@alice.test', 'wrong password three', otherAddress)).status).toBe(401);
    // The ceiling (3) is reached across the two addresses: the right password waits for the next minute.
    const limited = await attempt('alice@alice.test', PASSWORD, otherAddress);
    expect(limited.status).toBe(429);
    expect(limited.hashes).toBe(0);
    nextMinute();
    expect((await attempt('alice@alice.test', PASSWORD, otherAddress)).status).toBe(303);
  }, 60_000);

  it('per address: failures with several emails from one address are limited together; a success gives its attempt back', async () => {
    nextMinute();
    expect((await attempt('alice@alice.test', PASSWORD)).status).toBe(303); // does not count
    expect((await attempt('one@x.test', 'wrong password one')).status).toBe(401);
    expect((await attempt('two@x.test', 'wrong password two')).status).toBe(401);
    expect((await attempt('three@x.test', 'wrong password three')).status).toBe(401);
    expect((await attempt('bob@bob.test', PASSWORD)).status).toBe(429);
    nextMinute();
    expect((await attempt('bob@bob.test', PASSWORD)).status).toBe(303);
  }, 60_000);
});
