/**
 * The dashboard's second factor over HTTP against the real app (on each engine), with codes made
 * here by otpauth from the secret the enrolment page shows in text: enrolment from a QR code and a
 * first code, sign-in with a code and with a recovery code (once), a replayed code, wrong codes
 * counting toward the sign-in limits, the account's requirement sending users to enrolment, step-up
 * on every sensitive form, and an admin's reset.
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCommandError, runAdminCommand } from '../../src/cli/commands.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { DashboardClient, signUpWith, type PageResponse } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
// Mid-step (15 s into a 30-second step), so that advancing by whole steps never lands on a boundary.
const clock = manualClock(Date.parse('2026-11-02T09:00:15Z'));
let app: TestApp;
let alice: DashboardClient;
let aliceSecret: string;
let aliceRecovery: string[];

/** The code the user's app shows now (by the test's clock). */
const codeFor = (secret: string, offsetMs = 0) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: clock.now().getTime() + offsetMs });
/** The next 30-second step: a code not used yet. */
const nextStep = () => clock.advance(30_000);
/** The next minute: every sign-in window of the limits has ended. */
const nextMinute = () => clock.advance(60_000);

const secretOf = (html: string) => /id="mfa-secret">([A-Z2-7]+)</.exec(html)?.[1];
const recoveryCodesOf = (html: string) => [...(/<ol id="recovery-codes"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? '').matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!);
const codesLeft = async (client: DashboardClient) => Number(/id="recovery-codes-left">(\d+)</.exec((await client.get('/dashboard/security')).body)?.[1]);
const keyCount = async (client: DashboardClient) => ((await client.get('/dashboard/api-keys')).body.match(/\/revoke"/g) ?? []).length;

/** Enrols the signed-in client: start, read the secret, confirm with a code; returns the secret and the recovery codes. */
async function enrol(client: DashboardClient): Promise<{ secret: string; recovery: string[] }> {
  const started = await client.submit('/dashboard/security', '/dashboard/security/enrol', {});
  expect(started.status).toBe(303);
  const page = await client.get('/dashboard/security');
  const secret = secretOf(page.body)!;
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  const confirmed = await client.post('/dashboard/security/enrol/confirm', { '/code': codeFor(secret) }, { csrfFrom: page.body });
  expect(confirmed.status, confirmed.body.slice(0, 300)).toBe(200);
  return { secret, recovery: recoveryCodesOf(confirmed.body) };
}

/** Signs in with the password; returns the client and the answer (a 303 to the code page for a user with a factor). */
async function signInWithPassword(email: string, baseUrl = app.baseUrl): Promise<{ client: DashboardClient; answer: PageResponse }> {
  const client = new DashboardClient(baseUrl);
  const answer = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': email, '/password': PASSWORD });
  return { client, answer };
}

async function sendCode(client: DashboardClient, code: string): Promise<PageResponse> {
  return client.submit('/dashboard/sign-in/code', '/dashboard/sign-in/code', { '/code': code });
}

beforeAll(async () => {
  app = await startTestApp({
    clock,
    env: {
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE: '3',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE: '10',
      DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE: '10',
      DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0',
    },
  });
  ({ client: alice } = await signUpWith(app.baseUrl, { name: 'Alice Lending', email: 'alice@alice.test', password: PASSWORD }));
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('enrolment', () => {
  it('shows a QR code drawn here (an SVG data: image) and the secret in text; a wrong first code enrols nothing; the right one gives ten recovery codes once', async () => {
    const before = await alice.get('/dashboard/security');
    expect(before.status).toBe(200);
    expect(before.body).toContain('Set up two-step verification');
    await alice.submit('/dashboard/security', '/dashboard/security/enrol', {});
    const page = await alice.get('/dashboard/security');
    const qr = /<img src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)"/.exec(page.body)?.[1];
    expect(Buffer.from(qr!, 'base64').toString('utf8')).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[\s\S]*<path[\s\S]*<\/svg>/);
    aliceSecret = secretOf(page.body)!;
    expect(aliceSecret).toMatch(/^[A-Z2-7]{32}$/);
    // The secret is sealed at rest, like every other secret.
    const stored = await app.ctx.store.read((db) => db.get<{ p: string }>("SELECT totp_pending_secret AS p FROM users WHERE email = 'alice@alice.test'"));
    expect(stored!.p).not.toContain(aliceSecret);

    const wrong = await alice.post('/dashboard/security/enrol/confirm', { '/code': codeFor(aliceSecret, 5 * 60_000) }, { csrfFrom: page.body });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('The code is not correct');
    expect((await alice.get('/dashboard/security')).body).toContain('Turn on two-step verification');

    const confirmed = await alice.post('/dashboard/security/enrol/confirm', { '/code': codeFor(aliceSecret) }, { csrfFrom: page.body });
    expect(confirmed.status).toBe(200);
    aliceRecovery = recoveryCodesOf(confirmed.body);
    expect(aliceRecovery).toHaveLength(10);
    expect(new Set(aliceRecovery).size).toBe(10);
    for (const code of aliceRecovery) expect(code).toMatch(/^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/);
    // Stored hashed only; never shown again.
    const hashes = await app.ctx.store.read((db) => db.all<{ code_hash: string }>('SELECT code_hash FROM mfa_recovery_codes'));
    expect(hashes).toHaveLength(10);
    for (const { code_hash } of hashes) for (const code of aliceRecovery) expect(code_hash).not.toContain(code.replaceAll('-', ''));
    const security = await alice.get('/dashboard/security');
    expect(security.body).toContain('On since');
    expect(await codesLeft(alice)).toBe(10);
    for (const code of aliceRecovery) expect(security.body).not.toContain(code);
  });
});

describe('sign-in', () => {
  it('asks for the code after the password; until then every page and form sends the session to the code page and changes nothing', async () => {
    nextStep();
    const { client, answer } = await signInWithPassword('alice@alice.test');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/dashboard/sign-in/code');
    for (const path of ['/dashboard', '/dashboard/api-keys', '/dashboard/team', '/dashboard/security']) {
      const page = await client.get(path);
      expect(page.status, path).toBe(303);
      expect(page.headers.get('location')).toBe('/dashboard/sign-in/code');
    }
    const codePage = await client.get('/dashboard/sign-in/code');
    expect(codePage.status).toBe(200);
    expect(codePage.body).not.toContain('aria-label="Sections"');
    const keysBefore = await keyCount(alice);
    const blocked = await client.post('/dashboard/api-keys', { '/name': 'Before the code', '/role': 'admin' }, { csrfFrom: codePage.body });
    expect(blocked.status).toBe(303);
    expect(await keyCount(alice)).toBe(keysBefore);

    const signedIn = await sendCode(client, codeFor(aliceSecret));
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/dashboard');
    expect((await client.get('/dashboard')).status).toBe(200);
  });

  it('a code already used (the same 30-second step) is refused; the next step is taken', async () => {
    nextStep();
    const first = await signInWithPassword('alice@alice.test');
    const code = codeFor(aliceSecret);
    expect((await sendCode(first.client, code)).status).toBe(303);
    const second = await signInWithPassword('alice@alice.test');
    const replayed = await sendCode(second.client, code);
    expect(replayed.status).toBe(401);
    expect(replayed.body).toContain('This code has been used already');
    expect((await second.client.get('/dashboard')).status).toBe(303);
    // A code of the step before (the window accepts it) is refused too: it is not newer than the one used.
    expect((await sendCode(second.client, codeFor(aliceSecret, -30_000))).status).toBe(401);
    nextStep();
    expect((await sendCode(second.client, codeFor(aliceSecret))).status).toBe(303);
    nextMinute();
  });

  it('a recovery code signs in once, typed in any case and without hyphens; then it is refused', async () => {
    const recovery = aliceRecovery[0]!;
    const first = await signInWithPassword('alice@alice.test');
    expect((await sendCode(first.client, recovery.toUpperCase().replaceAll('-', ''))).status).toBe(303);
    expect(await codesLeft(first.client)).toBe(9);
    const again = await signInWithPassword('alice@alice.test');
    const refused = await sendCode(again.client, recovery);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('The code is not correct');
    nextMinute();
  });

  it('a code one step (30 s) either side of now is taken; one two steps (60 s) either side is refused', async () => {
    nextMinute(); // past every step used so far, so only the window decides
    const { client } = await signInWithPassword('alice@alice.test');
    for (const offset of [-60_000, 60_000]) {
      const refused = await sendCode(client, codeFor(aliceSecret, offset));
      expect(refused.status, String(offset)).toBe(401);
      expect(refused.body).toContain('The code is not correct');
    }
    expect((await sendCode(client, codeFor(aliceSecret, -30_000))).status).toBe(303);
    const ahead = await signInWithPassword('alice@alice.test');
    expect((await sendCode(ahead.client, codeFor(aliceSecret, 30_000))).status).toBe(303);
    nextMinute();
  });

  it('wrong codes count toward the sign-in limits: past them even the right code gets 429 until the minute ends', async () => {
    nextMinute();
    nextStep();
    const { client } = await signInWithPassword('alice@alice.test');
    for (let i = 0; i < 3; i++) expect((await sendCode(client, '000000')).status).toBe(401);
    const limited = await sendCode(client, codeFor(aliceSecret));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toContain('Too many failed sign-ins');
    // The password, for the same email from the same address, is held by the same limit.
    expect((await signInWithPassword('alice@alice.test')).answer.status).toBe(429);
    nextMinute();
    expect((await sendCode(client, codeFor(aliceSecret))).status).toBe(303);
  });
});

describe('step-up', () => {
  /** A fresh session of alice's: password and code. */
  async function aliceSession(): Promise<DashboardClient> {
    nextStep();
    const { client } = await signInWithPassword('alice@alice.test');
    expect((await sendCode(client, codeFor(aliceSecret))).status).toBe(303);
    return client;
  }

  it('a user without a second factor is never asked', async () => {
    const { client } = await signUpWith(app.baseUrl, { name: 'Carol Credit', email: 'carol@carol.test', password: PASSWORD });
    clock.advance(11 * 60_000);
    const created = await client.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'No factor', '/role': 'member' });
    expect(created.status).toBe(200);
    expect(created.body).toContain('mos_live_');
  });

  it('right after the code, sensitive forms go through; ten minutes later each asks for a fresh code, keeps the form, and runs once given it', async () => {
    const client = await aliceSession();
    const fresh = await client.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Fresh', '/role': 'member' });
    expect(fresh.status).toBe(200);
    const keyId = /\/dashboard\/api-keys\/(key-[0-9a-z]+)\/revoke/.exec((await client.get('/dashboard/api-keys')).body)![1]!;
    const webhookPage = await client.submit('/dashboard/webhooks/new', '/dashboard/webhooks', { '/url': 'http://127.0.0.1:9/hooks', '/events': 'application.approved' });
    const webhookId = /\/dashboard\/webhooks\/(whk-[0-9a-z]+)/.exec(webhookPage.body)![1]!;
    const { client: bob } = await invite(client, 'bob@alice.test', 'member');
    const bobId = await userIdOf(client, 'bob@alice.test');
    await enrol(bob);

    const actions: Array<{ name: string; page: string; action: string; fields: Record<string, string>; done: (r: PageResponse) => Promise<void> | void }> = [
      { name: 'create an API key', page: '/dashboard/api-keys', action: '/dashboard/api-keys', fields: { '/name': 'Stepped up', '/role': 'member' }, done: (r) => expect(r.body).toContain('mos_live_') },
      { name: 'revoke an API key', page: '/dashboard/api-keys', action: `/dashboard/api-keys/${keyId}/revoke`, fields: {}, done: (r) => expect(r.headers.get('location')).toBe('/dashboard/api-keys?done=revoked') },
      { name: 'rotate a webhook secret', page: `/dashboard/webhooks/${webhookId}`, action: `/dashboard/webhooks/${webhookId}/rotate-secret`, fields: {}, done: (r) => expect(r.body).toContain('whsec_') },
      { name: 'change a role', page: '/dashboard/team', action: `/dashboard/team/users/${bobId}/role`, fields: { '/role': 'admin' }, done: (r) => expect(r.headers.get('location')).toBe('/dashboard/team?done=role') },
      { name: 'require MFA', page: '/dashboard/team', action: '/dashboard/team/mfa-requirement', fields: { '/required': 'true' }, done: (r) => expect(r.headers.get('location')).toBe('/dashboard/team?done=mfa-required') },
      { name: 'stop requiring MFA', page: '/dashboard/team', action: '/dashboard/team/mfa-requirement', fields: { '/required': 'false' }, done: (r) => expect(r.headers.get('location')).toBe('/dashboard/team?done=mfa-optional') },
      { name: "reset a user's MFA", page: '/dashboard/team', action: `/dashboard/team/users/${bobId}/mfa-reset`, fields: {}, done: (r) => expect(r.headers.get('location')).toBe('/dashboard/team?done=mfa-reset') },
    ];
    for (const { name, page, action, fields, done } of actions) {
      clock.advance(10 * 60_000 + 1_000);
      const keysBefore = await keyCount(client);
      const asked = await client.submit(page, action, fields);
      expect(asked.status, name).toBe(401);
      expect(asked.body, name).toContain('Confirm it is you');
      expect(asked.body).toContain(`action="${action}"`);
      for (const [field, value] of Object.entries(fields)) expect(asked.body, name).toContain(`name="${field}" value="${value}"`);
      expect(await keyCount(client), name).toBe(keysBefore);
      // A wrong code: asked again, nothing done.
      const wrong = await client.post(action, { ...fields, _code: '000000' }, { csrfFrom: asked.body });
      expect(wrong.status, name).toBe(401);
      expect(wrong.body).toContain('The code is not correct');
      // The right code: the form runs.
      const ran = await client.post(action, { ...fields, _code: codeFor(aliceSecret) }, { csrfFrom: wrong.body });
      expect(ran.status, `${name}: ${ran.body.slice(0, 300)}`).toBeLessThan(400);
      await done(ran);
      nextMinute(); // the wrong codes' window ends
    }
    // Bob's factor was reset: his sessions ended, and the team page shows it off.
    expect((await bob.get('/dashboard')).status).toBe(303);
    expect((await client.get('/dashboard/team')).body).not.toContain(`/dashboard/team/users/${bobId}/mfa-reset`);
  });

  it('wrong codes at a step-up count toward the sign-in limits: past them even the right code gets the step-up page again with 429 and Retry-After, the form kept and nothing run', async () => {
    const client = await aliceSession();
    clock.advance(10 * 60_000 + 1_000);
    const keysBefore = await keyCount(client);
    const fields = { '/name': 'Limited', '/role': 'member' };
    let asked = await client.submit('/dashboard/api-keys', '/dashboard/api-keys', fields);
    for (let i = 0; i < 3; i++) {
      asked = await client.post('/dashboard/api-keys', { ...fields, _code: '000000' }, { csrfFrom: asked.body });
      expect(asked.status).toBe(401);
    }
    const limited = await client.post('/dashboard/api-keys', { ...fields, _code: codeFor(aliceSecret) }, { csrfFrom: asked.body });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const shown of ['Confirm it is you', 'Too many failed sign-ins']) expect(limited.body).toContain(shown);
    expect(limited.body).toContain('name="/name" value="Limited"');
    expect(await keyCount(client)).toBe(keysBefore);
    nextMinute();
  });
});

