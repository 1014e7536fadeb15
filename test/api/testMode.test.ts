/**
 * Test mode: every account's test environment, reached with its `mos_test_…` keys, kept apart
 * from live both ways; self-served sandbox bank tokens; the documented test values; removing the
 * test data; and the whole walk a partner makes with nothing but a test key.
 *
 * Per-resource isolation of every operation with a path id is also checked by the auth matrix
 * (test/contract/authMatrix.test.ts); here are lists, exports, webhooks and bank verification.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testValues } from '../../src/contract/testValues.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { spec } from '../helpers/contractFetch.ts';
import { apiClient, startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

let app: TestApp;
let lender: TestAccount;
let dispatcher: WebhookDispatcher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
  lender = await app.newAccount('Harbor Lending');
  dispatcher = new WebhookDispatcher(app.ctx).start();
});

afterAll(async () => {
  await dispatcher?.stop();
  for (const r of receivers) await r.close();
  await app?.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const applicantOf = (outcome: 'approved' | 'referred' | 'declined') => {
  const found = testValues().applicants.find((a) => a.outcome === outcome);
  if (!found) throw new Error(`x-test-values has no ${outcome} applicant`);
  return structuredClone(found.request) as { applicant: { name: string; amount: number; accountNumber?: string }; term: number; propertyValue: number };
};

async function createApplication(as: TestAccount['client'], outcome: 'approved' | 'referred' | 'declined' = 'approved') {
  const { applicant, term, propertyValue } = applicantOf(outcome);
  const { accountNumber: _number, ...input } = applicant;
  const { data, response, error } = await as.POST('/v1/applications', { body: { applicant: input, term, propertyValue } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

async function mintTestToken(owner: TestAccount, holderName: string, accountNumber: string) {
  const { data, response, error } = await owner.test.POST('/v1/test/bank-tokens', { body: { holderName, accountNumber } });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

/**
 * How many rows each table holds for one environment (every table with an account_id column, read
 * from the schema so a new table is counted too), and the document chunks of its documents (PostgreSQL).
 */
