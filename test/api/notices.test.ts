/**
 * Adverse action notices over HTTP, on each engine: made at a decline (automatic or a reviewer's,
 * with reasons chosen or derived), listed, downloaded as PDF and HTML (the PDF read back with
 * pdf-lib: reasons, score disclosure, lender's address), the due event at once and the reminder
 * when the test clock passes 25 days, delivery recorded by admins only, other accounts and modes
 * 404, hostile input refused, and the applicant's demographics never in a notice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { updateLender } from '../../src/services/lender.ts';
import { noticesDue } from '../../src/services/notices.ts';
import { pdfText } from '../helpers/pdfText.ts';
import { startTestApp, type ApiClient, type TestAccount, type TestApp } from '../helpers/testApp.ts';

type CreateBody = components['schemas']['ApplicationCreateRequest'];

let app: TestApp;
let account: TestAccount;

const FTC = 'Federal Trade Commission, Consumer Response Center, 600 Pennsylvania Avenue NW, Washington, DC 20580';
const LENDER = { name: 'Harbor Lending <LLC> & Co', street: '500 Market Street, Suite 300', city: 'San Francisco', state: 'CA', zip: '94105', ecoaAgency: FTC };

beforeAll(async () => {
  app = await startTestApp();
  account = await app.newAccount();
  await updateLender(app.ctx, account.accountId, LENDER);
});
afterAll(() => app?.close());

const DEMOGRAPHICS = { ethnicity: ['puerto_rican'], race: ['guamanian_or_chamorro', 'samoan'], sex: 'male_and_female', age: 117, collectedOnVisualObservation: true } as const;
const MARKERS = ['guamanian', 'samoan', 'puerto_rican', 'male_and_female', 'Puerto', 'Samoan', 'Guamanian'];

/** Declined at submission: DTI 71 % and score 500 (both beyond referral), with demographics given. */
const DECLINABLE: CreateBody = {
  applicant: { name: 'Dana Declined', amount: 350000, annualIncome: 60000, monthlyDebts: 1500, creditScore: 500 },
  term: 30,
  propertyValue: 450000,
  demographics: { ...DEMOGRAPHICS, ethnicity: [...DEMOGRAPHICS.ethnicity], race: [...DEMOGRAPHICS.race] },
};
/** Referred at submission: score 600 (near miss), everything else passes. */
const REFERRABLE: CreateBody = {
  applicant: { name: 'Riley Referred', amount: 350000, annualIncome: 120000, monthlyDebts: 650, creditScore: 600 },
  term: 30,
  propertyValue: 450000,
};

const path = (mortgageId: string) => ({ params: { path: { mortgageId } } });
const notePath = (mortgageId: string, noticeId: string) => ({ params: { path: { mortgageId, noticeId } } });

async function declined(as: ApiClient, body: CreateBody = DECLINABLE) {
  const created = await as.POST('/v1/applications', { body });
  const { data } = await as.POST('/v1/applications/{mortgageId}/submit', path(created.data!.mortgageId));
  expect(data!.status).toBe('declined');
  const { data: list } = await as.GET('/v1/applications/{mortgageId}/notices', path(data!.mortgageId));
  expect(list!.data).toHaveLength(1);
  return { application: data!, notice: list!.data[0]! };
}

async function referred(as: ApiClient) {
  const created = await as.POST('/v1/applications', { body: REFERRABLE });
  const { data } = await as.POST('/v1/applications/{mortgageId}/submit', path(created.data!.mortgageId));
  expect(data!.status).toBe('referred');
  return data!;
}

async function file(key: string, mortgageId: string, noticeId: string, format: 'pdf' | 'html' = 'pdf') {
  return app.fetch(`/v1/applications/${mortgageId}/notices/${noticeId}/content?format=${format}`, { headers: { Authorization: `Bearer ${key}` } });
}

