/**
 * Applications over HTTP: create, read, list, edit, submit for the automated decision, a
 * reviewer's approve and decline, withdraw, the underwriting rules, and the application.approved
 * event (its payload against the spec's webhooks section, delivered only to endpoints that chose it).
 * Every response is checked against the contract by the test client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { deliveriesBeforeSentinel, specPayloadErrors, startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

type Application = components['schemas']['Application'];
type CreateBody = components['schemas']['ApplicationCreateRequest'];

let app: TestApp;
let account: TestAccount;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  // One delivery at a time per endpoint: absence checks wait for a sentinel (deliveriesBeforeSentinel).
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } });
  account = await app.newAccount();
  dispatcher = new WebhookDispatcher(app.ctx).start();
});
afterAll(async () => {
  await dispatcher.stop();
  await app.close();
});

/** Passes every default rule: DTI about 28.6 %, LTV 77.778 %, score 720, amount below the conforming limit. */
const COMPLETE: CreateBody = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

const withApplicant = (change: Partial<CreateBody['applicant']>, rest: Partial<CreateBody> = {}): CreateBody => ({
  ...COMPLETE,
  ...rest,
  applicant: { ...COMPLETE.applicant, ...change },
});

async function create(owner: TestAccount, body: CreateBody = COMPLETE): Promise<Application> {
  const { data, response, error } = await owner.client.POST('/v1/applications', { body });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

async function submit(owner: TestAccount, mortgageId: string) {
  return owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
}

async function submitted(owner: TestAccount, body: CreateBody): Promise<Application> {
  const created = await create(owner, body);
  const { data, response, error } = await submit(owner, created.mortgageId);
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

const path = (mortgageId: string) => ({ params: { path: { mortgageId } } });

describe('createApplication', () => {
  it('creates a draft with an mtg- id, the applicant as sent, and no decision', async () => {
    const created = await create(account);
    expect(created.mortgageId).toMatch(/^mtg-[0-9a-z]{26}$/);
    expect(created).toMatchObject({ status: 'draft', applicant: COMPLETE.applicant, term: 30, propertyValue: 450000, quoteId: null, decision: null });
    expect(created.createdAt).toBe(created.updatedAt);
  });

  it('needs only name, amount and term; the financial fields are null until given', async () => {
    const created = await create(account, { applicant: { name: 'Sam Lee', amount: 200000.55 }, term: 15 });
    expect(created.applicant).toEqual({ name: 'Sam Lee', amount: 200000.55, email: null, annualIncome: null, monthlyDebts: null, creditScore: null });
  });

  it('a member key may create applications', async () => {
    const { response } = await account.member.POST('/v1/applications', { body: COMPLETE });
    expect(response.status).toBe(201);
  });

  it('refuses an amount with more than two decimals (400, pointer /applicant/amount)', async () => {
    const { response, error } = await account.client.POST('/v1/applications', { body: withApplicant({ amount: 350000.125 }) });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/applicant/amount' }] });
  });

  it('refuses a term given in months with a message in years', async () => {
    const { response, error } = await account.client.POST('/v1/applications', { body: { ...COMPLETE, term: 360 } });
    expect(response.status).toBe(400);
    expect(JSON.stringify(error)).toContain('years');
  });

  it('refuses status and decision in the body (they are not writable)', async () => {
    const { response } = await account.client.POST('/v1/applications', { body: { ...COMPLETE, status: 'approved' } as CreateBody });
    expect(response.status).toBe(400);
  });

  it('accepts a quote of the account for the same amount and term', async () => {
    const quote = await account.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    const created = await create(account, { ...COMPLETE, quoteId: quote.data!.quoteId });
    expect(created.quoteId).toBe(quote.data!.quoteId);
  });

  it("refuses another account's quote as unknown (422 quote_not_found)", async () => {
    const other = await app.newAccount('Other Lending');
    const quote = await other.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    const { response, error } = await account.client.POST('/v1/applications', { body: { ...COMPLETE, quoteId: quote.data!.quoteId } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'quote_not_found', errors: [{ pointer: '/quoteId' }] });
  });

  it('refuses a quote for another amount or term (422 quote_mismatch)', async () => {
    const quote = await account.client.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
    const { response, error } = await account.client.POST('/v1/applications', { body: { ...COMPLETE, quoteId: quote.data!.quoteId } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'quote_mismatch' });
  });
});

describe('getApplication', () => {
  it('returns the application as created', async () => {
    const created = await create(account);
    const { data, response } = await account.member.GET('/v1/applications/{mortgageId}', path(created.mortgageId));
    expect(response.status).toBe(200);
    expect(data).toEqual(created);
  });

  it("another account's application is 404, as if it did not exist", async () => {
    const created = await create(account);
    const other = await app.newAccount('Nosy Lending');
    const { response, error } = await other.client.GET('/v1/applications/{mortgageId}', path(created.mortgageId));
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ code: 'not_found' });
  });
});