/** Invites `email` with `role` and accepts the invitation; returns the new user's signed-in client. */
async function invite(admin: DashboardClient, email: string, role: string): Promise<{ client: DashboardClient }> {
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': email, '/role': role });
  expect(invited.status).toBe(200);
  const path = new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname;
  const client = new DashboardClient(app.baseUrl);
  const accepted = await client.submit(path, path, { '/password': PASSWORD });
  expect(accepted.status).toBe(303);
  return { client };
}

async function userIdOf(admin: DashboardClient, email: string): Promise<string> {
  const team = (await admin.get('/dashboard/team')).body;
  const row = team.split('<tr>').slice(1).find((r) => r.includes(email))!; // the first part is the header, which names the signed-in user too
  return /\/dashboard\/team\/users\/(usr-[0-9a-z]+)\//.exec(row)![1]!;
}

describe('required MFA and admin reset', () => {
  let admin: DashboardClient;
  let adminSecret: string;
  let member: DashboardClient;

  beforeAll(async () => {
    ({ client: admin } = await signUpWith(app.baseUrl, { name: 'Dora Loans', email: 'dora@dora.test', password: PASSWORD }));
    ({ client: member } = await invite(admin, 'eve@dora.test', 'member'));
  });

  it('an admin cannot require it before having it; a member cannot change it (403)', async () => {
    const refused = await admin.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'true' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('Turn on two-step verification for yourself first');
    expect((await member.submit('/dashboard/security', '/dashboard/team/mfa-requirement', { '/required': 'true' })).status).toBe(403);
  });

  it('once required, a user without it is sent to enrolment by every page and form, and reaches the dashboard once enrolled', async () => {
    ({ secret: adminSecret } = await enrol(admin));
    expect((await admin.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'true' })).headers.get('location')).toBe('/dashboard/team?done=mfa-required');
    // Eve, signed in already and without a factor, is held at the Security page from her next request.
    nextMinute();
    const { client: eve, answer } = await signInWithPassword('eve@dora.test');
    expect(answer.headers.get('location')).toBe('/dashboard');
    for (const client of [member, eve]) {
      for (const path of ['/dashboard', '/dashboard/api-keys', '/dashboard/team', '/dashboard/applications']) {
        const page = await client.get(path);
        expect(page.status, path).toBe(303);
        expect(page.headers.get('location')).toBe('/dashboard/security');
      }
    }
    const security = await eve.get('/dashboard/security');
    expect(security.status).toBe(200);
    expect(security.body).toContain('Your account requires two-step verification');
    expect(security.body).not.toContain('aria-label="Sections"');
    const switched = await eve.post('/dashboard/environment', { environment: 'test', return: '/dashboard' }, { csrfFrom: security.body });
    expect(switched.headers.get('location')).toBe('/dashboard/security');
    const { secret: eveSecret } = await enrol(eve);
    expect((await eve.get('/dashboard')).status).toBe(200);
    // Her other session began on the password alone: it ended when she enrolled.
    expect((await member.get('/dashboard')).headers.get('location')).toBe('/dashboard/sign-in');
    // Required: she cannot turn it off.
    const off = await eve.submit('/dashboard/security', '/dashboard/security/disable', { '/code': codeFor(eveSecret) });
    expect(off.status).toBe(422);
    expect(off.body).toContain('requires two-step verification of everyone');
  });

  it("an admin resets another user's factor (their sessions end; they enrol again at sign-in); not their own, and a member cannot", async () => {
    const eveId = await userIdOf(admin, 'eve@dora.test');
    const adminId = await userIdOf(admin, 'dora@dora.test');
    expect((await admin.get('/dashboard/team')).body).not.toContain(`/dashboard/team/users/${adminId}/mfa-reset`);
    const own = await admin.submit('/dashboard/team', `/dashboard/team/users/${adminId}/mfa-reset`, {});
    expect(own.status).toBe(422);
    nextStep();
    const { client: eve } = await signInWithPassword('eve@dora.test');
    expect((await eve.get('/dashboard')).headers.get('location')).toBe('/dashboard/sign-in/code');
    expect((await eve.submit('/dashboard/sign-in/code', `/dashboard/team/users/${adminId}/mfa-reset`, {})).status).toBe(303); // held at the code page
    const reset = await admin.submit('/dashboard/team', `/dashboard/team/users/${eveId}/mfa-reset`, {});
    expect(reset.headers.get('location')).toBe('/dashboard/team?done=mfa-reset');
    expect((await eve.get('/dashboard')).headers.get('location')).toBe('/dashboard/sign-in'); // her session ended
    const again = await signInWithPassword('eve@dora.test');
    expect((await again.client.get('/dashboard')).headers.get('location')).toBe('/dashboard/security');
    // With the requirement lifted, Eve (a member) reaches the pages again, but not a reset: 403.
    expect((await admin.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'false' })).headers.get('location')).toBe('/dashboard/team?done=mfa-optional');
    expect((await again.client.get('/dashboard')).status).toBe(200);
    expect((await again.client.submit('/dashboard', `/dashboard/team/users/${adminId}/mfa-reset`, {})).status).toBe(403);
    expect((await admin.get('/dashboard/team')).body).toMatch(/dora@dora\.test[\s\S]*?<td>\s*On/);
    expect(adminSecret).toMatch(/^[A-Z2-7]{32}$/);
  });
});