describe('listNotices', () => {
  it('an automatic decline makes one notice: due in 30 days, the reasons mapped, the score disclosed, the lender named', async () => {
    const { application, notice } = await declined(account.client);
    expect(notice).toMatchObject({
      mortgageId: application.mortgageId,
      type: 'adverse_action',
      status: 'due',
      action: 'declined',
      reasons: [
        { code: 'excessive_obligations', text: 'Excessive obligations in relation to income' },
        { code: 'credit_score', text: 'Credit score' },
      ],
      creditScoreDisclosure: { score: 500, rangeLow: 300, rangeHigh: 850, keyFactors: [], scoredAt: null, source: null },
      lender: { name: LENDER.name, address: { street: LENDER.street, city: LENDER.city, state: 'CA', zip: '94105' }, ecoaAgency: FTC },
      decidedAt: application.decision!.decidedAt,
      delivery: null,
      livemode: true,
    });
    expect(Date.parse(notice.dueAt) - Date.parse(notice.decidedAt)).toBe(30 * 86_400_000);
    expect(notice.noticeId).toMatch(/^ntc-[0-9a-z]{26}$/);
  });

  it('an application that was never declined has none; an approval or a referral makes none', async () => {
    const app2 = await referred(account.client);
    expect((await account.client.GET('/v1/applications/{mortgageId}/notices', path(app2.mortgageId))).data!.data).toEqual([]);
  });

  it("another account's application, and a live one asked for with a test key, are 404", async () => {
    const { application } = await declined(account.client);
    const other = await app.newAccount('Other Lending');
    expect((await other.client.GET('/v1/applications/{mortgageId}/notices', path(application.mortgageId))).response.status).toBe(404);
    expect((await account.test.GET('/v1/applications/{mortgageId}/notices', path(application.mortgageId))).response.status).toBe(404);
  });
});

describe('declineApplication: the reviewer picks the reasons, or they are derived', () => {
  it("a reviewer's reasons, in their order, are the notice's", async () => {
    const app2 = await referred(account.client);
    const { response } = await account.client.POST('/v1/applications/{mortgageId}/decline', { ...path(app2.mortgageId), body: { note: 'Income not verified', reasons: ['unverifiable_income', 'excessive_obligations'] } });
    expect(response.status).toBe(200);
    const notice = (await account.client.GET('/v1/applications/{mortgageId}/notices', path(app2.mortgageId))).data!.data[0]!;
    expect(notice.reasons).toEqual([
      { code: 'unverifiable_income', text: 'Unable to verify income' },
      { code: 'excessive_obligations', text: 'Excessive obligations in relation to income' },
    ]);
    // The score was used by the decision even though the reviewer did not name it.
    expect(notice.creditScoreDisclosure).toMatchObject({ score: 600 });
  });

  it("without reasons, the rules' failed reasons (the near-miss score) are given", async () => {
    const app2 = await referred(account.client);
    await account.client.POST('/v1/applications/{mortgageId}/decline', { ...path(app2.mortgageId), body: {} });
    expect((await account.client.GET('/v1/applications/{mortgageId}/notices', path(app2.mortgageId))).data!.data[0]!.reasons).toEqual([{ code: 'credit_score', text: 'Credit score' }]);
  });

  it.each([
    ['an unknown code', ['bad_vibes']],
    ['five reasons', ['bankruptcy', 'credit_score', 'no_credit_file', 'temporary_residence', 'unverifiable_income']],
    ['none', []],
    ['a code twice', ['credit_score', 'credit_score']],
    ['free text', ['Other: we just do not like it']],
  ])('refuses %s (400) and leaves the application referred with no notice', async (_what, reasons) => {
    const app2 = await referred(account.client);
    const { response } = await account.client.POST('/v1/applications/{mortgageId}/decline', { ...path(app2.mortgageId), body: { reasons } as never });
    expect(response.status).toBe(400);
    expect((await account.client.GET('/v1/applications/{mortgageId}', path(app2.mortgageId))).data!.status).toBe('referred');
    expect((await account.client.GET('/v1/applications/{mortgageId}/notices', path(app2.mortgageId))).data!.data).toEqual([]);
  });
});

