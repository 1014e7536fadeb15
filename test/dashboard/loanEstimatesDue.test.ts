/**
 * The desk's Loan Estimates due, over HTTP on each engine: a TRID application is listed with the
 * end of its third business day, soonest due first; it turns overdue when the test clock passes
 * that day (across Martin Luther King Day's weekend) while live, on real time, does not; delivered,
 * withdrawn or declined, it is gone; another account's and the other mode's applications never
 * show; members see the list as they see the desk; applicants' names are text; the list is bounded
 * with a count of the rest. The service's clock starts on Friday January 15, 2027, 10:00 in New
 * York, as in test/api/loanEstimates.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { createApplication } from '../../src/services/applications.ts';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { DashboardClient, signUpWith, type PageResponse } from './httpClient.ts';

type CreateBody = components['schemas']['ApplicationCreateRequest'];

const PASSWORD = 'correct horse battery staple';
const FRIDAY_BEFORE_MLK = Date.parse('2027-01-15T15:00:00.000Z');
const clock = manualClock(FRIDAY_BEFORE_MLK);
const VIEW = '/dashboard/applications?view=loan-estimates';

let app: TestApp;
let admin: DashboardClient;
let member: DashboardClient;
let live: ApiClient;
let test: ApiClient;

const ADDRESS = { street: '1 Main St', city: 'Springfield', state: 'IL' as const, zip: '62701' };
/** Every piece of a TRID application (1026.2(a)(3)(ii)) but the property address. */
const body = (name: string, creditScore = 742): CreateBody => ({
  applicant: { name, amount: 350000, email: 'applicant@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore },
  term: 30,
  propertyValue: 437500,
});

async function created(as: ApiClient, request: CreateBody): Promise<string> {
  const { data, response, error } = await as.POST('/v1/applications', { body: request });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!.mortgageId;
}
/** A TRID application from the start: its Loan Estimate clock runs from its creation. */
const trid = (as: ApiClient, name: string, creditScore?: number) => created(as, { ...body(name, creditScore), propertyAddress: ADDRESS });
const path = (mortgageId: string) => ({ params: { path: { mortgageId } } });
const advance = async (by: string) => expect((await test.POST('/v1/test/clock/advance', { body: { by } })).response.status).toBe(200);
const switchTo = async (client: DashboardClient, environment: 'live' | 'test') =>
  expect((await client.submit('/dashboard/applications', '/dashboard/environment', { environment, return: '/dashboard/applications' })).status).toBe(303);

interface Row {
  mortgageId: string;
  applicant: string;
  due: string;
  state: string;
}

/** The list's rows, in order. */
function rows(page: PageResponse): Row[] {
  expect(page.status).toBe(200);
  const found = page.body.matchAll(
    /<tr>\s*<td><a href="\/dashboard\/applications\/(mtg-[0-9a-z]{26})">\1<\/a><\/td>\s*<td>([^<]*)<\/td>\s*<td>[^<]*<\/td>\s*<td>(.*?)<\/td>\s*<td>(due|overdue)<\/td>\s*<\/tr>/g,
  );
  return [...found].map((m) => ({ mortgageId: m[1]!, applicant: m[2]!, due: m[3]!, state: m[4]! }));
}
const desk = async (client: DashboardClient = admin) => rows(await client.get(VIEW));
const ids = (list: Row[]) => list.map((row) => row.mortgageId);

beforeAll(async () => {
  app = await startTestApp({ clock });
  const signedUp = await signUpWith(app.baseUrl, { name: 'Estimate Lending', email: 'ana@estimates.test', password: PASSWORD });
  admin = signedUp.client;
  live = apiClient(app.baseUrl, signedUp.firstKey);
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'max@estimates.test', '/role': 'member' });
  const link = new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname;
  member = new DashboardClient(app.baseUrl);
  expect((await member.post(link, { '/password': 'another long passphrase' }, { csrfFrom: (await member.get(link)).body })).status).toBe(303);
  // Both users on the test data, where the test clock runs; a test key made there.
  await switchTo(admin, 'test');
  await switchTo(member, 'test');
  const key = /mos_test_[0-9A-Za-z]{38}/.exec((await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'Test intake', '/role': 'admin' })).body)?.[0];
  expect(key).toBeDefined();
  test = apiClient(app.baseUrl, key!);
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe("the desk's Loan Estimates due", () => {
  let friday: string;
  let saturday: string;

  it('lists a TRID application with the end of its third business day; one not yet complete is not listed', async () => {
    saturday = await created(test, body('Sam Saturday'));
    friday = await trid(test, 'Jane Doe');
    expect(await desk()).toEqual([{ mortgageId: friday, applicant: 'Jane Doe', due: 'end of 2027-01-20 (America/New_York)<br><small>2027-01-21 04:59:59 UTC</small>', state: 'due' }]);
    const tabs = (await admin.get(VIEW)).body;
    expect(tabs).toContain('<a href="/dashboard/applications?view=loan-estimates" aria-current="page">Loan Estimates due</a>');
    expect((await admin.get('/dashboard/applications')).body).toContain('<a href="/dashboard/applications?view=loan-estimates">Loan Estimates due</a>');
  });

  it('soonest due first, whatever the order the applications were made in', async () => {
    await advance('P1D'); // Saturday the 16th: Sunday and the holiday do not count, so due Thursday
    const { response } = await test.PATCH('/v1/applications/{mortgageId}', { ...path(saturday), body: { propertyAddress: ADDRESS } });
    expect(response.status).toBe(200);
    const list = await desk();
    expect(ids(list)).toEqual([friday, saturday]);
    expect(list[1]!.due).toContain('end of 2027-01-21 (America/New_York)');
  });

  it('overdue once the test clock passes the due day, not a moment before; the live desk, on real time, is not', async () => {
    const liveId = await trid(live, 'Liam Live');
    await advance('P4DT3H'); // Wednesday the 20th, 13:00 in New York
    expect((await desk()).map((row) => row.state)).toEqual(['due', 'due']);
    await advance('PT10H59M59S'); // 04:59:59Z on Thursday: the due day's last second in New York
    expect((await desk()).map((row) => row.state)).toEqual(['due', 'due']);
    await advance('PT1S');
    expect((await desk()).map((row) => [row.mortgageId, row.state])).toEqual([
      [friday, 'overdue'],
      [saturday, 'due'],
    ]);
    // Live was made at the same real time and is due at the same instant, but its clock has not moved.
    await switchTo(admin, 'live');
    try {
      expect((await desk()).map((row) => [row.mortgageId, row.state])).toEqual([[liveId, 'due']]);
    } finally {
      await switchTo(admin, 'test');
    }
  });

  it('delivered, it is gone', async () => {
    const { response, error } = await test.POST('/v1/applications/{mortgageId}/loan-estimate/delivered', { ...path(friday), body: { method: 'mail', deliveredAt: '2027-01-19T15:00:00.000Z' } });
    expect(response.status, JSON.stringify(error)).toBe(200);
    expect(ids(await desk())).toEqual([saturday]);
  });

  it('withdrawn or declined (by the rules or on the desk), it is gone; referred, it still owes one', async () => {
    const withdrawn = await trid(test, 'Wendy Withdrawn');
    const declined = await trid(test, 'Dana Declined', 500);
    const referred = await trid(test, 'Riley Referred', 600);
    expect(ids(await desk())).toEqual([saturday, withdrawn, declined, referred]);
    expect((await test.POST('/v1/applications/{mortgageId}/withdraw', path(withdrawn))).response.status).toBe(200);
    expect((await test.POST('/v1/applications/{mortgageId}/submit', path(declined))).data!.status).toBe('declined');
    expect((await test.POST('/v1/applications/{mortgageId}/submit', path(referred))).data!.status).toBe('referred');
    expect(ids(await desk())).toEqual([saturday, referred]);
    const page = await admin.get(`/dashboard/applications/${referred}`);
    expect((await admin.post(`/dashboard/applications/${referred}/decline`, { '/note': 'Score too low' }, { csrfFrom: page.body })).status).toBe(303);
    expect(ids(await desk())).toEqual([saturday]);
  });

  it("another account's applications, and this account's live ones, never show", async () => {
    const other = await app.newAccount('Other Lending');
    const strangers = [await trid(other.test, 'Olga Other'), await trid(other.client, 'Olga Other Live'), await trid(live, 'Liam Live Again')];
    const page = await admin.get(VIEW);
    expect(ids(rows(page))).toEqual([saturday]);
    for (const id of strangers) expect(page.body).not.toContain(id);
    expect(page.body).not.toContain('Olga');
    expect(page.body).not.toContain('Liam');
  });

  it('a member sees the list, as members see the whole desk (only its forms are for admins)', async () => {
    expect(await desk(member)).toEqual(await desk(admin));
    expect(ids(await desk(member))).toEqual([saturday]);
  });

  it("an applicant's name with markup is shown as text", async () => {
    const markup = '<script>window.__xss=1</script>"><img src=x onerror="window.__xss=1">';
    const id = await trid(test, `Eve ${markup}`);
    const page = await admin.get(VIEW);
    expect(ids(rows(page))).toContain(id);
    expect(page.body).not.toContain(markup);
    expect(page.body).not.toContain('<script>window');
    expect(page.body).toContain('Eve &lt;script&gt;window.__xss=1&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;');
  });
});

describe('a long list', () => {
  it('shows the soonest 100 and counts the rest', async () => {
    const busy = await signUpWith(app.baseUrl, { name: 'Busy Lending', email: 'ops@busy.test', password: PASSWORD });
    const { accountId } = (await (await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${busy.firstKey}` } })).json()) as { accountId: string };
    const made: string[] = [];
    for (let i = 0; i < 102; i++) {
      made.push((await createApplication(app.ctx, accountId, { ...body(`Applicant ${i}`), propertyAddress: ADDRESS })).mortgageId);
      clock.advance(1000); // all due the same instant: the tie goes to the id, which follows the time made
    }
    const page = await busy.client.get(VIEW);
    expect(ids(rows(page))).toEqual(made.slice(0, 100));
    expect(page.body).toContain('And 2 more, due no sooner than the last above.');
  });
});
