/**
 * The underwriter's desk over HTTP: search by name, email or id and filters by status,
 * condition state and rate-lock state; the "needs a decision" queue, oldest first; approve (with a condition of the
 * reviewer's own) and decline with a required reason; satisfy and waive an open condition; a
 * member sees the desk without its forms and gets 403 on each; the overview's pipeline with its
 * server-rendered chart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { DashboardClient, signUpWith, type PageResponse } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
const clock = manualClock(Date.parse('2026-11-21T12:00:00.000Z'));
let app: TestApp;
let admin: DashboardClient;
let api: ApiClient;
let max: DashboardClient;

function shown(page: PageResponse, id: string): string {
  const m = new RegExp(`id="${id}">([^<]+)<`).exec(page.body);
  if (!m) throw new Error(`no #${id} on the page`);
  return m[1]!;
}

const APPROVABLE = {
  applicant: { name: 'Avery Approved', amount: 300000, email: 'avery@example.test', annualIncome: 120000, monthlyDebts: 500, creditScore: 760 },
  term: 30,
  propertyValue: 400000,
};
const referrable = (name: string, email: string) => ({ ...APPROVABLE, applicant: { ...APPROVABLE.applicant, name, email, creditScore: 600 } });

async function submitted(body: typeof APPROVABLE): Promise<string> {
  const { data } = await api.POST('/v1/applications', { body });
  await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
  return data!.mortgageId;
}

/** The application ids linked from a list page, in order. */
const listed = (page: PageResponse) => [...page.body.matchAll(/<a href="\/dashboard\/applications\/(mtg-[0-9a-z]{26})">/g)].map((m) => m[1]);

let referredFirst: string;
let referredSecond: string;
let approvedId: string;

beforeAll(async () => {
  app = await startTestApp({ clock });
  const signedUp = await signUpWith(app.baseUrl, { name: 'Desk Lending', email: 'ana@desk.test', password: PASSWORD });
  admin = signedUp.client;
  api = apiClient(app.baseUrl, signedUp.firstKey);
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'max@desk.test', '/role': 'member' });
  const link = new URL(shown(invited, 'invitation-link')).pathname;
  max = new DashboardClient(app.baseUrl);
  expect((await max.post(link, { '/password': 'another long passphrase' }, { csrfFrom: (await max.get(link)).body })).status).toBe(303);
  referredFirst = await submitted(referrable('Riley Referred', 'riley@example.test'));
  clock.advance(60_000);
  approvedId = await submitted(APPROVABLE);
  clock.advance(60_000);
  referredSecond = await submitted(referrable('Quinn Queue', 'quinn@queue.test'));
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe('the applications list', () => {
  it('searches by applicant name, email or id, case-insensitively', async () => {
    expect(listed(await admin.get('/dashboard/applications?q=riley'))).toEqual([referredFirst]);
    expect(listed(await admin.get('/dashboard/applications?q=QUEUE.TEST'))).toEqual([referredSecond]);
    expect(listed(await admin.get(`/dashboard/applications?q=${approvedId}`))).toEqual([approvedId]);
    expect(listed(await admin.get('/dashboard/applications?q=%25'))).toEqual([]);
    expect(listed(await admin.get('/dashboard/applications'))).toEqual([referredSecond, approvedId, referredFirst]);
  });

  it('filters by status and by condition state; unknown filter values are ignored', async () => {
    expect(listed(await admin.get('/dashboard/applications?status=referred'))).toEqual([referredSecond, referredFirst]);
    expect(listed(await admin.get('/dashboard/applications?conditions=open'))).toEqual([approvedId]);
    expect(listed(await admin.get('/dashboard/applications?conditions=cleared'))).toEqual([]);
    expect(listed(await admin.get('/dashboard/applications?status=nonsense&conditions=nonsense'))).toHaveLength(3);
  });

  it('filters by rate-lock state: an active lock, or none (a cancelled lock counts as none)', async () => {
    const { data: quote } = await api.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
    const { data: held } = await api.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30, mortgageId: approvedId } });
    const locked = await admin.get('/dashboard/applications?lock=active');
    expect(listed(locked)).toEqual([approvedId]);
    expect(locked.body).toContain(`until ${held!.expiresAt.slice(0, 10)}`);
    expect(listed(await admin.get('/dashboard/applications?lock=none'))).toEqual([referredSecond, referredFirst]);
    expect(listed(await admin.get('/dashboard/applications?lock=active&status=referred'))).toEqual([]);
    expect(listed(await admin.get('/dashboard/applications?lock=nonsense'))).toHaveLength(3);
    await api.POST('/v1/rate-locks/{lockId}/cancel', { params: { path: { lockId: held!.lockId } } });
    expect(listed(await admin.get('/dashboard/applications?lock=active'))).toEqual([]);
    expect(listed(await admin.get('/dashboard/applications?lock=none'))).toEqual([referredSecond, approvedId, referredFirst]);
  });

  it('the needs-a-decision queue lists referred applications, the longest waiting first', async () => {
    const queue = await admin.get('/dashboard/applications?view=queue');
    expect(queue.status).toBe(200);
    expect(listed(queue)).toEqual([referredFirst, referredSecond]);
  });
});