describe('listApplications', () => {
  it('pages newest first and filters by status', async () => {
    const owner = await app.newAccount('Listing Lending');
    const draft1 = await create(owner, withApplicant({ name: 'First' }));
    const approved = await submitted(owner, withApplicant({ name: 'Second' }));
    const draft2 = await create(owner, withApplicant({ name: 'Third' }));

    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await owner.client.GET('/v1/applications', { params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } } });
      names.push(...data!.data.map((a) => a.applicant.name));
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
    expect(names).toEqual(['Third', 'Second', 'First']);

    const drafts = await owner.client.GET('/v1/applications', { params: { query: { status: 'draft' } } });
    expect(drafts.data!.data.map((a) => a.mortgageId)).toEqual([draft2.mortgageId, draft1.mortgageId]);
    const approvedOnly = await owner.client.GET('/v1/applications', { params: { query: { status: 'approved' } } });
    expect(approvedOnly.data!.data.map((a) => a.mortgageId)).toEqual([approved.mortgageId]);
  });

  it("never lists another account's applications", async () => {
    const owner = await app.newAccount('Quiet Lending');
    await create(account);
    const { data } = await owner.client.GET('/v1/applications');
    expect(data!.data).toEqual([]);
  });

  it('refuses an unknown status (400)', async () => {
    const { response } = await account.client.GET('/v1/applications', { params: { query: { status: 'pending' as 'draft' } } });
    expect(response.status).toBe(400);
  });
});

describe('updateApplication', () => {
  it('changes only the fields sent and clears optional ones with null', async () => {
    const created = await create(account);
    const { data, response } = await account.client.PATCH('/v1/applications/{mortgageId}', {
      ...path(created.mortgageId),
      body: { applicant: { annualIncome: 150000, email: null }, propertyValue: null },
    });
    expect(response.status).toBe(200);
    expect(data!.applicant).toEqual({ ...COMPLETE.applicant, annualIncome: 150000, email: null });
    expect(data!.propertyValue).toBeNull();
    expect(data!.term).toBe(30);
    expect(data!.updatedAt >= created.updatedAt).toBe(true);
  });

  it('refuses to write status or decision (400)', async () => {
    const created = await create(account);
    for (const body of [{ status: 'approved' }, { decision: null }]) {
      const { response } = await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(created.mortgageId), body: body as never });
      expect(response.status).toBe(400);
    }
  });

  it('refuses to edit a submitted application (409 with currentStatus)', async () => {
    const decided = await submitted(account, COMPLETE);
    const { response, error } = await account.client.PATCH('/v1/applications/{mortgageId}', {
      ...path(decided.mortgageId),
      body: { term: 25 },
    });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ code: 'application_not_editable', currentStatus: 'approved' });
  });

  it('keeps a quote consistent: changing the amount away from the quote is 422', async () => {
    const quote = await account.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    const created = await create(account, { ...COMPLETE, quoteId: quote.data!.quoteId });
    const { response, error } = await account.client.PATCH('/v1/applications/{mortgageId}', {
      ...path(created.mortgageId),
      body: { applicant: { amount: 360000 } },
    });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'quote_mismatch' });
  });
});