async function rowsOf(environmentId: string): Promise<Record<string, number>> {
  return app.ctx.store.read(async (db) => {
    const tables =
      app.engine === 'postgres'
        ? await db.all<{ name: string }>("SELECT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'account_id' ORDER BY 1")
        : await db.all<{ name: string }>("SELECT m.name AS name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'account_id' ORDER BY 1");
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${name} WHERE account_id = ?`, [environmentId]))!.n);
    if (app.engine === 'postgres') {
      counts.document_chunks = Number(
        (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM document_chunks c JOIN documents d ON d.id = c.document_id WHERE d.account_id = ?', [environmentId]))!.n,
      );
    }
    return counts;
  });
}

async function verify(token: string, mortgageId: string, accountNumber: string) {
  return apiClient(app.baseUrl, token).POST('/v1/banks/verify', { body: { mortgageId, applicant: { accountNumber } } });
}

describe('API keys and the account in each mode', () => {
  it('a test key makes test keys; every key and the account say their mode', async () => {
    const { data: created } = await lender.test.POST('/v1/api-keys', { body: { role: 'member', name: 'Test member' } });
    expect(created!.apiKey).toMatch(/^mos_test_[0-9A-Za-z]{38}$/);
    expect(created!.hint).toBe(`mos_test_…${created!.apiKey.slice(-4)}`);
    expect(created!.livemode).toBe(false);
    const { data: live } = await lender.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Live member' } });
    expect(live!.apiKey).toMatch(/^mos_live_/);
    expect(live!.livemode).toBe(true);

    const testKeys = (await lender.test.GET('/v1/api-keys')).data!.data;
    expect(testKeys.every((k) => k.livemode === false && k.hint.startsWith('mos_test_'))).toBe(true);
    expect(testKeys.map((k) => k.keyId)).not.toContain(live!.keyId);
    const liveKeys = (await lender.client.GET('/v1/api-keys')).data!.data;
    expect(liveKeys.map((k) => k.keyId)).not.toContain(created!.keyId);

    // The same account, under its own id, in either mode.
    const asTest = (await lender.test.GET('/v1/account')).data!;
    const asLive = (await lender.client.GET('/v1/account')).data!;
    expect(asTest).toEqual({ ...asLive, livemode: false });
    expect(asLive.accountId).toBe(lender.accountId);
    expect(asLive.livemode).toBe(true);
  });

  it('the operator makes a key of either mode with key create --mode', async () => {
    const owner = await app.newAccount('Operator Keys Lending');
    const test = await runAdminCommand(app.ctx, 'key create', { account: owner.accountId, role: 'member', mode: 'test' });
    expect(test.apiKey).toMatch(/^mos_test_/);
    const { data } = await apiClient(app.baseUrl, test.apiKey as string).GET('/v1/account');
    expect(data).toMatchObject({ accountId: owner.accountId, livemode: false });
    const live = await runAdminCommand(app.ctx, 'key create', { account: owner.accountId, role: 'member' });
    expect(live.apiKey).toMatch(/^mos_live_/);
    await expect(runAdminCommand(app.ctx, 'key create', { account: owner.accountId, role: 'member', mode: 'staging' })).rejects.toThrow(/--mode must be live or test/);
  });

  it("a key whose prefix names the other mode is refused (the prefix must say the key's mode)", async () => {
    const swapped = lender.testKey.replace(/^mos_test_/, 'mos_live_');
    const { response } = await apiClient(app.baseUrl, swapped).GET('/v1/account');
    expect(response.status).toBe(401);
  });
});

describe('lists, exports and settings never mix the modes', () => {
  it('quotes, applications, webhooks, export formats and settings of test stay in test, and the reverse', async () => {
    const owner = await app.newAccount('Isolation Lending');
    const testApp = await createApplication(owner.test);
    const liveApp = await createApplication(owner.client);
    expect(testApp.livemode).toBe(false);
    expect(liveApp.livemode).toBe(true);

    const testList = (await owner.test.GET('/v1/applications')).data!.data;
    const liveList = (await owner.client.GET('/v1/applications')).data!.data;
    expect(testList.map((a) => a.mortgageId)).toEqual([testApp.mortgageId]);
    expect(liveList.map((a) => a.mortgageId)).toEqual([liveApp.mortgageId]);

    const { data: quote } = await owner.test.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
    expect(quote!.livemode).toBe(false);
    expect((await owner.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: quote!.quoteId } } })).response.status).toBe(404);
    const { data: schedule } = await owner.test.GET('/v1/quotes/{quoteId}/schedule', { params: { path: { quoteId: quote!.quoteId } } });
    expect((schedule as unknown as { livemode: boolean }).livemode).toBe(false);

    const hook = await receiver();
    const { data: endpoint } = await owner.test.POST('/v1/webhooks', { body: { url: hook.url('/test'), events: ['application.approved'] } });
    expect(endpoint!.livemode).toBe(false);
    expect((await owner.client.GET('/v1/webhooks')).data!.data).toEqual([]);
    expect((await owner.test.GET('/v1/webhooks')).data!.data.map((w) => w.webhookId)).toEqual([endpoint!.webhookId]);

    const { data: format } = await owner.test.POST('/v1/export-formats', { body: { name: 'semicolons', base: 'csv', csv: { delimiter: ';' } } });
    expect(format!.livemode).toBe(false);
    expect((await owner.client.GET('/v1/export-formats')).data!.data).toEqual([]);
    // The same name is free in live: the two environments' names do not meet either.
    const { response: liveFormat } = await owner.client.POST('/v1/export-formats', { body: { name: 'semicolons', base: 'csv', csv: { delimiter: '|' } } });
    expect(liveFormat.status).toBe(201);

    // Test settings start as the defaults and change without touching live.
    const liveRules = (await owner.client.GET('/v1/underwriting')).data!;
    const testRules = (await owner.test.GET('/v1/underwriting')).data!;
    expect(testRules).toEqual({ ...liveRules, livemode: false });
    const { livemode: _l, updatedAt: _u, ...rules } = testRules;
    const stricter = { ...rules, creditScore: { approveAtLeast: 700, referAtLeast: 650 } };
    expect((await owner.test.PUT('/v1/underwriting', { body: stricter })).response.status).toBe(200);
    expect((await owner.client.GET('/v1/underwriting')).data).toEqual(liveRules);
    const livePricing = (await owner.client.GET('/v1/pricing')).data!;
    expect(livePricing.livemode).toBe(true);
    expect((await owner.test.GET('/v1/pricing')).data).toEqual({ ...livePricing, livemode: false });
    const higher = { ...livePricing.rateSheet, baseRates: livePricing.rateSheet.baseRates.map((b) => ({ ...b, rate: b.rate + 1 })) };
    const testPricing = await owner.test.PUT('/v1/pricing', { body: higher });
    expect(testPricing.data).toMatchObject({ isDefault: false, livemode: false });
    expect((await owner.client.GET('/v1/pricing')).data).toEqual(livePricing);

    // Exports hold only the caller's mode.
    const testExport = await app.fetch('/v1/mortgages/export?format=ndjson', { headers: { Authorization: `Bearer ${owner.testKey}` } });
    const testIds = (await testExport.text()).trim().split('\n').map((l) => (JSON.parse(l) as { mortgageId: string }).mortgageId);
    expect(testIds).toEqual([testApp.mortgageId]);
    const liveExport = await app.fetch('/v1/mortgages/export?format=ndjson', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    const liveIds = (await liveExport.text()).trim().split('\n').map((l) => (JSON.parse(l) as { mortgageId: string }).mortgageId);
    expect(liveIds).toEqual([liveApp.mortgageId]);
  });

  it('a test endpoint receives only test events, a live endpoint only live ones', async () => {
    const owner = await app.newAccount('Events Lending');
    const testHook = await receiver();
    const liveHook = await receiver();
    await owner.test.POST('/v1/webhooks', { body: { url: testHook.url('/t'), events: ['application.approved'] } });
    await owner.client.POST('/v1/webhooks', { body: { url: liveHook.url('/l'), events: ['application.approved'] } });

    const testApp = await createApplication(owner.test, 'approved');
    await owner.test.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: testApp.mortgageId } } });
    const [testDelivery] = await testHook.waitFor(1);
    expect(JSON.parse(testDelivery!.body)).toMatchObject({ event: 'application.approved', mortgageId: testApp.mortgageId });

    const liveApp = await createApplication(owner.client, 'approved');
    await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: liveApp.mortgageId } } });
    const [liveDelivery] = await liveHook.waitFor(1);
    expect(JSON.parse(liveDelivery!.body)).toMatchObject({ mortgageId: liveApp.mortgageId });

    // Which endpoints an event goes to is decided when it is published (a delivery row per endpoint,
    // in the transaction of the change): each endpoint has exactly the one event of its mode to send.
    const fanOut = await app.ctx.store.read((db) =>
      db.all<{ webhook_id: string; payload: string }>(
        `SELECT d.webhook_id, v.payload FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id
          WHERE d.account_id IN (?, ?) ORDER BY d.webhook_id`,
        [owner.accountId, `${owner.accountId}.test`],
      ),
    );
    const hooks = [...(await owner.test.GET('/v1/webhooks')).data!.data, ...(await owner.client.GET('/v1/webhooks')).data!.data];
    const sentTo = (livemode: boolean) => fanOut.filter((d) => hooks.find((h) => h.webhookId === d.webhook_id)!.livemode === livemode).map((d) => JSON.parse(d.payload).mortgageId);
    expect(sentTo(false)).toEqual([testApp.mortgageId]);
    expect(sentTo(true)).toEqual([liveApp.mortgageId]);
    expect(testHook.deliveries.map((d) => JSON.parse(d.body).mortgageId)).toEqual([testApp.mortgageId]);
    expect(liveHook.deliveries.map((d) => JSON.parse(d.body).mortgageId)).toEqual([liveApp.mortgageId]);

    // The events feed of each mode holds that mode's events only (each submission's three: submitted, approved, conditions).
    const testFeed = (await owner.test.GET('/v1/events')).data!.data;
    const liveFeed = (await owner.client.GET('/v1/events')).data!.data;
    expect(testFeed.map((e) => [e.payload.mortgageId, e.livemode])).toEqual(Array(3).fill([testApp.mortgageId, false]));
    expect(liveFeed.map((e) => [e.payload.mortgageId, e.livemode])).toEqual(Array(3).fill([liveApp.mortgageId, true]));
  });
});

describe('createTestBankToken', () => {
  it('issues a token of the test-mode bank that verifies this test environment’s applications only', async () => {
    const owner = await app.newAccount('Token Lending');
    const application = await createApplication(owner.test);
    const token = await mintTestToken(owner, application.applicant.name, '000123456789');
    expect(token).toEqual({
      bankToken: expect.stringMatching(/^bnk_tok_testmodesandbox00000000000_/),
      accountMask: '6789',
      expiresAt: expect.any(String),
      livemode: false,
    });

    const { data, response } = await verify(token.bankToken, application.mortgageId, '000123456789');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ mortgageId: application.mortgageId, verified: true, failedChecks: [], livemode: false });

    // Not a live application of the same account, nor another account's test application.
    const liveApplication = await createApplication(owner.client);
    expect((await verify(token.bankToken, liveApplication.mortgageId, '000123456789')).response.status).toBe(404);
    const other = await app.newAccount('Other Lending');
    const foreign = await createApplication(other.test);
    expect((await verify(token.bankToken, foreign.mortgageId, '000123456789')).response.status).toBe(404);

    // A bank token is refused on every operation that takes an API key.
    expect((await apiClient(app.baseUrl, token.bankToken).GET('/v1/applications')).response.status).toBe(401);
  });

  it('a live sandbox token (minted by the operator) does not reach test applications', async () => {
    const owner = await app.newAccount('Live Token Lending');
    const partner = await runAdminCommand(app.ctx, 'bank-partner create', { name: 'Operator Sandbox', connector: 'sandbox' });
    const application = await createApplication(owner.test);
    const minted = await runAdminCommand(app.ctx, 'bank-partner sandbox-token', {
      partner: partner.partnerId as string,
      holder: application.applicant.name,
      'account-number': '000123456789',
    });
    expect((await verify(minted.token as string, application.mortgageId, '000123456789')).response.status).toBe(404);
    const live = await createApplication(owner.client);
    expect((await verify(minted.token as string, live.mortgageId, '000123456789')).response.status).toBe(200);
  });

  it('the operator cannot mint test-mode tokens or restrict the test-mode bank', async () => {
    await expect(
      runAdminCommand(app.ctx, 'bank-partner sandbox-token', { partner: 'bnk-testmodesandbox00000000000', holder: 'A B', 'account-number': '000123456789' }),
    ).rejects.toThrow(/POST \/v1\/test\/bank-tokens/);
  });

  it('a live key gets 404, a member key 403, and a bad body 400 changing nothing', async () => {
    const owner = await app.newAccount('Refusals Lending');
    const live = await owner.client.POST('/v1/test/bank-tokens', { body: { holderName: 'A B', accountNumber: '000123456789' } });
    expect(live.response.status).toBe(404);
    expect(live.error).toMatchObject({ code: 'not_found' });
    const { data: member } = await owner.test.POST('/v1/api-keys', { body: { role: 'member', name: 'm' } });
    const asMember = await apiClient(app.baseUrl, member!.apiKey).POST('/v1/test/bank-tokens', { body: { holderName: 'A B', accountNumber: '000123456789' } });
    expect(asMember.response.status).toBe(403);
    const bad = await owner.test.POST('/v1/test/bank-tokens', { body: { holderName: '   ', accountNumber: '12-34' } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'validation_failed' });
  });

  it('answers 503 test_bank_disabled while the operator has the test-mode bank turned off', async () => {
    const owner = await app.newAccount('Disabled Bank Lending');
    await runAdminCommand(app.ctx, 'bank-partner disable', { partner: 'bnk-testmodesandbox00000000000' });
    try {
      const { response, error } = await owner.test.POST('/v1/test/bank-tokens', { body: { holderName: 'A B', accountNumber: '000123456789' } });
      expect(response.status).toBe(503);
      expect(error).toMatchObject({ code: 'test_bank_disabled' });
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await runAdminCommand(app.ctx, 'bank-partner enable', { partner: 'bnk-testmodesandbox00000000000' });
    }
  });
});

describe('the documented test values', () => {
  it('each sandbox account number gives exactly its documented answer, in test mode only', async () => {
    const owner = await app.newAccount('Values Lending');
    const examples = (await import('../../generated/openapi.json', { with: { type: 'json' } })).default as unknown as {
      paths: Record<string, { post: { responses: Record<string, { content?: Record<string, { examples?: Record<string, { value: Record<string, unknown> }> }> }> } }>;
    };
    const verifyExamples = examples.paths['/v1/banks/verify']!.post.responses['200']!.content!['application/json']!.examples!;
    const verifiedOf = new Map<string, string>();
    for (const value of testValues().bankAccounts) {
      const application = await createApplication(owner.test);
      verifiedOf.set(application.mortgageId, value.behaviour);
      const token = await mintTestToken(owner, application.applicant.name, value.accountNumber);
      const { response, data, error } = await verify(token.bankToken, application.mortgageId, value.accountNumber);
      expect(response.status, `${value.accountNumber}: ${JSON.stringify(error ?? data)}`).toBe(value.answer.status);
      if (value.answer.example) {
        const documented = verifyExamples[value.answer.example]!.value;
        expect(data, value.accountNumber).toMatchObject({
          verified: documented.verified,
          failedChecks: documented.failedChecks,
          nameMatch: { outcome: (documented.nameMatch as { outcome: string }).outcome },
          livemode: false,
        });
      } else {
        expect(error, value.accountNumber).toMatchObject({ code: value.answer.code });
      }
      if (value.behaviour === 'partner_unavailable') expect(response.headers.get('retry-after')).toBe('30');
    }
    // Nothing is recorded for the unavailable bank (502); every answer of the bank is (the export shows each application's latest).
    const exported = await app.fetch('/v1/mortgages/export?format=ndjson', { headers: { Authorization: `Bearer ${owner.testKey}` } });
    const recorded = (await exported.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { mortgageId: string; bankVerification: { verified: boolean } | null });
    expect(Object.fromEntries(recorded.map((r) => [verifiedOf.get(r.mortgageId), r.bankVerification?.verified ?? null]))).toEqual({
      account_of_token_holder: true,
      other_holder: false,
      closed: null,
      partner_unavailable: null,
    });

    // In live the same numbers are ordinary: the operator's sandbox token for 000333333333 verifies.
    const partner = await runAdminCommand(app.ctx, 'bank-partner create', { name: 'Live Values Sandbox', connector: 'sandbox' });
    const live = await createApplication(owner.client);
    for (const value of testValues().bankAccounts) {
      const minted = await runAdminCommand(app.ctx, 'bank-partner sandbox-token', {
        partner: partner.partnerId as string,
        holder: live.applicant.name,
        'account-number': value.accountNumber,
      });
      const { response, data } = await verify(minted.token as string, live.mortgageId, value.accountNumber);
      expect(response.status, value.accountNumber).toBe(200);
      expect(data!.verified, value.accountNumber).toBe(true);
    }
  });

  it('the documented applicants are approved, referred and declined under the default rules', async () => {
    const owner = await app.newAccount('Applicants Lending');
    for (const { outcome } of testValues().applicants) {
      const application = await createApplication(owner.test, outcome);
      const { data } = await owner.test.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: application.mortgageId } } });
      expect(data!.status, outcome).toBe(outcome);
    }
  });
});

describe("the spec's application examples", () => {
  type Json = Record<string, any>;

  it.each([
    ['submit', 'approved', null],
    ['submit', 'referred', null],
    ['submit', 'declined', null],
    ['approve', 'approved', 'note'],
    ['decline', 'declined', 'note'],
  ] as const)('%s → %s: test mode decides the example\'s applicant exactly as the example shows', async (action, name, requestExample) => {
    const operation = spec.paths[`/v1/applications/{mortgageId}/${action}`].post;
    const example = operation.responses['200'].content['application/json'].examples[name].value as Json;
    const owner = await app.newAccount(`Examples Lending ${action} ${name}`);
    const { name: applicantName, amount, email, annualIncome, monthlyDebts, creditScore } = example.applicant;
    const { data: created } = await owner.test.POST('/v1/applications', {
      body: { applicant: { name: applicantName, amount, email, annualIncome, monthlyDebts, creditScore }, term: example.term, propertyValue: example.propertyValue },
    });
    const path = { params: { path: { mortgageId: created!.mortgageId } } };
    let answer = (await owner.test.POST('/v1/applications/{mortgageId}/submit', path)).data!;
    if (action !== 'submit') {
      expect(answer.status).toBe('referred');
      const body = operation.requestBody.content['application/json'].examples[requestExample!].value as { note: string };
      answer = (await owner.test.POST(`/v1/applications/{mortgageId}/${action}`, { ...path, body })).data!;
    }
    const { decidedAt: _at, reviewerKeyId: _key, ...decision } = example.decision as Json;
    expect({ status: answer.status, applicant: answer.applicant, decision: answer.decision, livemode: answer.livemode }).toEqual({
      status: example.status,
      applicant: example.applicant,
      decision: { ...decision, decidedAt: expect.any(String), ...(action === 'submit' ? {} : { reviewerKeyId: expect.stringMatching(/^key-/) }) },
      livemode: false,
    });
  });
});

describe('deleteTestData', () => {
  it('removes every test resource in one go, answers the counts, and leaves live untouched (counted)', async () => {
    const owner = await app.newAccount('Cleanup Lending');
    const hook = await receiver();
    const populate = async (client: TestAccount['client'], key: string) => {
      await client.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
      const application = await createApplication(client, 'approved');
      const form = new FormData();
      form.set('documentType', 'income_proof');
      form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'proof.pdf');
      const upload = await app.fetch(`/v1/applications/${application.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
      expect(upload.status).toBe(201);
      await client.POST('/v1/webhooks', { body: { url: hook.url(`/${key.slice(0, 8)}`), events: ['application.approved', 'document.uploaded'] } });
      await client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: application.mortgageId } } });
      await client.POST('/v1/export-formats', { body: { name: 'pipes', base: 'csv', csv: { delimiter: '|' } } });
      const { livemode: _l, updatedAt: _u, ...rules } = (await client.GET('/v1/underwriting')).data!;
      await client.PUT('/v1/underwriting', { body: { ...rules, creditScore: { approveAtLeast: 640, referAtLeast: 600 } } });
      return application;
    };
    const testApplication = await populate(owner.test, owner.testKey);
    const token = await mintTestToken(owner, testApplication.applicant.name, '000123456789');
    expect((await verify(token.bankToken, testApplication.mortgageId, '000123456789')).response.status).toBe(200);
    const liveApplication = await populate(owner.client, owner.apiKey);

    const snapshot = async (client: TestAccount['client']) => ({
      applications: (await client.GET('/v1/applications')).data!.data.length,
      webhooks: (await client.GET('/v1/webhooks')).data!.data.length,
      formats: (await client.GET('/v1/export-formats')).data!.data.length,
      rules: (await client.GET('/v1/underwriting')).data!,
      documents: (await client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId: liveApplication.mortgageId } } })).data?.data.length,
    });
    const liveBefore = await snapshot(owner.client);
    const liveRowsBefore = await rowsOf(owner.accountId);
    const testRowsBefore = await rowsOf(`${owner.accountId}.test`);

    const { data, response } = await owner.test.DELETE('/v1/test/data');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      deleted: { quotes: 1, applications: 1, documents: 1, bankVerifications: 1, webhooks: 1, exportFormats: 1 },
      settingsReset: true,
      livemode: false,
    });
    expect(data!.deleted.events).toBeGreaterThanOrEqual(2); // document.uploaded and application.approved

    expect((await owner.test.GET('/v1/applications')).data!.data).toEqual([]);
    expect((await owner.test.GET('/v1/webhooks')).data!.data).toEqual([]);
    expect((await owner.test.GET('/v1/export-formats')).data!.data).toEqual([]);
    expect((await owner.test.GET('/v1/underwriting')).data!.updatedAt).toBeNull();
    expect((await owner.test.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: testApplication.mortgageId } } })).response.status).toBe(404);
    // Test keys are kept: the caller is still in.
    expect((await owner.test.GET('/v1/account')).response.status).toBe(200);

    expect(await snapshot(owner.client)).toEqual(liveBefore);
    expect(liveBefore).toMatchObject({ applications: 1, webhooks: 1, formats: 1, documents: 1 });
    // Counted in the database: every live row is still there, and of test only its API keys are left.
    // Except the request log, which records these very reads (written in batches, at any moment).
    const withoutRequestLog = ({ request_log_batches: _, ...rows }: Record<string, number>) => rows;
    expect(withoutRequestLog(await rowsOf(owner.accountId))).toEqual(withoutRequestLog(liveRowsBefore));
    expect(liveRowsBefore).toMatchObject({ quotes: 1, applications: 1, documents: 1, webhook_endpoints: 1, export_formats: 1, underwriting_rules: 1 });
    expect(liveRowsBefore.webhook_events).toBeGreaterThanOrEqual(2);
    const testRowsAfter = await rowsOf(`${owner.accountId}.test`);
    // The audit log is no test data: it keeps what happened, the deletion included (test/api/audit.test.ts).
    // The request log stays too: it records the calls (this DELETE among them), not test data, and ages out with REQUEST_LOG_RETENTION_DAYS.
    const kept = new Set(['api_keys', 'audit_events', 'audit_chains', 'request_log_batches']);
    expect(Object.entries(testRowsAfter).filter(([table, n]) => n > 0 && !kept.has(table))).toEqual([]);
    expect(testRowsAfter.audit_events).toBe(testRowsBefore.audit_events! + 1);
    expect(testRowsAfter.api_keys).toBe(testRowsBefore.api_keys);
    expect(testRowsBefore).toMatchObject({ quotes: 1, applications: 1, documents: 1, bank_verifications: 1, webhook_endpoints: 1, export_formats: 1 });
    const download = await app.fetch(
      `/v1/applications/${liveApplication.mortgageId}/documents/${(await owner.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId: liveApplication.mortgageId } } })).data!.data[0]!.documentId}/content`,
      { headers: { Authorization: `Bearer ${owner.apiKey}` } },
    );
    expect(download.status).toBe(200);
    expect(await download.text()).toContain('%PDF-1.4');

    // Empty again, it answers zeros.
    const again = await owner.test.DELETE('/v1/test/data');
    expect(again.data).toMatchObject({ deleted: { quotes: 0, applications: 0, documents: 0, webhooks: 0, events: 0 }, settingsReset: false });
  });

  it('a live key gets 404 and removes nothing', async () => {
    const owner = await app.newAccount('Live Delete Lending');
    await createApplication(owner.client);
    const { response, error } = await owner.client.DELETE('/v1/test/data');
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ code: 'not_found' });
    expect((await owner.client.GET('/v1/applications')).data!.data).toHaveLength(1);
  });
});

