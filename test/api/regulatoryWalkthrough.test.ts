/**
 * Issue 44's "done when", end to end in test mode with a test key and a local webhook receiver, as
 * a partner would run it: the lender states its identity; an application is declined and the
 * adverse action event and the notice's PDF follow; another comes due for its Loan Estimate on the
 * Friday before Martin Luther King Day and goes overdue only once the test clock has crossed the
 * holiday weekend; and the year's HMDA register downloads with every implemented FFIEC edit passed.
 */
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { FileChecker } from '../../src/domain/hmda/fileEdits.ts';
import { LAR_FIELD_COUNT, TS_FIELD_COUNT, larRecordOf } from '../../src/domain/hmda/layout.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { updateLender } from '../../src/services/lender.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock, startReceiver, verifiedDeliveries, type Receiver } from '../helpers/webhookReceiver.ts';

/** 10:00 in New York on Friday January 15, 2027, the Friday before Martin Luther King Day. */
const clock = manualClock(Date.parse('2027-01-15T15:00:00.000Z'));
let app: TestApp;
let dispatcher: WebhookDispatcher;
let receiver: Receiver;
let lender: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ clock, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } });
  dispatcher = new WebhookDispatcher(app.ctx, { random: () => 0.5 }).start();
  receiver = await startReceiver();
  lender = await app.newAccount('Harbor Lending');
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await app?.close();
});

const LEI = '549300HMDATESTLEI024';
const FTC = 'Federal Trade Commission, Consumer Response Center, 600 Pennsylvania Avenue NW, Washington, DC 20580';
const EVENTS = ['application.adverse_action_due', 'disclosure.loan_estimate_due', 'disclosure.loan_estimate_overdue'];

type CreateBody = components['schemas']['ApplicationCreateRequest'];
type Payload = Record<string, unknown> & { event: string };

/** Everything the TRID clock and the register need: the six TRID pieces, the HMDA fields, the applicant's demographics. */
const application = (name: string, applicant: Partial<CreateBody['applicant']>): CreateBody => ({
  applicant: { name, email: 'applicant@example.test', amount: 320000, annualIncome: 96000, monthlyDebts: 500, creditScore: 740, ...applicant },
  term: 30,
  propertyValue: 400000,
  propertyAddress: { street: '12 Elm Street', city: 'Springfield', state: 'IL', zip: '62704', county: '17167', censusTract: '17167000100' },
  loanPurpose: 'purchase',
  occupancy: 'principal_residence',
  propertyType: 'single_family',
  totalUnits: 1,
  lienStatus: 'first_lien',
  loanType: 'conventional',
  demographics: { ethnicity: ['not_hispanic_or_latino'], race: ['asian'], sex: 'female', age: 41, collectedOnVisualObservation: false },
});