describe('submitApplication', () => {
  it('approves an application that passes every rule, listing each rule with threshold, value and result', async () => {
    const decided = await submitted(account, COMPLETE);
    expect(decided.status).toBe('approved');
    expect(decided.decision).toMatchObject({ outcome: 'approved', decidedBy: 'underwriting_rules' });
    expect(decided.decision!.decidedAt).toBe(decided.submittedAt);
    const byRule = Object.fromEntries(decided.decision!.reasons.map((r) => [r.rule, r]));
    expect(Object.keys(byRule)).toEqual(['financial_data', 'debt_to_income', 'loan_to_value', 'credit_score', 'loan_amount']);
    expect(byRule.loan_to_value).toMatchObject({ threshold: 97, referralLimit: 100, value: 77.778, result: 'pass' });
    expect(byRule.credit_score).toMatchObject({ threshold: 620, value: 720, result: 'pass' });
    expect(byRule.loan_amount).toMatchObject({ threshold: 832750, value: 350000, result: 'pass' });
    expect(byRule.debt_to_income).toMatchObject({ threshold: 43, result: 'pass', unit: 'percent' });
  });

  it('prices the loan for DTI with the rate sheet when there is no quote, and uses the quote’s payment when there is', async () => {
    const quote = await account.client.POST('/v1/quotes', { body: { amount: 350000, term: 30, propertyValue: 450000, creditScore: 720 } });
    const priced = await submitted(account, COMPLETE);
    const quoted = await submitted(account, { ...COMPLETE, quoteId: quote.data!.quoteId });
    const dtiOf = (a: Application) => a.decision!.reasons.find((r) => r.rule === 'debt_to_income')!;
    expect(dtiOf(priced).message).toContain('the priced monthly payment');
    expect(dtiOf(quoted).message).toContain(`the quote's monthly payment of ${quote.data!.monthlyPayment.toLocaleString('en-US', { minimumFractionDigits: 2 })}`);
    const expected = Math.round(((quote.data!.monthlyPayment + 650) / 10000) * 100 * 1000) / 1000;
    expect(dtiOf(quoted).value).toBeCloseTo(expected, 3);
  });

  it('refers an application with missing financial data, listing what is missing', async () => {
    const decided = await submitted(account, { applicant: { name: 'Sam Lee', amount: 200000 }, term: 30 });
    expect(decided.status).toBe('referred');
    const data = decided.decision!.reasons.find((r) => r.rule === 'financial_data')!;
    expect(data).toMatchObject({ result: 'fail', effect: 'refer', missing: ['annualIncome', 'monthlyDebts', 'creditScore', 'propertyValue'] });
  });

  it('refers a near miss (credit score 600) and declines a miss far beyond (540)', async () => {
    expect((await submitted(account, withApplicant({ creditScore: 600 }))).status).toBe('referred');
    const declined = await submitted(account, withApplicant({ creditScore: 540 }));
    expect(declined.status).toBe('declined');
    expect(declined.decision!.reasons.find((r) => r.rule === 'credit_score')).toMatchObject({ value: 540, result: 'fail', effect: 'decline' });
  });

  it('records a loan the rate sheet refuses (LTV over its maximum) as a failed pricing rule, not an error', async () => {
    // LTV 98 %: a near miss for the rules (refer) and above the default sheet's 97 % maximum.
    const decided = await submitted(account, { ...COMPLETE, propertyValue: 357142.86 });
    expect(decided.status).toBe('referred');
    expect(decided.decision!.reasons.find((r) => r.rule === 'pricing')).toMatchObject({ result: 'fail', effect: 'refer', problemCode: 'ltv_above_maximum' });
  });

  it('a second submit is refused with 409 and the current status', async () => {
    const decided = await submitted(account, COMPLETE);
    const { response, error } = await submit(account, decided.mortgageId);
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ code: 'invalid_transition', currentStatus: 'approved' });
  });

  it('a retried submit with the same Idempotency-Key replays the decision', async () => {
    const created = await create(account);
    const headers = { 'Idempotency-Key': `submit-${created.mortgageId}` };
    const first = await account.client.POST('/v1/applications/{mortgageId}/submit', { ...path(created.mortgageId), headers });
    const again = await account.client.POST('/v1/applications/{mortgageId}/submit', { ...path(created.mortgageId), headers });
    expect(again.response.status).toBe(200);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first.data);
  });

  it("another account's application is 404", async () => {
    const created = await create(account);
    const other = await app.newAccount('Meddling Lending');
    expect((await submit(other, created.mortgageId)).response.status).toBe(404);
  });
});

