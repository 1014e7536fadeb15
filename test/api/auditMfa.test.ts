/**
 * The audit log of the dashboard's second factor (issue 27), against the real app on each engine,
 * with a manual clock so that TOTP codes of new steps can be made here: enrolment, failed codes (at
 * sign-in, step-up and enrolment; outcome failure), the sign-in completed by the code (and not
 * before), recovery codes used and regenerated, turning it off, an admin's and the operator's
 * reset, and the account's requirement — each exactly one entry with the user as actor and target.
 * No TOTP secret and no recovery code ever appears in an entry.
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/commands.ts';
import type { components } from '../../generated/api.d.ts';
import { startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { DashboardClient, signUpWith, type PageResponse } from '../dashboard/httpClient.ts';

type AuditEvent = components['schemas']['AuditEvent'];

const PASSWORD = 'correct horse battery staple';
const clock = manualClock(Date.parse('2026-11-02T09:00:15Z'));
let app: TestApp;
let api: ApiClient;
let alice: DashboardClient;
let aliceId: string;
let aliceSecret: string;
let aliceRecovery: string[] = [];
/** Every TOTP secret and recovery code the tests are shown: none may appear in any entry. */
const secrets: string[] = [];

const codeFor = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: clock.now().getTime() });
const nextStep = () => clock.advance(30_000);
const nextMinute = () => clock.advance(60_000);
const secretOf = (html: string) => /id="mfa-secret">([A-Z2-7]+)</.exec(html)?.[1];
const recoveryCodesOf = (html: string) => [...(/<ol id="recovery-codes"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? '').matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!);

