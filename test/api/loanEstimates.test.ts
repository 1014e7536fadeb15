/**
 * The Loan Estimate over HTTP: its clock in test mode (disclosure.loan_estimate_due when the
 * application becomes a TRID application; disclosure.loan_estimate_overdue once the test clock
 * passes the end of the third business day, across a holiday weekend), what stops it (delivered,
 * withdrawal, denial), the figures from the quote or the lock, and the refusals (other account,
 * other mode, member key, hostile input). The service's clock starts on Friday January 15, 2027,
 * 10:00 in New York: the Friday before Martin Luther King Day (Monday the 18th).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePDFRawStream, PDFArray, PDFDocument, PDFRawStream } from 'pdf-lib';
import type { components } from '../../generated/api.d.ts';
import { sweepLoanEstimates } from '../../src/services/loanEstimates.ts';
import { startTestApp, type ApiClient, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

const FRIDAY_BEFORE_MLK = Date.parse('2027-01-15T15:00:00.000Z');
const clock = manualClock(FRIDAY_BEFORE_MLK);
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ clock });
});

afterAll(async () => {
  await app?.close();
});

const APPLICANT = { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 742 };

async function draft(as: ApiClient, withQuote = true): Promise<string> {
  let quoteId: string | undefined;
  if (withQuote) {
    const quote = await as.POST('/v1/quotes', { body: { amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 } });
    expect(quote.response.status, JSON.stringify(quote.error)).toBe(201);
    quoteId = quote.data!.quoteId;
  }
  const { data, response, error } = await as.POST('/v1/applications', { body: { applicant: APPLICANT, term: 30, propertyValue: 437500, ...(quoteId ? { quoteId } : {}) } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!.mortgageId;
}

const ADDRESS = { street: '1 Main St', city: 'Springfield', state: 'IL' as const, zip: '62701' };

/** Makes the application a TRID application: the property address is the last of its six pieces. */
async function complete(as: ApiClient, mortgageId: string): Promise<void> {
  const { response, error } = await as.PATCH('/v1/applications/{mortgageId}', { params: { path: { mortgageId } }, body: { propertyAddress: ADDRESS } });
  expect(response.status, JSON.stringify(error)).toBe(200);
}

async function events(as: ApiClient, event: 'disclosure.loan_estimate_due' | 'disclosure.loan_estimate_overdue') {
  const { data, response } = await as.GET('/v1/events', { params: { query: { event } } });
  expect(response.status).toBe(200);
  return data!.data.map((e) => e.payload as Record<string, unknown>);
}

/** The text drawn on the page: pdf-lib writes a standard font's text as hex strings shown with Tj. */
function pageText(pdf: PDFDocument): string {
  const contents = pdf.getPages()[0]!.node.Contents();
  const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => pdf.context.lookup(ref) as PDFRawStream) : [contents as PDFRawStream];
  const ops = streams.map((stream) => Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1')).join('\n');
  return [...ops.matchAll(/<([0-9A-Fa-f]*)>\s*Tj/g)].map((m) => Buffer.from(m[1]!, 'hex').toString('latin1')).join('\n');
}

const advance = async (as: ApiClient, by: string) => expect((await as.POST('/v1/test/clock/advance', { body: { by } })).response.status).toBe(200);
/** The JSON answer (the operation also answers PDF, which the typed client unions in). */
async function estimate(as: ApiClient, mortgageId: string) {
  const answer = await as.GET('/v1/applications/{mortgageId}/loan-estimate', { params: { path: { mortgageId } } });
  return { ...answer, data: answer.data as components['schemas']['LoanEstimate'] | undefined };
}
const delivered = (as: ApiClient, mortgageId: string, body: { method: 'in_person' | 'mail' | 'email'; deliveredAt: string }) =>
  as.POST('/v1/applications/{mortgageId}/loan-estimate/delivered', { params: { path: { mortgageId } }, body });