/** An application of `owner` in `status`, made through the API. */
async function inStatus(owner: TestAccount, status: 'draft' | 'referred' | 'approved' | 'declined' | 'withdrawn'): Promise<string> {
  switch (status) {
    case 'draft':
      return (await create(owner)).mortgageId;
    case 'referred':
      return (await submitted(owner, withApplicant({ creditScore: 600 }))).mortgageId;
    case 'approved':
      return (await submitted(owner, COMPLETE)).mortgageId;
    case 'declined':
      return (await submitted(owner, withApplicant({ creditScore: 540 }))).mortgageId;
    case 'withdrawn': {
      const id = (await create(owner)).mortgageId;
      await owner.client.POST('/v1/applications/{mortgageId}/withdraw', path(id));
      return id;
    }
  }
}

type Action = 'submit' | 'approve' | 'decline' | 'withdraw';
const ACTION_PATHS = {
  submit: '/v1/applications/{mortgageId}/submit',
  approve: '/v1/applications/{mortgageId}/approve',
  decline: '/v1/applications/{mortgageId}/decline',
  withdraw: '/v1/applications/{mortgageId}/withdraw',
} as const;

/** Every action from every status the API can show (submitted lasts only inside the submit request). */
const MATRIX: Array<[from: 'draft' | 'referred' | 'approved' | 'declined' | 'withdrawn', action: Action, to: string | null]> = [
  ['draft', 'submit', 'approved'],
  ['draft', 'approve', null],
  ['draft', 'decline', null],
  ['draft', 'withdraw', 'withdrawn'],
  ['referred', 'submit', null],
  ['referred', 'approve', 'approved'],
  ['referred', 'decline', 'declined'],
  ['referred', 'withdraw', 'withdrawn'],
  ['approved', 'submit', null],
  ['approved', 'approve', null],
  ['approved', 'decline', null],
  ['approved', 'withdraw', null],
  ['declined', 'submit', null],
  ['declined', 'approve', null],
  ['declined', 'decline', null],
  ['declined', 'withdraw', null],
  ['withdrawn', 'submit', null],
  ['withdrawn', 'approve', null],
  ['withdrawn', 'decline', null],
  ['withdrawn', 'withdraw', null],
];

describe('transitions: every action from every status (approveApplication, declineApplication, withdrawApplication)', () => {
  it.each(MATRIX)('%s --%s--> %s', async (from, action, to) => {
    const mortgageId = await inStatus(account, from);
    const { response, data, error } = await account.client.POST(ACTION_PATHS[action], path(mortgageId));
    if (to === null) {
      expect(response.status, JSON.stringify(data)).toBe(409);
      expect(error).toMatchObject({ code: 'invalid_transition', currentStatus: from });
      const after = await account.client.GET('/v1/applications/{mortgageId}', path(mortgageId));
      expect(after.data!.status).toBe(from);
    } else {
      expect(response.status, JSON.stringify(error)).toBe(200);
      expect(data!.status).toBe(to);
    }
  });
});

describe('approveApplication', () => {
  it("records the reviewer's key, time and note, and keeps the rules' reasons", async () => {
    const mortgageId = await inStatus(account, 'referred');
    const before = await account.client.GET('/v1/applications/{mortgageId}', path(mortgageId));
    const { data } = await account.client.POST('/v1/applications/{mortgageId}/approve', {
      ...path(mortgageId),
      body: { note: 'Verified bonus income with the employer' },
    });
    expect(data!.decision).toMatchObject({ outcome: 'approved', decidedBy: 'reviewer', note: 'Verified bonus income with the employer' });
    expect(data!.decision!.reviewerKeyId).toMatch(/^key-/);
    expect(data!.decision!.reasons).toEqual(before.data!.decision!.reasons);
  });

  it('a member key may not approve (403), and nothing changes', async () => {
    const mortgageId = await inStatus(account, 'referred');
    const { response, error } = await account.member.POST('/v1/applications/{mortgageId}/approve', path(mortgageId));
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'forbidden' });
    expect((await account.client.GET('/v1/applications/{mortgageId}', path(mortgageId))).data!.status).toBe('referred');
  });

  it('refuses a note over 1000 characters (400)', async () => {
    const mortgageId = await inStatus(account, 'referred');
    const { response } = await account.client.POST('/v1/applications/{mortgageId}/approve', { ...path(mortgageId), body: { note: 'x'.repeat(1001) } });
    expect(response.status).toBe(400);
  });
});

