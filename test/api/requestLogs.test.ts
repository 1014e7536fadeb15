/**
 * The request log (GET /v1/request-logs, GET /v1/request-logs/{requestId}): every /v1 request a
 * key of the account made, recorded after the answer and written in batches (the tests flush the
 * buffer through the test app), with each status class, the problem body as sent for failures,
 * filters and cursor pages, scoped to the account and its environment, never holding a secret or
 * an account number, and pruned after REQUEST_LOG_RETENTION_DAYS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneExpiredRequestLogs } from '../../src/services/requestLogs.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

const DAY = 24 * 3_600_000;
const clock = manualClock(Date.parse('2026-11-21T18:30:00.000Z'));
let app: TestApp;
let owner: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ clock });
  owner = await app.newAccount('Logged Lending');
  other = await app.newAccount('Other Lending');
});
afterAll(() => app?.close());

async function logs(account: TestAccount, query: Record<string, string | number> = {}, client = account.client) {
  await app.flushRequestLogs();
  const { data, error, response } = await client.GET('/v1/request-logs', { params: { query: query as never } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

async function entry(account: TestAccount, requestId: string) {
  await app.flushRequestLogs();
  return account.client.GET('/v1/request-logs/{requestId}', { params: { path: { requestId } } });
}

describe('getRequestLog', () => {
  it('records a 2xx with its key, operation, path, status, latency and address, and no problem', async () => {
    const { response } = await owner.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    expect(response.status).toBe(201);
    const requestId = response.headers.get('x-request-id')!;
    const { data, response: got } = await entry(owner, requestId);
    expect(got.status).toBe(200);
    expect(data).toMatchObject({
      requestId,
      createdAt: clock.now().toISOString(),
      keyName: 'First admin key',
      method: 'POST',
      operationId: 'createQuote',
      path: '/v1/quotes',
      status: 201,
      clientAddress: expect.stringMatching(/127\.0\.0\.1$/),
      idempotencyKey: null,
      idempotentReplayed: false,
      problem: null,
      livemode: true,
    });
    expect(data!.keyId).toMatch(/^key-[0-9a-z]{26}$/);
    expect(data!.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('records each failure class with its problem body exactly as sent: 400, 403, 404, 409 and a 500', async () => {
    const sent: Record<number, { requestId: string; body: unknown }> = {};
    const keep = ({ response, error }: { response: Response; error?: unknown }) => {
      sent[response.status] = { requestId: response.headers.get('x-request-id')!, body: error };
    };
    keep(await owner.client.POST('/v1/quotes', { body: { amount: 350000, term: 360 } }));
    keep(await owner.member.GET('/v1/request-logs', {}));
    keep(await owner.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: 'qte-01jdz8k3n4q2v6x9b7c5t1r0aa' } } }));
    const { data: created } = await owner.client.POST('/v1/applications', { body: { applicant: { name: 'Ada Conflict', amount: 200000 }, term: 30 } });
    keep(await owner.client.POST('/v1/applications/{mortgageId}/approve', { params: { path: { mortgageId: created!.mortgageId } } }));
    // A 500: the store fails one read, as a broken disk would.
    const read = app.ctx.store.read;
    app.ctx.store.read = () => Promise.reject(new Error('disk on fire'));
    try {
      keep(await owner.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: 'qte-01jdz8k3n4q2v6x9b7c5t1r0ab' } } }));
    } finally {
      app.ctx.store.read = read;
    }
    expect(Object.keys(sent).map(Number).sort()).toEqual([400, 403, 404, 409, 500]);
    for (const [status, { requestId, body }] of Object.entries(sent)) {
      const { data } = await entry(owner, requestId);
      expect(data!.status, status).toBe(Number(status));
      expect(data!.problem, status).toEqual(body);
    }
    const failures = await logs(owner, { statusClass: '4xx', limit: 100 });
    expect(failures.data.map((e) => e.status).sort()).toEqual([400, 403, 404, 409]);
    expect((await logs(owner, { statusClass: '5xx' })).data.map((e) => e.requestId)).toEqual([sent[500]!.requestId]);
    expect((await logs(owner, { status: 409 })).data.map((e) => e.requestId)).toEqual([sent[409]!.requestId]);
  });

  it('records the Idempotency-Key and whether the answer was a replay', async () => {
    const headers = { 'Idempotency-Key': 'log-replay-0001' };
    const first = await owner.client.POST('/v1/quotes', { body: { amount: 250000, term: 15 }, headers });
    const again = await owner.client.POST('/v1/quotes', { body: { amount: 250000, term: 15 }, headers });
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    const a = await entry(owner, first.response.headers.get('x-request-id')!);
    const b = await entry(owner, again.response.headers.get('x-request-id')!);
    expect([a.data!.idempotencyKey, a.data!.idempotentReplayed]).toEqual(['log-replay-0001', false]);
    expect([b.data!.idempotencyKey, b.data!.idempotentReplayed]).toEqual(['log-replay-0001', true]);
  });

  it('records no request refused before a key was recognised (401): it belongs to no account', async () => {
    const before = (await logs(owner, { limit: 100 })).data.length;
    const refused = await app.clientFor('mos_live_notakey').GET('/v1/account', {});
    expect(refused.response.status).toBe(401);
    expect((await logs(owner, { limit: 100 })).data.length).toBe(before + 1); // the listing itself only
  });
});

describe('listRequestLogs', () => {
  it("never lists or finds another account's requests (404 by request id)", async () => {
    const { response } = await other.client.GET('/v1/account', {});
    const otherRequest = response.headers.get('x-request-id')!;
    const mine = await logs(owner, { limit: 100 });
    expect(mine.data.some((e) => e.requestId === otherRequest)).toBe(false);
    const { response: got, error } = await entry(owner, otherRequest);
    expect(got.status).toBe(404);
    expect(error).toMatchObject({ code: 'not_found' });
    expect((await entry(other, otherRequest)).response.status).toBe(200);
  });

  it("keeps test mode apart: a test key's requests are the test environment's (livemode false)", async () => {
    const { response } = await owner.test.GET('/v1/account', {});
    const testRequest = response.headers.get('x-request-id')!;
    const live = await logs(owner, { limit: 100 });
    expect(live.data.some((e) => e.requestId === testRequest)).toBe(false);
    const test = await logs(owner, { limit: 100 }, owner.test);
    expect(test.data.find((e) => e.requestId === testRequest)).toMatchObject({ livemode: false, operationId: 'getAccount' });
  });

  it('filters by key and operation, and pages by cursor newest first', async () => {
    const account = await app.newAccount('Paged Lending');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await account.member.GET('/v1/account', {})).response.headers.get('x-request-id')!);
    await account.client.POST('/v1/quotes', { body: { amount: 100000, term: 10 } });
    const byOperation = await logs(account, { operationId: 'getAccount', limit: 100 });
    expect(byOperation.data.map((e) => e.requestId)).toEqual([...ids].reverse());
    const memberKeyId = byOperation.data[0]!.keyId;
    expect((await logs(account, { keyId: memberKeyId, limit: 100 })).data.map((e) => e.keyName)).toEqual(Array(5).fill('Member key'));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof logs>> = await logs(account, { operationId: 'getAccount', limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((e) => e.requestId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by time (createdFrom inclusive, createdTo exclusive) and refuses a bad cursor or an empty range (400)', async () => {
    const account = await app.newAccount('Timed Lending');
    clock.set(Date.parse('2026-11-22T10:00:00.000Z'));
    const early = (await account.client.GET('/v1/account', {})).response.headers.get('x-request-id')!;
    clock.set(Date.parse('2026-11-23T10:00:00.000Z'));
    const late = (await account.client.GET('/v1/account', {})).response.headers.get('x-request-id')!;
    const ids = async (query: Record<string, string>) => (await logs(account, { operationId: 'getAccount', ...query })).data.map((e) => e.requestId);
    expect(await ids({ createdFrom: '2026-11-22', createdTo: '2026-11-23' })).toEqual([early]);
    expect(await ids({ createdFrom: '2026-11-23' })).toEqual([late]);
    const range = await account.client.GET('/v1/request-logs', { params: { query: { createdFrom: '2026-11-23', createdTo: '2026-11-22' } } });
    expect(range.response.status).toBe(400);
    const cursor = await account.client.GET('/v1/request-logs', { params: { query: { cursor: 'bm90LWEtY3Vyc29y' } } });
    expect([cursor.response.status, cursor.error?.code]).toEqual([400, 'invalid_cursor']);
  });

  it('needs an admin key (403 for a member key)', async () => {
    const { response, error } = await owner.member.GET('/v1/request-logs', {});
    expect(response.status).toBe(403);
    expect(error?.code).toBe('forbidden');
  });
});

describe("the service's request ids and the caller's", () => {
  it("a restricted key reusing the admin's request id cannot shadow the admin's entry: every request gets an id of the service's own", async () => {
    const admin = await owner.client.POST('/v1/quotes', { body: { amount: 300000, term: 25 } });
    const adminRequestId = admin.response.headers.get('x-request-id')!;
    const { data: key } = await owner.client.POST('/v1/api-keys', { body: { name: 'Shadowing job', scopes: { quotes: 'read' } } });
    const restricted = app.clientFor(key!.apiKey);
    const reused = await restricted.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: admin.data!.quoteId } }, headers: { 'X-Request-Id': adminRequestId } });
    expect(reused.response.status).toBe(200);
    expect(reused.response.headers.get('x-request-id')).toMatch(/^req-[0-9a-z]{26}$/);
    expect(reused.response.headers.get('x-request-id')).not.toBe(adminRequestId);

    const { data, response } = await entry(owner, adminRequestId);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ requestId: adminRequestId, operationId: 'createQuote', keyName: 'First admin key', clientRequestId: null });
    const theirs = await entry(owner, reused.response.headers.get('x-request-id')!);
    expect(theirs.data).toMatchObject({ operationId: 'getQuote', keyName: 'Shadowing job', clientRequestId: adminRequestId });
  });

  it("keeps a sane X-Request-Id as clientRequestId, finds every request that sent it, and drops an insane one without refusing the request", async () => {
    const account = await app.newAccount('Traced Lending');
    const traced = [];
    for (let i = 0; i < 2; i++) traced.push((await account.client.GET('/v1/account', { headers: { 'X-Request-Id': 'partner-trace.42:a_b' } })).response);
    for (const offered of ['has spaces in it', 'x'.repeat(129)]) {
      const { response } = await account.client.GET('/v1/account', { headers: { 'X-Request-Id': offered } });
      expect(response.status).toBe(200);
      expect((await entry(account, response.headers.get('x-request-id')!)).data!.clientRequestId).toBeNull();
    }
    const found = await logs(account, { clientRequestId: 'partner-trace.42:a_b' });
    expect(found.data.map((e) => e.requestId)).toEqual(traced.map((r) => r.headers.get('x-request-id')).reverse());
    expect(found.data.every((e) => e.clientRequestId === 'partner-trace.42:a_b')).toBe(true);
    expect((await logs(account, { clientRequestId: 'partner-trace.43' })).data).toEqual([]);
  });
});

describe('what is never stored', () => {
  it('holds no API key, signing secret or account number, even of requests that carried or returned one', async () => {
    const account = await app.newAccount('Secretive Lending');
    const { data: key } = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Scan key' }, headers: { 'Idempotency-Key': 'scan-key-1' } });
    await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Scan key' }, headers: { 'Idempotency-Key': 'scan-key-1' } }); // 409: secret withheld
    const { data: hook } = await account.client.POST('/v1/webhooks', { body: { url: 'https://hooks.secretive.example/events', events: ['application.approved'] } });
    // Account numbers travel in a sandbox token's request (recorded, body not kept) and in a bank verification (a bank token's request: no account's, not recorded).
    const { data: token } = await account.test.POST('/v1/test/bank-tokens', { body: { holderName: 'Sam Secret', accountNumber: '000987654321' } });
    await account.test.POST('/v1/test/bank-tokens', { body: { holderName: 'Sam Secret', accountNumber: '0009876-54321' } });
    const { data: application } = await account.test.POST('/v1/applications', { body: { applicant: { name: 'Sam Secret', amount: 300000 }, term: 30 } });
    const verified = await app.clientFor(token!.bankToken).POST('/v1/banks/verify', { body: { mortgageId: application!.mortgageId, applicant: { accountNumber: '000987654321' } } });
    expect(verified.response.status, JSON.stringify(verified.error)).toBe(200);
    await app.fetch('/v1/account?accountNumber=000987654321', { headers: { Authorization: `Bearer ${account.apiKey}` } });
    await app.flushRequestLogs();

    const rows = await app.ctx.store.read((db) => db.all<Record<string, unknown>>('SELECT * FROM request_log_batches'));
    const stored = JSON.stringify(rows);
    expect(rows.reduce((sum, r) => sum + Number(r.entry_count), 0)).toBeGreaterThan(5);
    for (const secret of [key!.apiKey, account.apiKey, account.memberKey, account.testKey, hook!.secret, token!.bankToken, '000987654321', '987654321', '54321']) {
      expect(stored, secret).not.toContain(secret);
    }
    // No whole key or secret of any kind (hints such as mos_live_…TrVj are no secret).
    expect(stored).not.toMatch(/mos_(live|test)_[A-Za-z0-9]{8}|whsec_[A-Za-z0-9+/]{8}|bnk_tok_[A-Za-z0-9]{4}/);
  });
});

describe('retention', () => {
  it('hides entries past REQUEST_LOG_RETENTION_DAYS at once and the sweep deletes them', async () => {
    const account = await app.newAccount('Retained Lending');
    clock.set(Date.parse('2026-12-01T00:00:00.000Z'));
    const old = (await account.client.GET('/v1/account', {})).response.headers.get('x-request-id')!;
    await app.flushRequestLogs();
    clock.advance(31 * DAY);
    expect((await entry(account, old)).response.status).toBe(404);
    expect(await pruneExpiredRequestLogs(app.ctx)).toBeGreaterThanOrEqual(1);
    const left = await app.ctx.store.read((db) => db.all('SELECT id FROM request_log_batches WHERE entries LIKE ?', [`%"${old}"%`]));
    expect(left).toEqual([]);
  });
});