describe('a partner with only a test key, from a clean start and with no operator', () => {
  it('quotes, applies and submits, verifies the bank account, uploads a document, receives both events, and exports: all invisible to live', async () => {
    const owner = await app.newAccount('Walkthrough Fintech');
    const partner = apiClient(app.baseUrl, owner.testKey);
    const hook = await receiver();

    const { data: endpoint } = await partner.POST('/v1/webhooks', { body: { url: hook.url('/hooks'), events: ['application.approved', 'document.uploaded'] } });
    const { data: quote } = await partner.POST('/v1/quotes', { body: { amount: 300000, term: 30, propertyValue: 400000, creditScore: 760 } });
    expect(quote!.livemode).toBe(false);

    const { applicant, term, propertyValue } = applicantOf('approved');
    const { accountNumber, ...applicantInput } = applicant;
    const { data: application } = await partner.POST('/v1/applications', { body: { applicant: applicantInput, term, propertyValue, quoteId: quote!.quoteId } });
    const { data: submitted } = await partner.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: application!.mortgageId } } });
    expect(submitted!.status).toBe('approved');

    const { data: token } = await partner.POST('/v1/test/bank-tokens', { body: { holderName: applicantInput.name, accountNumber: accountNumber! } });
    const { data: verification } = await verify(token!.bankToken, application!.mortgageId, accountNumber!);
    expect(verification!.verified).toBe(true);

    const form = new FormData();
    form.set('documentType', 'bank_statement');
    form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'statement.pdf');
    const upload = await app.fetch(`/v1/applications/${application!.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${owner.testKey}` }, body: form });
    expect(upload.status).toBe(201);
    const { documentId } = (await upload.json()) as { documentId: string };

    const deliveries = await hook.waitFor(2);
    const verifier = new Webhook(endpoint!.secret);
    const events = deliveries.map((d) => verifier.verify(d.body, d.headers as Record<string, string>) as { event: string });
    // Exactly the interface document's payloads (sections 6.1 and 6.2), in test mode as in live: no livemode, nothing added.
    expect(events.sort((x, y) => x.event.localeCompare(y.event))).toEqual([
      {
        event: 'application.approved',
        mortgageId: application!.mortgageId,
        status: 'approved',
        applicant: { name: applicantInput.name, amount: applicantInput.amount },
        timestamp: submitted!.decision!.decidedAt,
      },
      {
        event: 'document.uploaded',
        mortgageId: application!.mortgageId,
        documentType: 'bank_statement',
        url: `${app.baseUrl}/v1/applications/${application!.mortgageId}/documents/${documentId}/content`,
      },
    ]);

    const exported = await app.fetch('/v1/mortgages/export?format=csv', { headers: { Authorization: `Bearer ${owner.testKey}` } });
    const csv = await exported.text();
    expect(csv).toContain(application!.mortgageId);
    expect(csv).toContain('approved');

    // Live sees none of it.
    expect((await owner.client.GET('/v1/applications')).data!.data).toEqual([]);
    expect((await owner.client.GET('/v1/webhooks')).data!.data).toEqual([]);
    expect((await owner.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: quote!.quoteId } } })).response.status).toBe(404);
    const liveExport = await app.fetch('/v1/mortgages/export?format=csv', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    expect(await liveExport.text()).not.toContain(application!.mortgageId);
  });
});
