/**
 * Conditions over HTTP: attached at approval by the account's rules (and a reviewer's own),
 * satisfied by an upload of the right document type and by a verified bank check, added,
 * satisfied with a note and waived by an admin, and the move to clear_to_close when nothing due
 * before closing is open, with its events. Every response is checked against the contract by the
 * test client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

type Application = components['schemas']['Application'];
type ConditionInput = components['schemas']['ConditionInput'];

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

/** Passes every default rule: submitting it approves it. */
const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

/** Fails the default credit score approval threshold but not the referral limit: referred. */
const REFERRABLE = { ...APPROVABLE, applicant: { ...APPROVABLE.applicant, creditScore: 600 } };

const RULES = {
  debtToIncome: { approveAtMost: 43, referAtMost: 50 },
  loanToValue: { approveAtMost: 97, referAtMost: 100 },
  creditScore: { approveAtLeast: 620, referAtLeast: 580 },
  loanAmount: { approveAtMost: 832750, referAtMost: 1249125 },
};

async function accountWithConditions(conditions?: ConditionInput[]): Promise<TestAccount> {
  const account = await app.newAccount('Conditions Lending');
  if (conditions) {
    const { response } = await account.client.PUT('/v1/underwriting', { body: { ...RULES, conditions } });
    expect(response.status).toBe(200);
  }
  return account;
}

async function draft(account: TestAccount, body = APPROVABLE): Promise<string> {
  const { data, response } = await account.client.POST('/v1/applications', { body });
  expect(response.status).toBe(201);
  return data!.mortgageId;
}

async function submit(account: TestAccount, mortgageId: string): Promise<Application> {
  const { data, response, error } = await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

async function approved(account: TestAccount): Promise<Application> {
  const application = await submit(account, await draft(account));
  expect(application.status).toBe('approved');
  return application;
}

async function upload(account: TestAccount, mortgageId: string, documentType: string): Promise<string> {
  const form = new FormData();
  form.set('documentType', documentType);
  form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'evidence.pdf');
  const response = await app.fetch(`/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${account.apiKey}` }, body: form });
  expect(response.status).toBe(201);
  return ((await response.json()) as { documentId: string }).documentId;
}

async function read(account: TestAccount, mortgageId: string): Promise<Application> {
  const { data } = await account.client.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } });
  return data!;
}

async function events(account: TestAccount, event: components['schemas']['WebhookEventType']) {
  const { data } = await account.client.GET('/v1/events', { params: { query: { event } } });
  return data!.data;
}

/** A sandbox bank partner's token for the account `000123456789` held by `holder`. */
async function bankToken(holder: string): Promise<string> {
  const partner = await runAdminCommand(app.ctx, 'bank-partner create', { name: `Conditions Bank ${Math.random()}`, connector: 'sandbox' });
  const minted = await runAdminCommand(app.ctx, 'bank-partner sandbox-token', { partner: partner.partnerId as string, holder, 'account-number': '000123456789' });
  return minted.token as string;
}

function satisfy(account: TestAccount, mortgageId: string, conditionId: string, note = 'Checked the appraisal: 455,000') {
  return account.client.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/satisfy', { params: { path: { mortgageId, conditionId } }, body: { note } });
}

function waive(account: TestAccount, mortgageId: string, conditionId: string, note = 'Tax returns already on file') {
  return account.client.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/waive', { params: { path: { mortgageId, conditionId } }, body: { note } });
}