describe('self-service', () => {
  it('new recovery codes need a code and replace the old ones; turning it off needs a code and ends the other sessions', async () => {
    const { client: frank } = await signUpWith(app.baseUrl, { name: 'Frank Funding', email: 'frank@frank.test', password: PASSWORD });
    const { secret, recovery } = await enrol(frank);
    nextStep();
    const wrong = await frank.submit('/dashboard/security', '/dashboard/security/recovery-codes', { '/code': '123456' });
    expect(wrong.status).toBe(400);
    const fresh = await frank.submit('/dashboard/security', '/dashboard/security/recovery-codes', { '/code': codeFor(secret) });
    expect(fresh.status).toBe(200);
    const newCodes = recoveryCodesOf(fresh.body);
    expect(newCodes).toHaveLength(10);
    expect(newCodes).not.toContain(recovery[0]);
    nextMinute();
    const old = await signInWithPassword('frank@frank.test');
    expect((await sendCode(old.client, recovery[0]!)).status).toBe(401);
    expect((await sendCode(old.client, newCodes[0]!)).status).toBe(303);

    nextStep();
    const off = await frank.submit('/dashboard/security', '/dashboard/security/disable', { '/code': codeFor(secret) });
    expect(off.headers.get('location')).toBe('/dashboard/security?done=disabled');
    expect((await old.client.get('/dashboard')).headers.get('location')).toBe('/dashboard/sign-in');
    expect((await frank.get('/dashboard')).status).toBe(200);
    const plain = await signInWithPassword('frank@frank.test');
    expect(plain.answer.headers.get('location')).toBe('/dashboard');
  });

  it("the operator's `user reset-mfa --email` resets any user's (an account whose only admin lost phone and codes) and ends their sessions", async () => {
    const { client: gus } = await signUpWith(app.baseUrl, { name: 'Gus Mortgages', email: 'gus@gus.test', password: PASSWORD });
    await enrol(gus);
    expect(await runAdminCommand(app.ctx, 'user reset-mfa', { email: ' GUS@gus.test ' })).toMatchObject({ email: 'gus@gus.test' });
    expect((await gus.get('/dashboard')).headers.get('location')).toBe('/dashboard/sign-in');
    nextMinute();
    expect((await signInWithPassword('gus@gus.test')).answer.headers.get('location')).toBe('/dashboard');
    await expect(runAdminCommand(app.ctx, 'user reset-mfa', { email: 'nobody@gus.test' })).rejects.toThrow(AdminCommandError);
  });
});