describe('the Loan Estimate clock in test mode', () => {
  it('comes due on Friday before MLK Day and goes overdue only when the test clock passes Wednesday 23:59:59.999 in New York', async () => {
    const lender = await app.newAccount('Clockwork Lending');
    const mortgageId = await draft(lender.test);
    expect((await estimate(lender.test, mortgageId)).data!.clock).toMatchObject({ status: 'not_started', missing: ['/propertyAddress'] });

    await complete(lender.test, mortgageId);
    const due = await events(lender.test, 'disclosure.loan_estimate_due');
    expect(due).toEqual([
      {
        event: 'disclosure.loan_estimate_due',
        mortgageId,
        completedAt: '2027-01-15T15:00:00.000Z',
        receivedDate: '2027-01-15',
        dueDate: '2027-01-20',
        dueAt: '2027-01-21T04:59:59.999Z',
        timeZone: 'America/New_York',
        timestamp: '2027-01-15T15:00:00.000Z',
      },
    ]);
    // A second edit that keeps it complete starts nothing again.
    await complete(lender.test, mortgageId);
    await lender.test.PATCH('/v1/applications/{mortgageId}', { params: { path: { mortgageId } }, body: { applicant: { monthlyDebts: 700 } } });
    expect(await events(lender.test, 'disclosure.loan_estimate_due')).toHaveLength(1);

    // Saturday, Sunday, the holiday, Tuesday, Wednesday afternoon: still due.
    await advance(lender.test, 'P5DT3H'); // 2027-01-20T18:00Z, Wednesday 13:00 EST
    expect((await estimate(lender.test, mortgageId)).data!.clock.status).toBe('due');
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toEqual([]);
    await advance(lender.test, 'PT10H59M59S'); // 04:59:59Z Thursday: the due day's last second
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toEqual([]);
    await advance(lender.test, 'PT1S'); // 05:00:00Z: past dueAt
    const overdue = await events(lender.test, 'disclosure.loan_estimate_overdue');
    expect(overdue).toEqual([{ ...due[0], event: 'disclosure.loan_estimate_overdue', timestamp: '2027-01-21T05:00:00.000Z' }]);
    expect((await estimate(lender.test, mortgageId)).data!.clock.status).toBe('overdue');

    // Once only, however often the sweeps run.
    await advance(lender.test, 'P1D');
    await sweepLoanEstimates(app.ctx);
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toHaveLength(1);
    // Live never saw any of it.
    expect(await events(lender.client, 'disclosure.loan_estimate_due')).toEqual([]);
  });

  it('an application complete when created starts its clock at once; removing a piece later does not stop it', async () => {
    const lender = await app.newAccount('Complete Lending');
    const { data } = await lender.test.POST('/v1/applications', { body: { applicant: APPLICANT, term: 30, propertyValue: 437500, propertyAddress: ADDRESS } });
    const mortgageId = data!.mortgageId;
    expect((await events(lender.test, 'disclosure.loan_estimate_due')).map((e) => e.mortgageId)).toEqual([mortgageId]);
    await lender.test.PATCH('/v1/applications/{mortgageId}', { params: { path: { mortgageId } }, body: { propertyAddress: null } });
    await advance(lender.test, 'P6D');
    expect((await events(lender.test, 'disclosure.loan_estimate_overdue')).map((e) => e.mortgageId)).toEqual([mortgageId]);
  });

  it('an application without a credit score is not a TRID application: no clock, no event', async () => {
    const lender = await app.newAccount('Scoreless Lending');
    const { data } = await lender.test.POST('/v1/applications', {
      body: { applicant: { name: 'Sam Noscore', amount: 350000, annualIncome: 90000 }, term: 30, propertyValue: 437500, propertyAddress: ADDRESS },
    });
    const { data: le } = await estimate(lender.test, data!.mortgageId);
    expect(le).toBeUndefined();
    const quoteless = await lender.test.GET('/v1/applications/{mortgageId}/loan-estimate', { params: { path: { mortgageId: data!.mortgageId } } });
    expect(quoteless.error).toMatchObject({ code: 'loan_estimate_needs_quote', clock: { status: 'not_started', missing: ['/applicant/creditScore'] } });
    expect(await events(lender.test, 'disclosure.loan_estimate_due')).toEqual([]);
  });

  it('deleting the test data removes running clocks with their applications', async () => {
    const lender = await app.newAccount('Tidy Lending');
    const mortgageId = await draft(lender.test);
    await complete(lender.test, mortgageId);
    expect((await lender.test.DELETE('/v1/test/data', {})).response.status).toBe(200);
    expect((await estimate(lender.test, mortgageId)).response.status).toBe(404);
    await advance(lender.test, 'P10D');
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toEqual([]);
  });

  it('delivered within the period stops the clock: no overdue event follows', async () => {
    const lender = await app.newAccount('Prompt Lending');
    const mortgageId = await draft(lender.test);
    await complete(lender.test, mortgageId);
    await advance(lender.test, 'P1D');
    const { data, response, error } = await delivered(lender.test, mortgageId, { method: 'mail', deliveredAt: '2027-01-16T15:00:00.000Z' });
    expect(response.status, JSON.stringify(error)).toBe(200);
    expect(data).toMatchObject({ status: 'delivered', deliveredAt: '2027-01-16T15:00:00.000Z', deliveryMethod: 'mail', dueDate: '2027-01-20' });
    await advance(lender.test, 'P10D');
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toEqual([]);
    // Twice is a conflict, and changes nothing.
    const again = await delivered(lender.test, mortgageId, { method: 'email', deliveredAt: '2027-01-17T15:00:00.000Z' });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'loan_estimate_clock_not_running', currentStatus: 'delivered' });
    expect((await estimate(lender.test, mortgageId)).data!.clock).toMatchObject({ status: 'delivered', deliveryMethod: 'mail' });
  });

  it('withdrawal within the period stops it', async () => {
    const lender = await app.newAccount('Withdrawn Lending');
    const mortgageId = await draft(lender.test);
    await complete(lender.test, mortgageId);
    await advance(lender.test, 'PT2H');
    expect((await lender.test.POST('/v1/applications/{mortgageId}/withdraw', { params: { path: { mortgageId } } })).response.status).toBe(200);
    await advance(lender.test, 'P10D');
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toEqual([]);
    expect((await estimate(lender.test, mortgageId)).data!.clock).toMatchObject({ status: 'stopped', stoppedBecause: 'withdrawn', stoppedAt: '2027-01-15T17:00:00.000Z' });
    expect((await delivered(lender.test, mortgageId, { method: 'mail', deliveredAt: '2027-01-16T15:00:00.000Z' })).error).toMatchObject({ code: 'loan_estimate_clock_not_running', currentStatus: 'stopped' });
  });

  it('denial within the period stops it', async () => {
    const lender = await app.newAccount('Declining Lending');
    const quote = await lender.test.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    // A score the default rules decline at submission.
    const { data } = await lender.test.POST('/v1/applications', {
      body: { applicant: { ...APPLICANT, creditScore: 520 }, term: 30, propertyValue: 437500, quoteId: quote.data!.quoteId },
    });
    const mortgageId = data!.mortgageId;
    await complete(lender.test, mortgageId);
    const submitted = await lender.test.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
    expect(submitted.data!.status).toBe('declined');
    await advance(lender.test, 'P10D');
    expect(await events(lender.test, 'disclosure.loan_estimate_overdue')).toEqual([]);
    expect((await estimate(lender.test, mortgageId)).data!.clock).toMatchObject({ status: 'stopped', stoppedBecause: 'declined' });
  });
});