describe('the desk on an application', () => {
  it('a decision without a reason is refused beside the form, and nothing changes', async () => {
    const page = await admin.get(`/dashboard/applications/${referredFirst}`);
    const refused = await admin.post(`/dashboard/applications/${referredFirst}/decline`, { '/note': '' }, { csrfFrom: page.body });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('is required');
    expect((await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: referredFirst } } })).data!.status).toBe('referred');
  });

  it('a member sees no review form and gets 403 on each form', async () => {
    const page = await max.get(`/dashboard/applications/${referredFirst}`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(`/dashboard/applications/${referredFirst}/approve`);
    for (const action of ['approve', 'decline']) {
      expect((await max.post(`/dashboard/applications/${referredFirst}/${action}`, { '/note': 'Member tries' }, { csrfFrom: page.body })).status).toBe(403);
    }
  });

  it('approve with a reason and a condition of the reviewer: approved by the user, the condition attached', async () => {
    const page = await admin.get(`/dashboard/applications/${referredFirst}`);
    expect(page.body).toContain(`action="/dashboard/applications/${referredFirst}/approve"`);
    expect(page.body).toContain(`action="/dashboard/applications/${referredFirst}/decline"`);
    const approved = await admin.post(
      `/dashboard/applications/${referredFirst}/approve`,
      { '/note': 'Verified bonus income', '/conditions/0/type': 'custom', '/conditions/0/description': 'Employer letter', '/conditions/0/dueBefore': 'closing' },
      { csrfFrom: page.body },
    );
    expect(approved.status).toBe(303);
    const { data } = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: referredFirst } } });
    expect(data!.status).toBe('approved');
    expect(data!.decision).toMatchObject({ decidedBy: 'reviewer', note: 'Verified bonus income' });
    expect(data!.decision!.reviewerUserId).toMatch(/^usr-/);
    expect(data!.conditions.map((c) => [c.type, c.addedBy])).toEqual([
      ['income_proof', 'underwriting_rules'],
      ['bank_account_verified', 'underwriting_rules'],
      ['property_appraisal', 'underwriting_rules'],
      ['custom', 'underwriter'],
    ]);
    expect(listed(await admin.get('/dashboard/applications?view=queue'))).toEqual([referredSecond]);
  });

  it('decline with a reason', async () => {
    const page = await admin.get(`/dashboard/applications/${referredSecond}`);
    expect((await admin.post(`/dashboard/applications/${referredSecond}/decline`, { '/note': 'Score too low' }, { csrfFrom: page.body })).status).toBe(303);
    const { data } = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: referredSecond } } });
    expect(data!.decision).toMatchObject({ outcome: 'declined', note: 'Score too low' });
  });

  it('satisfies and waives open conditions with a note, and adds one; the last closing one clears the application to close', async () => {
    const { data } = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: approvedId } } });
    let page = await admin.get(`/dashboard/applications/${approvedId}`);
    const [first, ...rest] = data!.conditions;
    const blank = await admin.post(`/dashboard/applications/${approvedId}/conditions/${first!.conditionId}/satisfy`, { '/note': ' ' }, { csrfFrom: page.body });
    expect(blank.status).toBe(400);
    expect((await admin.post(`/dashboard/applications/${approvedId}/conditions/${first!.conditionId}/satisfy`, { '/note': 'Pay stubs seen' }, { csrfFrom: page.body })).status).toBe(303);
    for (const c of rest) {
      page = await admin.get(`/dashboard/applications/${approvedId}`);
      expect((await admin.post(`/dashboard/applications/${approvedId}/conditions/${c.conditionId}/waive`, { '/note': 'Not needed' }, { csrfFrom: page.body })).status).toBe(303);
    }
    page = await admin.get(`/dashboard/applications/${approvedId}`);
    expect(page.body).toContain('clear_to_close');
    const added = await admin.post(`/dashboard/applications/${approvedId}/conditions`, { '/type': 'custom', '/description': 'Signed disclosure', '/dueBefore': 'closing' }, { csrfFrom: page.body });
    expect(added.status).toBe(400); // a closing condition once clear to close
    expect(added.body).toContain('already clear to close');
    expect((await admin.post(`/dashboard/applications/${approvedId}/conditions`, { '/type': 'custom', '/description': 'Signed disclosure', '/dueBefore': 'funding' }, { csrfFrom: page.body })).status).toBe(303);
    const after = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: approvedId } } });
    expect(after.data!.status).toBe('clear_to_close');
    expect(after.data!.conditions.map((c) => c.status)).toEqual(['satisfied', 'waived', 'waived', 'open']);
    expect(after.data!.conditions[0]!.satisfiedBy).toMatchObject({ kind: 'underwriter', note: 'Pay stubs seen' });
    expect(after.data!.conditions[0]!.satisfiedBy!.actor).toMatch(/^usr-/);
  });

  it("records the desk's decisions and condition changes in the audit log with the user, not the service, as actor", async () => {
    const entries = async (action: string) => {
      const { data } = await api.GET('/v1/audit-events', { params: { query: { action, limit: 100 } } });
      return data!.data;
    };
    const ana = { type: 'user', name: 'ana@desk.test' };
    const [approved, ...moreApproved] = await entries('application.approved');
    expect(moreApproved).toEqual([]);
    expect(approved).toMatchObject({ actor: ana, target: { type: 'application', id: referredFirst }, change: { before: { status: 'referred' }, after: { status: 'approved', note: 'Verified bonus income' } } });
    expect((approved!.change as { after: { conditions: Array<{ type: string; addedBy: string }> } }).after.conditions.map((c) => [c.type, c.addedBy])).toContainEqual(['custom', 'underwriter']);
    const declined = await entries('application.declined');
    expect(declined).toHaveLength(1);
    expect(declined[0]).toMatchObject({ actor: ana, target: { type: 'application', id: referredSecond } });
    const satisfied = await entries('condition.satisfied');
    expect(satisfied).toHaveLength(1);
    expect(satisfied[0]).toMatchObject({ actor: ana, target: { type: 'application', id: approvedId }, change: { after: { status: 'satisfied', note: 'Pay stubs seen' } } });
    const waived = await entries('condition.waived');
    expect(waived).toHaveLength(2);
    // The newest waiver cleared the application to close.
    expect(waived[0]).toMatchObject({ actor: ana, change: { after: { status: 'waived', applicationStatus: 'clear_to_close' } } });
    const added = await entries('condition.added');
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ actor: ana, target: { type: 'application', id: approvedId }, change: { after: { type: 'custom', dueBefore: 'funding' } } });
    expect(added[0]!.actor.id).toMatch(/^usr-/);
  });
});

describe('the overview', () => {
  it('shows applications by status, decisions per day as an SVG chart, and the webhook delivery success rate', async () => {
    const page = await admin.get('/dashboard');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<svg');
    expect(page.body).not.toMatch(/<script(?![^>]*src=)/);
    expect(page.body).not.toMatch(/ style="/);
    // Three decisions today (the approval at submission, the two reviews), one bar segment per outcome of the day.
    expect(page.body).toMatch(/<title>11-21: 2 approved<\/title>/);
    expect(page.body).toMatch(/<title>11-21: 1 declined<\/title>/);
    expect(page.body).toMatch(/id="count-clear_to_close">1</);
    expect(page.body).toMatch(/id="count-approved">1</);
    expect(page.body).toContain('No webhook delivery attempts in the last 30 days');
  });
});