describe('downloadNotice', () => {
  it('the PDF opens with pdf-lib and draws the reasons, the score disclosure, the lender and the ECOA notice', async () => {
    const { application, notice } = await declined(account.client);
    const response = await file(account.apiKey, application.mortgageId, notice.noticeId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${notice.noticeId}.pdf"`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const { text, pages, doc } = await pdfText(bytes);
    expect(pages).toBeGreaterThanOrEqual(1);
    expect(doc.getTitle()).toBe(`Notice of action taken: ${application.mortgageId}`);
    for (const expected of [
      'Excessive obligations in relation to income',
      'Credit score',
      'Your credit score: 500',
      'Scores range from a low of 300 to a high of 850.',
      'Key factors that adversely affected your credit score',
      'Harbor Lending <LLC> & Co',
      '500 Market Street, Suite 300',
      'San Francisco, CA 94105',
      'Dana Declined',
      'The Federal Equal Credit Opportunity Act prohibits creditors from discriminating',
      `The Federal agency that administers compliance with this law concerning this creditor is ${FTC}.`,
    ]) {
      expect(text.replace(/\s+/g, ' '), expected).toContain(expected);
    }
    // The same bytes each time: the file as it was made.
    expect(new Uint8Array(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer())).toEqual(bytes);
  });

  it('a lender that has not stated its ECOA agency: null in the notice, and the statement says it is not set (never a guessed agency)', async () => {
    const other = await app.newAccount('Unset Lending');
    const { notice } = await declined(other.client);
    expect(notice.lender).toEqual({ name: 'Unset Lending', address: null, ecoaAgency: null });
    const html = await (await file(other.apiKey, notice.mortgageId, notice.noticeId, 'html')).text();
    expect(html).toContain("concerning this creditor is not set: the lender names it in the dashboard&#39;s settings.");
    expect(html).not.toContain('Bureau of Consumer Financial Protection');
  });

  it('the PDF is rendered from the stored notice at its first download and kept: the same bytes every time, and again if rendered anew', async () => {
    const { application, notice } = await declined(account.client);
    const stored = async () =>
      (await app.ctx.store.read((db) => db.get<{ pdf_base64: string }>('SELECT pdf_base64 FROM adverse_action_notices WHERE id = ?', [notice.noticeId])))!.pdf_base64;
    expect(await stored()).toBe(''); // the decline's transaction did not render it
    const first = new Uint8Array(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer());
    expect(Buffer.from(first).toString('base64')).toBe(await stored());
    expect(new Uint8Array(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer())).toEqual(first);
    // Rendered again from the same stored notice (the column emptied), the bytes are the same.
    await app.ctx.store.transaction((tx) => tx.run("UPDATE adverse_action_notices SET pdf_base64 = '' WHERE id = ?", [notice.noticeId]));
    expect(new Uint8Array(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer())).toEqual(first);
  });

  it('the HTML has the same content with every value escaped, and a sandboxing CSP', async () => {
    const { application, notice } = await declined(account.client);
    const response = await file(account.apiKey, application.mortgageId, notice.noticeId, 'html');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain('sandbox');
    const html = await response.text();
    expect(html).toContain('Harbor Lending &lt;LLC&gt; &amp; Co');
    expect(html).not.toContain('<LLC>');
    expect(html).toContain('<li>Excessive obligations in relation to income</li>');
    expect(html).toContain('Your credit score: 500');
  });

  it('a name the standard font cannot draw is "?" in the PDF and whole in the HTML', async () => {
    const { application, notice } = await declined(account.client, { ...DECLINABLE, applicant: { ...DECLINABLE.applicant, name: 'Zoë 王小明 <img src=x>' } });
    const { text } = await pdfText(new Uint8Array(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer()));
    expect(text).toContain('Zoë ??? <img src=x>');
    expect(await (await file(account.apiKey, application.mortgageId, notice.noticeId, 'html')).text()).toContain('Zoë 王小明 &lt;img src=x&gt;');
  });

  it('a member may download it; another account, the other mode, an unknown or malformed id, an unknown format are refused', async () => {
    const { application, notice } = await declined(account.client);
    expect((await file(account.memberKey, application.mortgageId, notice.noticeId)).status).toBe(200);
    const other = await app.newAccount('Other Lending');
    expect((await file(other.apiKey, application.mortgageId, notice.noticeId)).status).toBe(404);
    expect((await file(account.testKey, application.mortgageId, notice.noticeId)).status).toBe(404);
    expect((await file(account.apiKey, application.mortgageId, 'ntc-01jdz9c4d5e6f7g8h9j0k1m2n3')).status).toBe(404);
    const { application: second } = await declined(account.client);
    expect((await file(account.apiKey, second.mortgageId, notice.noticeId)).status).toBe(404);
    expect((await file(account.apiKey, application.mortgageId, 'ntc-../../etc')).status).toBe(400);
    const exe = await app.fetch(`/v1/applications/${application.mortgageId}/notices/${notice.noticeId}/content?format=exe`, { headers: { Authorization: `Bearer ${account.apiKey}` } });
    expect(exe.status).toBe(400);
  });
});

describe('markNoticeDelivered', () => {
  const deliver = (as: ApiClient, mortgageId: string, noticeId: string, body: components['schemas']['NoticeDeliveredRequest']) =>
    as.POST('/v1/applications/{mortgageId}/notices/{noticeId}/delivered', { ...notePath(mortgageId, noticeId), body });

  it('an admin records it; then it is delivered, and a second record is 409', async () => {
    const { application, notice } = await declined(account.client);
    const deliveredAt = notice.decidedAt;
    const { data, response } = await deliver(account.client, application.mortgageId, notice.noticeId, { method: 'mail', deliveredAt });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ status: 'delivered', delivery: { method: 'mail', deliveredAt } });
    expect((await account.client.GET('/v1/applications/{mortgageId}/notices', path(application.mortgageId))).data!.data[0]).toEqual(data);
    const again = await deliver(account.client, application.mortgageId, notice.noticeId, { method: 'email', deliveredAt });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'notice_already_delivered' });
  });

  it('a member key, and a restricted key without underwriting:write, get 403 and change nothing', async () => {
    const { application, notice } = await declined(account.client);
    const body = { method: 'in_person', deliveredAt: notice.decidedAt } as const;
    const member = await deliver(account.member, application.mortgageId, notice.noticeId, body);
    expect(member.response.status).toBe(403);
    const readOnly = await account.client.POST('/v1/api-keys', { body: { name: 'Reader', scopes: { applications: 'write' } } });
    expect((await deliver(app.clientFor(readOnly.data!.apiKey), application.mortgageId, notice.noticeId, body)).response.status).toBe(403);
    expect((await account.client.GET('/v1/applications/{mortgageId}/notices', path(application.mortgageId))).data!.data[0]!.status).toBe('due');
  });

  it('refuses a time in the future or before the decision (422), and bad input (400), changing nothing', async () => {
    const { application, notice } = await declined(account.client);
    const future = await deliver(account.client, application.mortgageId, notice.noticeId, { method: 'mail', deliveredAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(future.response.status).toBe(422);
    expect(future.error).toMatchObject({ code: 'delivered_in_future', errors: [{ pointer: '/deliveredAt' }] });
    const before = await deliver(account.client, application.mortgageId, notice.noticeId, { method: 'mail', deliveredAt: new Date(Date.parse(notice.decidedAt) - 1).toISOString() });
    expect(before.error).toMatchObject({ code: 'delivered_before_decision' });
    for (const body of [{ method: 'pigeon', deliveredAt: notice.decidedAt }, { method: 'mail', deliveredAt: 'yesterday' }, { method: 'mail' }, { method: 'mail', deliveredAt: notice.decidedAt, note: 'x' }]) {
      expect((await deliver(account.client, application.mortgageId, notice.noticeId, body as never)).response.status, JSON.stringify(body)).toBe(400);
    }
    const huge = await app.fetch(`/v1/applications/${application.mortgageId}/notices/${notice.noticeId}/delivered`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ method: 'mail', deliveredAt: notice.decidedAt, pad: 'x'.repeat(3_000_000) }),
    });
    expect(huge.status).toBe(413);
    expect((await account.client.GET('/v1/applications/{mortgageId}/notices', path(application.mortgageId))).data!.data[0]!.status).toBe('due');
  });

  it("another account's notice and the other mode's are 404", async () => {
    const { application, notice } = await declined(account.client);
    const other = await app.newAccount('Other Lending');
    const body = { method: 'mail', deliveredAt: notice.decidedAt } as const;
    expect((await deliver(other.client, application.mortgageId, notice.noticeId, body)).response.status).toBe(404);
    expect((await deliver(account.test, application.mortgageId, notice.noticeId, body)).response.status).toBe(404);
  });
});