describe('getLoanEstimate', () => {
  it('states the H-24 figures of the application’s quote, its APR the quote’s', async () => {
    const lender = await app.newAccount('Figures Lending');
    const mortgageId = await draft(lender.client);
    const application = await lender.client.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } });
    const quote = await lender.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: application.data!.quoteId! } } });
    const { data, response, error } = await estimate(lender.client, mortgageId);
    expect(response.status, JSON.stringify(error)).toBe(200);
    expect(data).toMatchObject({
      mortgageId,
      source: { kind: 'quote', id: quote.data!.quoteId },
      loanTerms: { loanAmount: 350000, interestRate: 6.5, monthlyPrincipalAndInterest: 2212.24 },
      projectedPayments: [{ fromYear: 1, toYear: 30, principalAndInterest: 2212.24, mortgageInsurance: null, estimatedEscrow: null, estimatedTotalMonthlyPayment: 2212 }],
      comparisons: { inFiveYears: { totalPaid: 137379, principalPaidOff: 22362 }, annualPercentageRate: quote.data!.apr, totalInterestPercentage: 127.544 },
      livemode: true,
    });
    expect(data!.comparisons.annualPercentageRate).toBe(6.611);
  });

  it('answers a PDF of the same figures and clock with Accept: application/pdf, read back with pdf-lib', async () => {
    const lender = await app.newAccount('Paper Lending');
    const mortgageId = await draft(lender.test);
    await complete(lender.test, mortgageId);
    const response = await app.fetch(`/v1/applications/${mortgageId}/loan-estimate`, { headers: { Authorization: `Bearer ${lender.testKey}`, Accept: 'application/pdf' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${mortgageId}-loan-estimate.pdf"`);
    const pdf = await PDFDocument.load(new Uint8Array(await response.arrayBuffer()));
    expect(pdf.getPageCount()).toBe(1);
    expect(pdf.getTitle()).toBe(`Loan Estimate figures ${mortgageId}`);
    const text = pageText(pdf);
    for (const expected of ['Loan Amount', '$350,000', '6.5%', '$2,212.24', '1-30', '$2,212', '$137,379', '$22,362', '6.611%', '127.544%', 'Due by the end of 2027-01-20', 'not a Loan Estimate']) {
      expect(text, expected).toContain(expected);
    }
  });

  it('takes the figures from the active rate lock when there is one', async () => {
    const lender = await app.newAccount('Locked Lending');
    const mortgageId = await draft(lender.client);
    const application = await lender.client.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } });
    const lock = await lender.client.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: application.data!.quoteId! } }, body: { periodDays: 30, mortgageId } });
    expect(lock.response.status, JSON.stringify(lock.error)).toBe(201);
    const { data } = await estimate(lender.client, mortgageId);
    expect(data!.source).toEqual({ kind: 'rate_lock', id: lock.data!.lockId });
    expect(data!.loanTerms.interestRate).toBe(lock.data!.interestRate);
  });

  it('422 loan_estimate_needs_quote when there is neither quote nor lock, with the clock in the problem', async () => {
    const lender = await app.newAccount('Quoteless Lending');
    const mortgageId = await draft(lender.client, false);
    const { error, response } = await estimate(lender.client, mortgageId);
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'loan_estimate_needs_quote', errors: [{ pointer: '/quoteId' }] });
  });

  it('another account’s application, or the other mode’s, is 404; a restricted key without applications:read is 403', async () => {
    const lender = await app.newAccount('Owner Lending');
    const other = await app.newAccount('Other Lending');
    const mortgageId = await draft(lender.client);
    expect((await estimate(other.client, mortgageId)).response.status).toBe(404);
    expect((await estimate(lender.test, mortgageId)).response.status).toBe(404);
    expect((await estimate(lender.member, mortgageId)).response.status).toBe(200);
    const key = await lender.client.POST('/v1/api-keys', { body: { name: 'quotes only', role: 'restricted', scopes: { quotes: 'read' } } });
    expect(key.response.status, JSON.stringify(key.error)).toBe(201);
    expect((await estimate(app.clientFor(key.data!.apiKey), mortgageId)).response.status).toBe(403);
  });
});