describe('declineApplication', () => {
  it('declines a referred application with the reviewer recorded', async () => {
    const mortgageId = await inStatus(account, 'referred');
    const { data } = await account.client.POST('/v1/applications/{mortgageId}/decline', { ...path(mortgageId), body: { note: 'Income not verified' } });
    expect(data).toMatchObject({ status: 'declined', decision: { outcome: 'declined', decidedBy: 'reviewer', note: 'Income not verified' } });
  });

  it('a member key may not decline (403)', async () => {
    const mortgageId = await inStatus(account, 'referred');
    expect((await account.member.POST('/v1/applications/{mortgageId}/decline', path(mortgageId))).response.status).toBe(403);
  });
});

describe('withdrawApplication', () => {
  it('withdraws a draft and records when', async () => {
    const mortgageId = await inStatus(account, 'draft');
    const { data } = await account.member.POST('/v1/applications/{mortgageId}/withdraw', path(mortgageId));
    expect(data!.status).toBe('withdrawn');
    expect(data!.withdrawnAt).toBe(data!.updatedAt);
  });
});

describe('getUnderwritingRules', () => {
  it('shows the defaults, with updatedAt null, until an admin sets rules', async () => {
    const fresh = await app.newAccount('Default Rules Lending');
    const { data } = await fresh.client.GET('/v1/underwriting');
    expect(data).toEqual({
      debtToIncome: { approveAtMost: 43, referAtMost: 50 },
      loanToValue: { approveAtMost: 97, referAtMost: 100 },
      creditScore: { approveAtLeast: 620, referAtLeast: 580 },
      loanAmount: { approveAtMost: 832750, referAtMost: 1249125 },
      conditions: [
        { type: 'income_proof', description: 'Proof of income (recent pay stubs or a tax return)', dueBefore: 'closing' },
        { type: 'bank_account_verified', description: "The applicant's bank account verified with a partner bank", dueBefore: 'closing' },
        { type: 'property_appraisal', description: 'An appraisal valuing the property at or above the stated property value', dueBefore: 'closing' },
      ],
      updatedAt: null,
      livemode: true,
    });
  });

  it('is admin only (403 for a member key)', async () => {
    expect((await account.member.GET('/v1/underwriting')).response.status).toBe(403);
  });
});