describe('the due and reminder events, on the test clock', () => {
  const eventsOf = async (kind: 'application.adverse_action_due' | 'application.adverse_action_reminder') =>
    (await account.test.GET('/v1/events', { params: { query: { event: kind, limit: 100 } } })).data!.data.map((e) => e.payload as Record<string, unknown>);
  const advance = (by: string) => account.test.POST('/v1/test/clock/advance', { body: { by } });

  it('due at the decline with dueAt; the reminder once 25 days pass undelivered, once; none for a delivered notice', async () => {
    const { application, notice } = await declined(account.test);
    const { notice: delivered, application: other } = await declined(account.test);
    await account.test.POST('/v1/applications/{mortgageId}/notices/{noticeId}/delivered', { ...notePath(other.mortgageId, delivered.noticeId), body: { method: 'email', deliveredAt: delivered.decidedAt } });
    const due = (await eventsOf('application.adverse_action_due')).find((p) => p.noticeId === notice.noticeId);
    expect(due).toEqual({ event: 'application.adverse_action_due', mortgageId: application.mortgageId, noticeId: notice.noticeId, status: 'declined', dueAt: notice.dueAt, timestamp: notice.decidedAt });

    await advance('P24DT23H');
    expect(await eventsOf('application.adverse_action_reminder')).toEqual([]);
    await advance('PT2H');
    const reminders = await eventsOf('application.adverse_action_reminder');
    expect(reminders).toHaveLength(1);
    expect(reminders[0]).toMatchObject({ event: 'application.adverse_action_reminder', mortgageId: application.mortgageId, noticeId: notice.noticeId, dueAt: notice.dueAt });
    await advance('P10D');
    expect(await eventsOf('application.adverse_action_reminder')).toHaveLength(1);
    // The live environment's notices are on real time: none of them was reminded.
    expect((await account.client.GET('/v1/events', { params: { query: { event: 'application.adverse_action_reminder' } } })).data!.data).toEqual([]);
    await account.test.POST('/v1/test/clock/reset', {});
  });
});