describe('conditions attached at approval', () => {
  it('an approval by the rules attaches the default conditions, all open, and stays approved', async () => {
    const account = await accountWithConditions();
    const application = await approved(account);
    expect(application.conditions.map((c) => [c.type, c.dueBefore, c.status, c.addedBy, c.satisfiedBy])).toEqual([
      ['income_proof', 'closing', 'open', 'underwriting_rules', null],
      ['bank_account_verified', 'closing', 'open', 'underwriting_rules', null],
      ['property_appraisal', 'closing', 'open', 'underwriting_rules', null],
    ]);
    expect(application.conditions.every((c) => /^cnd-[0-9a-z]{26}$/.test(c.conditionId))).toBe(true);
    expect(await read(account, application.mortgageId)).toEqual(application);
    const [updated] = await events(account, 'application.conditions_updated');
    expect(updated!.payload).toEqual({
      event: 'application.conditions_updated',
      mortgageId: application.mortgageId,
      status: 'approved',
      conditions: application.conditions,
      timestamp: application.decision!.decidedAt,
    });
  });

  it('a document already on file satisfies its condition at approval', async () => {
    const account = await accountWithConditions();
    const mortgageId = await draft(account);
    const documentId = await upload(account, mortgageId, 'income_proof');
    const application = await submit(account, mortgageId);
    expect(application.conditions[0]).toMatchObject({ type: 'income_proof', status: 'satisfied', satisfiedBy: { kind: 'document', documentId, verificationId: null, actor: null, note: null } });
    expect(application.conditions.slice(1).map((c) => c.status)).toEqual(['open', 'open']);
  });

  it('rules with no closing condition clear the approval to close at once, and say so in events', async () => {
    const account = await accountWithConditions([{ type: 'property_appraisal', description: 'Appraisal before funding', dueBefore: 'funding' }]);
    const mortgageId = await draft(account);
    const now = await submit(account, mortgageId);
    expect(now).toEqual(await read(account, mortgageId));
    expect(now.status).toBe('clear_to_close');
    expect(now.decision!.outcome).toBe('approved');
    expect((await events(account, 'application.approved')).map((e) => e.payload)).toEqual([
      { event: 'application.approved', mortgageId, status: 'approved', applicant: { name: 'Jane Doe', amount: 350000 }, timestamp: now.decision!.decidedAt },
    ]);
    expect((await events(account, 'application.cleared_to_close')).map((e) => e.payload)).toEqual([
      { event: 'application.cleared_to_close', mortgageId, status: 'clear_to_close', applicant: { name: 'Jane Doe', amount: 350000 }, timestamp: now.decision!.decidedAt },
    ]);
  });

  it('underwriting rules keep their conditions when a later update leaves them out', async () => {
    const own = [{ type: 'custom' as const, description: 'Gift letter from the donor', dueBefore: 'funding' as const }];
    const account = await accountWithConditions(own);
    const { data } = await account.client.PUT('/v1/underwriting', { body: RULES });
    expect(data!.conditions).toEqual(own);
    expect((await account.client.GET('/v1/underwriting')).data!.conditions).toEqual(own);
  });
});

describe('satisfied by evidence', () => {
  it('an upload of the right type satisfies the matching open condition; another type does not', async () => {
    const account = await accountWithConditions();
    const { mortgageId } = await approved(account);
    await upload(account, mortgageId, 'other');
    expect((await read(account, mortgageId)).conditions.map((c) => c.status)).toEqual(['open', 'open', 'open']);
    const documentId = await upload(account, mortgageId, 'income_proof');
    const after = await read(account, mortgageId);
    expect(after.conditions[0]).toMatchObject({ status: 'satisfied', satisfiedBy: { kind: 'document', documentId } });
    expect(after.conditions.slice(1).map((c) => c.status)).toEqual(['open', 'open']);
    expect(after.status).toBe('approved');
    const [latest] = await events(account, 'application.conditions_updated');
    expect((latest!.payload as { conditions: unknown }).conditions).toEqual(after.conditions);
  });

  it('a verified bank check satisfies bank_account_verified; an unverified one does not', async () => {
    const account = await accountWithConditions();
    const { mortgageId } = await approved(account);
    const token = await bankToken('Jane Doe');
    const wrong = await app.clientFor(token).POST('/v1/banks/verify', { body: { mortgageId, applicant: { accountNumber: '000123456780' } } });
    expect(wrong.data!.verified).toBe(false);
    expect((await read(account, mortgageId)).conditions[1]!.status).toBe('open');
    const right = await app.clientFor(token).POST('/v1/banks/verify', { body: { mortgageId, applicant: { accountNumber: '000123456789' } } });
    expect(right.data!.verified).toBe(true);
    expect((await read(account, mortgageId)).conditions[1]).toMatchObject({
      type: 'bank_account_verified',
      status: 'satisfied',
      satisfiedBy: { kind: 'bank_verification', verificationId: right.data!.verificationId, documentId: null },
    });
  });

  it('the last closing condition cleared moves the application to clear_to_close, once, with application.cleared_to_close', async () => {
    const account = await accountWithConditions([
      { type: 'income_proof', description: 'Pay stubs', dueBefore: 'closing' },
      { type: 'identity', description: 'Photo identity', dueBefore: 'closing' },
      { type: 'bank_statement', description: 'Bank statement', dueBefore: 'funding' },
    ]);
    const { mortgageId } = await approved(account);
    await upload(account, mortgageId, 'income_proof');
    expect((await read(account, mortgageId)).status).toBe('approved');
    await upload(account, mortgageId, 'identity');
    const cleared = await read(account, mortgageId);
    expect(cleared.status).toBe('clear_to_close');
    expect(cleared.conditions.map((c) => c.status)).toEqual(['satisfied', 'satisfied', 'open']);
    // A funding condition cleared later changes the conditions, not the status.
    await upload(account, mortgageId, 'bank_statement');
    expect((await read(account, mortgageId)).status).toBe('clear_to_close');
    expect(await events(account, 'application.cleared_to_close')).toHaveLength(1);
    expect(await events(account, 'application.conditions_updated')).toHaveLength(4);
  });
});