describe('markLoanEstimateDelivered', () => {
  let lender: TestAccount;
  let mortgageId: string;
  beforeAll(async () => {
    lender = await app.newAccount('Careful Lending');
    mortgageId = await draft(lender.test);
    await complete(lender.test, mortgageId);
  });
  const stillDue = async () => expect((await estimate(lender.test, mortgageId)).data!.clock.status).not.toBe('delivered');

  it('a member key (or an intake key with only applications:write) cannot mark it: 403', async () => {
    const member = app.clientFor((await lender.test.POST('/v1/api-keys', { body: { name: 'member', role: 'member' } })).data!.apiKey);
    expect((await delivered(member, mortgageId, { method: 'mail', deliveredAt: '2027-01-15T16:00:00.000Z' })).response.status).toBe(403);
    const intake = await lender.test.POST('/v1/api-keys', { body: { name: 'intake', role: 'restricted', scopes: { applications: 'write' } } });
    const refused = await delivered(app.clientFor(intake.data!.apiKey), mortgageId, { method: 'mail', deliveredAt: '2027-01-15T16:00:00.000Z' });
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ code: 'scope_missing' });
    await stillDue();
  });

  it('another account, the other mode, an unknown id: 404', async () => {
    const other = await app.newAccount('Meddling Lending');
    const body = { method: 'mail' as const, deliveredAt: '2027-01-15T16:00:00.000Z' };
    expect((await delivered(other.test, mortgageId, body)).response.status).toBe(404);
    expect((await delivered(lender.client, mortgageId, body)).response.status).toBe(404);
    expect((await delivered(lender.test, 'mtg-00000000000000000000000000', body)).response.status).toBe(404);
    await stillDue();
  });

  it('hostile bodies are 400 or 422 with a pointer', async () => {
    for (const body of [{ method: 'pigeon', deliveredAt: '2027-01-15T16:00:00.000Z' }, { method: 'mail' }, { method: 'mail', deliveredAt: 'yesterday' }, { method: 'mail', deliveredAt: '2027-01-15T16:00:00.000Z', extra: 'x'.repeat(100_000) }]) {
      const { response } = await delivered(lender.test, mortgageId, body as never);
      expect([400, 413], JSON.stringify(body).slice(0, 80)).toContain(response.status);
    }
    for (const deliveredAt of ['2027-01-14T16:00:00.000Z', '2099-01-01T00:00:00.000Z']) {
      const { response, error } = await delivered(lender.test, mortgageId, { method: 'mail', deliveredAt });
      expect(response.status, deliveredAt).toBe(422);
      expect(error).toMatchObject({ code: 'loan_estimate_delivery_time', errors: [{ pointer: '/deliveredAt' }] });
    }
    await stillDue();
  });

  it('an application whose clock never started: 409 not_started', async () => {
    const quoteless = await draft(lender.test, false);
    const { response, error } = await delivered(lender.test, quoteless, { method: 'mail', deliveredAt: '2027-01-15T16:00:00.000Z' });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ code: 'loan_estimate_clock_not_running', currentStatus: 'not_started' });
  });
});