describe('regulatory outputs, in test mode, followed through webhooks', () => {
  it('a decline brings its notice and PDF; a Loan Estimate comes due and goes overdue over MLK weekend; the 2027 register passes the implemented edits', async () => {
    const api = lender.test;
    await updateLender(app.ctx, lender.accountId, {
      name: 'Harbor Lending, LLC',
      street: '500 Market Street, Suite 300',
      city: 'San Francisco',
      state: 'CA',
      zip: '94105',
      ecoaAgency: FTC,
      lei: LEI,
      contactName: 'Pat Compliance',
      contactPhone: '415-555-0100',
      contactEmail: 'hmda@harbor.test',
      taxId: '12-3456789',
      agencyCode: '9',
    });
    const { data: hook } = await api.POST('/v1/webhooks', { body: { url: receiver.url(), events: EVENTS, description: 'Regulatory outputs' } });
    const next = verifiedDeliveries(receiver, hook!.secret);
    const quoteFor = async () => (await api.POST('/v1/quotes', { body: { amount: 320000, term: 30, propertyValue: 400000, creditScore: 740 } })).data!.quoteId;
    const created = async (body: CreateBody) => {
      const { data, response, error } = await api.POST('/v1/applications', { body: { ...body, quoteId: await quoteFor() } });
      expect(response.status, JSON.stringify(error)).toBe(201);
      return data!.mortgageId;
    };
    const submit = async (mortgageId: string) => (await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } })).data!;

    // 1. A decline (debts of 70 % of income): its Loan Estimate clock started at creation and the decline stops it; the notice is due.
    const declinedId = await created(application('Dana Declined', { monthlyDebts: 5600 }));
    const [declinedClock] = await next(1);
    expect(declinedClock).toMatchObject({ event: 'disclosure.loan_estimate_due', mortgageId: declinedId, dueDate: '2027-01-20' });
    expect((await submit(declinedId)).status).toBe('declined');
    const [adverse] = await next(1);
    const { data: notices } = await api.GET('/v1/applications/{mortgageId}/notices', { params: { path: { mortgageId: declinedId } } });
    const notice = notices!.data[0]!;
    expect(adverse).toEqual({ event: 'application.adverse_action_due', mortgageId: declinedId, noticeId: notice.noticeId, status: 'declined', dueAt: notice.dueAt, timestamp: notice.decidedAt });
    expect(notice.reasons.map((r) => r.text)).toEqual(['Excessive obligations in relation to income']);
    const pdf = await app.fetch(`/v1/applications/${declinedId}/notices/${notice.noticeId}/content?format=pdf`, { headers: { Authorization: `Bearer ${lender.testKey}` } });
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const document = await PDFDocument.load(new Uint8Array(await pdf.arrayBuffer()));
    expect(document.getTitle()).toBe(`Notice of action taken: ${declinedId}`);

    // 2. An application approved on Friday: its Loan Estimate is due by the end of Wednesday (Sunday and the holiday do not count).
    const approvedId = await created(application('Avery Approved', {}));
    const [due] = await next(1);
    expect(due).toMatchObject({ event: 'disclosure.loan_estimate_due', mortgageId: approvedId, receivedDate: '2027-01-15', dueDate: '2027-01-20', dueAt: '2027-01-21T04:59:59.999Z' });
    expect((await submit(approvedId)).status).toBe('approved');

    // 3. The test clock over the weekend and the holiday to Wednesday evening: still due. Past midnight in New York: overdue, for the approved one only.
    await api.POST('/v1/test/clock/advance', { body: { by: 'P5DT13H' } }); // Wednesday 2027-01-20, 23:00 EST
    const { data: stillDue } = await api.GET('/v1/applications/{mortgageId}/loan-estimate', { params: { path: { mortgageId: approvedId } } });
    expect((stillDue as components['schemas']['LoanEstimate']).clock.status).toBe('due');
    await api.POST('/v1/test/clock/advance', { body: { by: 'PT1H' } });
    const [overdue] = await next(1);
    expect(overdue).toMatchObject({ event: 'disclosure.loan_estimate_overdue', mortgageId: approvedId, dueDate: '2027-01-20' });

    // The whole sequence as the receiver saw it: nothing for the declined application's stopped clock.
    expect(receiver.deliveries.map((d) => JSON.parse(d.body) as Payload).map((p) => [p.event, p.mortgageId])).toEqual([
      ['disclosure.loan_estimate_due', declinedId],
      ['application.adverse_action_due', declinedId],
      ['disclosure.loan_estimate_due', approvedId],
      ['disclosure.loan_estimate_overdue', approvedId],
    ]);

    // 4. The 2027 register: the transmittal sheet and one row per decided application, every implemented edit passed.
    const register = await app.fetch('/v1/exports/hmda-lar?year=2027', { headers: { Authorization: `Bearer ${lender.testKey}` } });
    expect(register.status).toBe(200);
    expect(register.headers.get('hmda-lar-rows-failing-edits')).toBe('0');
    const [ts, ...rows] = (await register.text()).trimEnd().split('\n').map((line) => line.split('|'));
    expect(ts).toHaveLength(TS_FIELD_COUNT);
    expect(rows.map((row) => row.length)).toEqual([LAR_FIELD_COUNT, LAR_FIELD_COUNT]);
    expect(rows.map((row) => larRecordOf(row).actionTaken).sort()).toEqual(['2', '3']); // approved not accepted; denied
    const checker = new FileChecker(2027);
    expect(checker.transmittal(ts!)).toEqual([]);
    for (const row of rows) expect(checker.lar(row)).toEqual([]);
    expect(checker.finish()).toEqual([]);
    const check = (await (await app.fetch('/v1/exports/hmda-lar/check?year=2027', { headers: { Authorization: `Bearer ${lender.testKey}` } })).json()) as {
      data: { failures: unknown[] }[];
      transmittal: { failures: unknown[] };
    };
    expect(check.transmittal.failures).toEqual([]);
    expect(check.data.flatMap((entry) => entry.failures)).toEqual([]);
  });
});