describe('addCondition', () => {
  it('an admin adds a free-text condition to an approved application (201, last of conditions, open)', async () => {
    const account = await accountWithConditions();
    const { mortgageId } = await approved(account);
    const { data, response } = await account.client.POST('/v1/applications/{mortgageId}/conditions', {
      params: { path: { mortgageId } },
      body: { type: 'custom', description: 'Letter explaining the employment gap in 2025', dueBefore: 'closing' },
    });
    expect(response.status).toBe(201);
    expect(data!.conditions).toHaveLength(4);
    expect(data!.conditions[3]).toMatchObject({ type: 'custom', description: 'Letter explaining the employment gap in 2025', status: 'open', addedBy: 'underwriter', satisfiedBy: null });
  });

  it('is refused for an application that is not approved (409 application_not_approved) and for a member key (403)', async () => {
    const account = await accountWithConditions();
    const mortgageId = await draft(account);
    const body = { type: 'custom' as const, description: 'Anything', dueBefore: 'closing' as const };
    const refused = await account.client.POST('/v1/applications/{mortgageId}/conditions', { params: { path: { mortgageId } }, body });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'application_not_approved', currentStatus: 'draft' });
    const { mortgageId: approvedId } = await approved(account);
    expect((await account.member.POST('/v1/applications/{mortgageId}/conditions', { params: { path: { mortgageId: approvedId } }, body })).response.status).toBe(403);
  });

  it('a closing condition is refused once clear to close (409 application_cleared); a funding one is taken', async () => {
    const account = await accountWithConditions([]);
    const mortgageId = await draft(account);
    expect((await submit(account, mortgageId)).status).toBe('clear_to_close');
    const closing = await account.client.POST('/v1/applications/{mortgageId}/conditions', {
      params: { path: { mortgageId } },
      body: { type: 'custom', description: 'Late closing condition', dueBefore: 'closing' },
    });
    expect(closing.response.status).toBe(409);
    expect(closing.error).toMatchObject({ code: 'application_cleared' });
    const funding = await account.client.POST('/v1/applications/{mortgageId}/conditions', {
      params: { path: { mortgageId } },
      body: { type: 'custom', description: 'Signed closing disclosure', dueBefore: 'funding' },
    });
    expect(funding.response.status).toBe(201);
    expect(funding.data!.status).toBe('clear_to_close');
  });
});

describe('satisfyCondition', () => {
  it('an admin satisfies an open condition with a note; the note and key are kept', async () => {
    const account = await accountWithConditions();
    const { mortgageId, conditions } = await approved(account);
    const appraisal = conditions[2]!;
    const { data, response } = await satisfy(account, mortgageId, appraisal.conditionId);
    expect(response.status).toBe(200);
    expect(data!.conditions[2]).toMatchObject({ status: 'satisfied', satisfiedBy: { kind: 'underwriter', note: 'Checked the appraisal: 455,000', documentId: null } });
    expect(data!.conditions[2]!.satisfiedBy!.actor).toMatch(/^key-[0-9a-z]{26}$/);
  });

  it('a condition no longer open is refused (409 condition_not_open), an unknown one is 404, a member key 403', async () => {
    const account = await accountWithConditions();
    const { mortgageId, conditions } = await approved(account);
    expect((await satisfy(account, mortgageId, conditions[0]!.conditionId)).response.status).toBe(200);
    const again = await satisfy(account, mortgageId, conditions[0]!.conditionId);
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'condition_not_open' });
    expect((await satisfy(account, mortgageId, 'cnd-01jdz8q5b2d4f6h8k0m2p4r6t8')).response.status).toBe(404);
    const member = await account.member.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/satisfy', {
      params: { path: { mortgageId, conditionId: conditions[1]!.conditionId } },
      body: { note: 'Member tries' },
    });
    expect(member.response.status).toBe(403);
    const other = await app.newAccount('Other Lending');
    expect((await satisfy(other, mortgageId, conditions[1]!.conditionId)).response.status).toBe(404);
  });
});