describe('updateUnderwritingRules', () => {
  const STRICT = {
    debtToIncome: { approveAtMost: 36.5, referAtMost: 45 },
    loanToValue: { approveAtMost: 80, referAtMost: 90 },
    creditScore: { approveAtLeast: 740, referAtLeast: 700 },
    loanAmount: { approveAtMost: 500000, referAtMost: 766550.5 },
  };

  it('sets the rules, reads them back, and the next submission is decided by them', async () => {
    const owner = await app.newAccount('Strict Lending');
    const put = await owner.client.PUT('/v1/underwriting', { body: STRICT });
    expect(put.response.status).toBe(200);
    expect(put.data).toMatchObject(STRICT);
    expect(put.data!.updatedAt).not.toBeNull();
    expect((await owner.client.GET('/v1/underwriting')).data).toEqual(put.data);

    // Score 720 passes the defaults but is a near miss of 740; LTV 77.778 % is within 80.
    const decided = await submitted(owner, COMPLETE);
    expect(decided.status).toBe('referred');
    expect(decided.decision!.reasons.find((r) => r.rule === 'credit_score')).toMatchObject({ threshold: 740, referralLimit: 700, effect: 'refer' });
    // The other account still uses the defaults.
    expect((await submitted(account, COMPLETE)).status).toBe('approved');
  });

  it('refuses a referral limit on the wrong side of its threshold (422), changing nothing', async () => {
    const owner = await app.newAccount('Confused Lending');
    const { response, error } = await owner.client.PUT('/v1/underwriting', {
      body: { ...STRICT, creditScore: { approveAtLeast: 620, referAtLeast: 650 } },
    });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'invalid_underwriting_rules', errors: [{ pointer: '/creditScore/referAtLeast' }] });
    expect((await owner.client.GET('/v1/underwriting')).data!.updatedAt).toBeNull();
  });

  it('refuses a percentage with more than three decimals (400)', async () => {
    const { response, error } = await account.client.PUT('/v1/underwriting', {
      body: { ...STRICT, debtToIncome: { approveAtMost: 43.0001, referAtMost: 50 } },
    });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ errors: [{ pointer: '/debtToIncome/approveAtMost' }] });
  });

  it('is admin only (403 for a member key)', async () => {
    expect((await account.member.PUT('/v1/underwriting', { body: STRICT })).response.status).toBe(403);
  });
});

describe('the application.approved event', () => {
  let approvedOnly: Receiver;
  let documentsOnly: Receiver;
  let approvedOnlyId: string;
  let owner: TestAccount;

  beforeAll(async () => {
    owner = await app.newAccount('Evented Lending');
    approvedOnly = await startReceiver();
    documentsOnly = await startReceiver();
    for (const [receiver, events] of [
      [approvedOnly, ['application.approved']],
      [documentsOnly, ['document.uploaded']],
    ] as const) {
      const { data, response, error } = await owner.client.POST('/v1/webhooks', { body: { url: receiver.url(), events: [...events] } });
      expect(response.status, JSON.stringify(error)).toBe(201);
      if (receiver === approvedOnly) approvedOnlyId = data!.webhookId;
    }
  });
  afterAll(async () => {
    await approvedOnly.close();
    await documentsOnly.close();
  });

  it('an automatic approval sends exactly the section 6.1 payload, to the endpoint that chose it only', async () => {
    const decided = await submitted(owner, COMPLETE);
    const [delivery] = await approvedOnly.waitFor(1);
    expect(specPayloadErrors(delivery!.body)).toBeNull();
    expect(JSON.parse(delivery!.body)).toEqual({
      event: 'application.approved',
      mortgageId: decided.mortgageId,
      status: 'approved',
      applicant: { name: 'Jane Doe', amount: 350000 },
      timestamp: decided.decision!.decidedAt,
    });
    expect(documentsOnly.deliveries).toEqual([]);
  });

  it("a reviewer's approval sends it too, timestamped at the approval; referrals and declines send nothing", async () => {
    const before = approvedOnly.deliveries.length;
    const mortgageId = await inStatus(owner, 'referred');
    await inStatus(owner, 'declined');
    const { data } = await owner.client.POST('/v1/applications/{mortgageId}/approve', path(mortgageId));
    const deliveries = await approvedOnly.waitFor(before + 1);
    const payload = JSON.parse(deliveries.at(-1)!.body);
    // Exactly these fields: the spec's payload schema is open to additive change, the service's payload is not.
    expect(payload).toEqual({
      event: 'application.approved',
      mortgageId,
      status: 'approved',
      applicant: { name: data!.applicant.name, amount: data!.applicant.amount },
      timestamp: data!.decision!.decidedAt,
    });
    expect(specPayloadErrors(deliveries.at(-1)!.body)).toBeNull();
    // A test event sent afterwards is the sentinel: a stray delivery (of the referral or the decline) would come before it.
    const earlier = await deliveriesBeforeSentinel(approvedOnly, async () => {
      const sent = await owner.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: approvedOnlyId } }, body: { event: 'application.approved' } });
      return sent.data!.eventId;
    }, before);
    expect(earlier.map((d) => JSON.parse(d.body).mortgageId)).toEqual([mortgageId]);
    expect(documentsOnly.deliveries).toEqual([]);
  });
});