describe('demographics are never in a notice', () => {
  it('not in the notice, its HTML, its PDF or its event', async () => {
    const { application, notice } = await declined(account.client);
    const pdf = await pdfText(new Uint8Array(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer()));
    const surfaces = {
      notice: JSON.stringify(notice),
      html: await (await file(account.apiKey, application.mortgageId, notice.noticeId, 'html')).text(),
      pdf: pdf.text,
      pdfBytes: Buffer.from(await (await file(account.apiKey, application.mortgageId, notice.noticeId)).arrayBuffer()).toString('latin1'),
      events: JSON.stringify((await account.client.GET('/v1/events', { params: { query: { limit: 100 } } })).data),
    };
    // The demographics were stored (so their absence above means something).
    expect((await account.client.GET('/v1/applications/{mortgageId}/demographics', path(application.mortgageId))).data!.demographics).toMatchObject({ age: 117 });
    for (const [surface, text] of Object.entries(surfaces)) for (const marker of MARKERS) expect(text.includes(marker), `${marker} in ${surface}`).toBe(false);
  });
});

describe('the desk lists notices due and overdue', () => {
  it('a notice past its due date on the test clock shows as overdue; a delivered one is not listed', async () => {
    const { signUpWith } = await import('../dashboard/httpClient.ts');
    const signedUp = await signUpWith(app.baseUrl, { name: 'Desk Lending', email: 'desk@lending.test', password: 'correct horse battery staple' });
    const api = app.clientFor(signedUp.firstKey);
    const { application } = await declined(api);
    const page = await signedUp.client.get('/dashboard/applications?view=notices');
    expect(page.status).toBe(200);
    expect(page.body).toContain(application.mortgageId);
    expect(page.body).toMatch(/<td>due<\/td>/);
    // In live mode the clock is real: past dueAt only by moving the notice's dates (a test-mode desk is the other environment).
    await app.ctx.store.transaction((tx) => tx.run("UPDATE adverse_action_notices SET due_at = ? WHERE mortgage_id = ?", ['2020-01-01T00:00:00.000Z', application.mortgageId]));
    expect((await signedUp.client.get('/dashboard/applications?view=notices')).body).toMatch(/<td>overdue<\/td>/);
  });

  it('bounded, it counts the notices it left off', async () => {
    const lender = await app.newAccount('Busy Declining Lending');
    const first = await declined(lender.client);
    await declined(lender.client);
    const due = await noticesDue(app.ctx, lender.accountId, 1);
    expect(due.items.map((n) => n.noticeId)).toEqual([first.notice.noticeId]);
    expect(due.more).toBe(1);
    expect((await noticesDue(app.ctx, lender.accountId, 2)).more).toBe(0);
  });
});