describe('waiveCondition', () => {
  it('an admin waives the open conditions; the last closing one clears the application to close', async () => {
    const account = await accountWithConditions();
    const { mortgageId, conditions } = await approved(account);
    for (const condition of conditions.slice(0, 2)) expect((await waive(account, mortgageId, condition.conditionId)).data!.status).toBe('approved');
    const { data } = await waive(account, mortgageId, conditions[2]!.conditionId);
    expect(data!.status).toBe('clear_to_close');
    expect(data!.conditions.map((c) => [c.status, c.satisfiedBy?.kind, c.satisfiedBy?.note])).toEqual([
      ['waived', 'underwriter', 'Tax returns already on file'],
      ['waived', 'underwriter', 'Tax returns already on file'],
      ['waived', 'underwriter', 'Tax returns already on file'],
    ]);
    expect(await events(account, 'application.cleared_to_close')).toHaveLength(1);
    const filtered = await account.client.GET('/v1/applications', { params: { query: { status: 'clear_to_close' } } });
    expect(filtered.data!.data.map((a) => a.mortgageId)).toEqual([mortgageId]);
  });

  it('a note is required (400)', async () => {
    const account = await accountWithConditions();
    const { mortgageId, conditions } = await approved(account);
    const response = await app.fetch(`/v1/applications/${mortgageId}/conditions/${conditions[0]!.conditionId}/waive`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(400);
    expect((await read(account, mortgageId)).conditions[0]!.status).toBe('open');
  });
});

describe("a restricted key's scopes", () => {
  /** A restricted key of the account with exactly `scopes`, made by its admin key. */
  async function restricted(account: TestAccount, scopes: components['schemas']['ApiKeyScopes']): Promise<TestAccount> {
    const { data, response } = await account.client.POST('/v1/api-keys', { body: { name: `Scopes ${JSON.stringify(scopes)}`, scopes } });
    expect(response.status).toBe(201);
    return { ...account, apiKey: data!.apiKey, client: app.clientFor(data!.apiKey) };
  }

  it('an intake key (applications:write, quotes:write) cannot add, satisfy or waive a condition: 403 naming underwriting:write, and the application stays approved', async () => {
    const account = await accountWithConditions();
    const application = await approved(account);
    const { mortgageId, conditions } = application;
    const intake = await restricted(account, { applications: 'write', quotes: 'write' });
    const added = await intake.client.POST('/v1/applications/{mortgageId}/conditions', {
      params: { path: { mortgageId } },
      body: { type: 'custom', description: 'Anything', dueBefore: 'closing' },
    });
    const refusals = [added];
    for (const condition of conditions) refusals.push(await satisfy(intake, mortgageId, condition.conditionId), await waive(intake, mortgageId, condition.conditionId));
    for (const refused of refusals) {
      expect(refused.response.status).toBe(403);
      expect(refused.error).toMatchObject({ code: 'scope_missing', requiredScope: 'underwriting:write' });
    }
    expect(await read(account, mortgageId)).toEqual(application);
    expect(await events(account, 'application.cleared_to_close')).toEqual([]);
  });

  it('a key with underwriting:write clears the conditions, as the underwriting desk does', async () => {
    const account = await accountWithConditions();
    const { mortgageId, conditions } = await approved(account);
    const desk = await restricted(account, { underwriting: 'write' });
    for (const condition of conditions) expect((await waive(desk, mortgageId, condition.conditionId)).response.status).toBe(200);
    expect((await read(account, mortgageId)).status).toBe('clear_to_close');
  });
});

describe('a reviewer approval with conditions of its own', () => {
  it("attaches the rules' conditions, then the reviewer's, and keeps the reason", async () => {
    const account = await accountWithConditions([{ type: 'income_proof', description: 'Pay stubs', dueBefore: 'closing' }]);
    const referred = await submit(account, await draft(account, REFERRABLE));
    expect(referred.status).toBe('referred');
    expect(referred.conditions).toEqual([]);
    const { data } = await account.client.POST('/v1/applications/{mortgageId}/approve', {
      params: { path: { mortgageId: referred.mortgageId } },
      body: { note: 'Verified bonus income', conditions: [{ type: 'custom', description: 'Employer letter', dueBefore: 'closing' }] },
    });
    expect(data!.status).toBe('approved');
    expect(data!.decision).toMatchObject({ decidedBy: 'reviewer', note: 'Verified bonus income' });
    expect(data!.conditions.map((c) => [c.type, c.addedBy])).toEqual([
      ['income_proof', 'underwriting_rules'],
      ['custom', 'underwriter'],
    ]);
  });
});