async function audit(query: Record<string, string | number> = {}): Promise<AuditEvent[]> {
  const { data, error, response } = await api.GET('/v1/audit-events', { params: { query: { limit: 100, ...query } as never } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!.data;
}

/** Runs `act` and returns the one entry of `action` it added (failing unless exactly one). */
async function exactlyOne(action: string, act: () => Promise<unknown>): Promise<AuditEvent> {
  const before = await audit({ action });
  await act();
  const after = await audit({ action });
  expect(after.length - before.length, `${action} entries added`).toBe(1);
  return after[0]!;
}

/** Enrols the signed-in client; returns the secret and the recovery codes (kept for the secret scan). */
async function enrol(client: DashboardClient): Promise<{ secret: string; recovery: string[] }> {
  await client.submit('/dashboard/security', '/dashboard/security/enrol', {});
  const page = await client.get('/dashboard/security');
  const secret = secretOf(page.body)!;
  const confirmed = await client.post('/dashboard/security/enrol/confirm', { '/code': codeFor(secret) }, { csrfFrom: page.body });
  expect(confirmed.status, confirmed.body.slice(0, 300)).toBe(200);
  const recovery = recoveryCodesOf(confirmed.body);
  secrets.push(secret, ...recovery);
  return { secret, recovery };
}

async function signInWithPassword(email: string): Promise<DashboardClient> {
  const client = new DashboardClient(app.baseUrl);
  const answer = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': email, '/password': PASSWORD });
  expect(answer.headers.get('location')).toBe('/dashboard/sign-in/code');
  return client;
}

const sendCode = (client: DashboardClient, code: string): Promise<PageResponse> => client.submit('/dashboard/sign-in/code', '/dashboard/sign-in/code', { '/code': code });

const aliceActor = () => ({ type: 'user', id: aliceId, name: 'alice@mfa-audit.test' });
const aliceTarget = () => ({ type: 'user', id: aliceId });

beforeAll(async () => {
  app = await startTestApp({ clock, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0' } });
  const signedUp = await signUpWith(app.baseUrl, { name: 'Alice Audit Lending', email: 'alice@mfa-audit.test', password: PASSWORD });
  alice = signedUp.client;
  api = app.clientFor(signedUp.firstKey);
  secrets.push(signedUp.firstKey);
  aliceId = (await audit({ action: 'account.created' }))[0]!.actor.id!;
}, 120_000);
afterAll(() => app?.close());

describe('the second factor in the audit log', () => {
  it('records a wrong first code at enrolment (failure), then the enrolment, with the user as actor and target', async () => {
    await alice.submit('/dashboard/security', '/dashboard/security/enrol', {});
    const page = await alice.get('/dashboard/security');
    const failed = await exactlyOne('mfa.failed', async () => {
      const wrong = await alice.post('/dashboard/security/enrol/confirm', { '/code': '000000' }, { csrfFrom: page.body });
      expect(wrong.status).toBe(400);
    });
    expect(failed).toMatchObject({ outcome: 'failure', actor: aliceActor(), target: aliceTarget(), change: { before: null, after: { purpose: 'enrolment', reason: 'wrong' } } });
    expect(failed.clientAddress).toMatch(/127\.0\.0\.1/);
    let enrolled: { secret: string; recovery: string[] } = { secret: '', recovery: [] };
    const entry = await exactlyOne('mfa.enrolled', async () => {
      enrolled = await enrol(alice);
    });
    ({ secret: aliceSecret, recovery: aliceRecovery } = enrolled);
    expect(entry).toMatchObject({ outcome: 'success', actor: aliceActor(), target: aliceTarget(), change: null });
    expect(entry.userAgent).not.toBeNull();
  });

  it('records the sign-in when the code is given, not at the password; a wrong and a replayed code are failures', async () => {
    nextStep();
    const signedInBefore = (await audit({ action: 'user.signedIn' })).length;
    const client = await signInWithPassword('alice@mfa-audit.test');
    expect((await audit({ action: 'user.signedIn' })).length).toBe(signedInBefore);
    const wrong = await exactlyOne('mfa.failed', async () => expect((await sendCode(client, '000000')).status).toBe(401));
    expect(wrong).toMatchObject({ outcome: 'failure', actor: aliceActor(), target: aliceTarget(), change: { after: { purpose: 'signIn', reason: 'wrong' } } });
    const code = codeFor(aliceSecret);
    const signedIn = await exactlyOne('user.signedIn', async () => expect((await sendCode(client, code)).headers.get('location')).toBe('/dashboard'));
    expect(signedIn).toMatchObject({ outcome: 'success', actor: aliceActor(), target: aliceTarget(), change: { after: { secondFactor: 'totp' } } });
    // The same code again, in another sign-in: replayed, and no sign-in recorded.
    const other = await signInWithPassword('alice@mfa-audit.test');
    const replayed = await exactlyOne('mfa.failed', async () => expect((await sendCode(other, code)).status).toBe(401));
    expect(replayed.change).toEqual({ before: null, after: { purpose: 'signIn', reason: 'replayed' } });
    expect((await audit({ action: 'user.signedIn' })).length).toBe(signedInBefore + 1);
    nextMinute();
  });

  it('records a recovery code used to sign in (and the sign-in), a wrong code for new recovery codes (failure), then new recovery codes', async () => {
    const client = await signInWithPassword('alice@mfa-audit.test');
    let signedIn: AuditEvent | undefined;
    const used = await exactlyOne('mfa.recoveryCodeUsed', async () => {
      signedIn = await exactlyOne('user.signedIn', async () => expect((await sendCode(client, aliceRecovery[0]!)).headers.get('location')).toBe('/dashboard'));
    });
    expect(used).toMatchObject({ actor: aliceActor(), target: aliceTarget(), change: { after: { purpose: 'signIn' } } });
    expect(signedIn!.change).toEqual({ before: null, after: { secondFactor: 'recovery_code' } });
    nextStep();
    const refused = await exactlyOne('mfa.failed', async () => expect((await client.submit('/dashboard/security', '/dashboard/security/recovery-codes', { '/code': '000000' })).status).toBe(400));
    expect(refused).toMatchObject({ outcome: 'failure', actor: aliceActor(), change: { after: { purpose: 'recoveryCodes', reason: 'wrong' } } });
    const regenerated = await exactlyOne('mfa.recoveryCodesRegenerated', async () => {
      const page = await client.submit('/dashboard/security', '/dashboard/security/recovery-codes', { '/code': codeFor(aliceSecret) });
      expect(page.status).toBe(200);
      secrets.push(...recoveryCodesOf(page.body));
    });
    expect(regenerated).toMatchObject({ actor: aliceActor(), target: aliceTarget(), change: null });
    alice = client;
  });

  it('records a wrong code at step-up (failure), and the requirement changed with before and after', async () => {
    clock.advance(10 * 60_000 + 1_000);
    const asked = await alice.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'true' });
    expect(asked.status).toBe(401);
    const failed = await exactlyOne('mfa.failed', async () => expect((await alice.post('/dashboard/team/mfa-requirement', { '/required': 'true', _code: '000000' }, { csrfFrom: asked.body })).status).toBe(401));
    expect(failed).toMatchObject({ outcome: 'failure', actor: aliceActor(), change: { after: { purpose: 'stepUp', reason: 'wrong' } } });
    nextStep();
    const required = await exactlyOne('account.mfaRequirementChanged', async () => {
      const ran = await alice.post('/dashboard/team/mfa-requirement', { '/required': 'true', _code: codeFor(aliceSecret) }, { csrfFrom: asked.body });
      expect(ran.headers.get('location')).toBe('/dashboard/team?done=mfa-required');
    });
    expect(required).toMatchObject({ actor: aliceActor(), target: { type: 'account' }, change: { before: { mfaRequired: false }, after: { mfaRequired: true } } });
    // Requiring it again changes nothing and records nothing.
    await alice.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'true' });
    expect((await audit({ action: 'account.mfaRequirementChanged' })).length).toBe(1);
    const optional = await exactlyOne('account.mfaRequirementChanged', () => alice.submit('/dashboard/team', '/dashboard/team/mfa-requirement', { '/required': 'false' }));
    expect(optional.change).toEqual({ before: { mfaRequired: true }, after: { mfaRequired: false } });
    nextMinute();
  });

  it("records an admin's reset of another user's factor (actor the admin, target the user), and the operator's", async () => {
    const invited = await alice.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'bob@mfa-audit.test', '/role': 'member' });
    const path = new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname;
    const bob = new DashboardClient(app.baseUrl);
    expect((await bob.submit(path, path, { '/password': PASSWORD })).status).toBe(303);
    const bobEnrolled = await exactlyOne('mfa.enrolled', () => enrol(bob));
    const bobId = bobEnrolled.target.id!;
    expect(bobEnrolled.actor).toEqual({ type: 'user', id: bobId, name: 'bob@mfa-audit.test' });
    const reset = await exactlyOne('mfa.reset', async () => {
      const page = await alice.submit('/dashboard/team', `/dashboard/team/users/${bobId}/mfa-reset`, {});
      expect(page.headers.get('location')).toBe('/dashboard/team?done=mfa-reset');
    });
    expect(reset).toMatchObject({ actor: aliceActor(), target: { type: 'user', id: bobId }, change: { after: { email: 'bob@mfa-audit.test' } } });

    const byOperator = await exactlyOne('mfa.reset', () => runAdminCommand(app.ctx, 'user reset-mfa', { email: 'alice@mfa-audit.test' }));
    expect(byOperator).toMatchObject({ actor: { type: 'cli', id: null, name: null }, target: aliceTarget(), clientAddress: null });
  });

  it('records the user turning their factor off', async () => {
    const client = new DashboardClient(app.baseUrl);
    await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': 'alice@mfa-audit.test', '/password': PASSWORD });
    const { secret } = await enrol(client);
    nextStep();
    const failed = await exactlyOne('mfa.failed', async () => expect((await client.submit('/dashboard/security', '/dashboard/security/disable', { '/code': '000000' })).status).toBe(400));
    expect(failed).toMatchObject({ outcome: 'failure', actor: aliceActor(), change: { after: { purpose: 'disable', reason: 'wrong' } } });
    expect((await audit({ action: 'mfa.disabled' })).length).toBe(0);
    const disabled = await exactlyOne('mfa.disabled', async () => {
      const off = await client.submit('/dashboard/security', '/dashboard/security/disable', { '/code': codeFor(secret) });
      expect(off.headers.get('location')).toBe('/dashboard/security?done=disabled');
    });
    expect(disabled).toMatchObject({ actor: aliceActor(), target: aliceTarget(), outcome: 'success' });
  });

  it('holds no TOTP secret and no recovery code (nor an otpauth URI) in any entry', async () => {
    const rows = await app.ctx.store.read((db) => db.all<Record<string, unknown>>('SELECT * FROM audit_events'));
    let text = JSON.stringify(rows);
    const exported = await app.fetch('/v1/audit-events/export?format=ndjson', { headers: { Authorization: `Bearer ${secrets[0]}` } });
    expect(exported.status).toBe(200);
    text += await exported.text();
    expect(rows.length).toBeGreaterThan(15);
    expect(secrets.filter((s) => /^[A-Z2-7]{32}$/.test(s)).length).toBe(3);
    expect(secrets.filter((s) => s.includes('-') && !s.startsWith('mos_')).length).toBe(40);
    for (const secret of secrets) {
      expect(text, `a secret (${secret.slice(0, 6)}…) in the audit log`).not.toContain(secret);
      expect(text).not.toContain(secret.replaceAll('-', ''));
    }
    expect(text).not.toMatch(/otpauth:/);
  });
});
