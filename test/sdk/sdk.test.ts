/**
 * The SDK (sdk/, @mortgage-origination/sdk) against the real service started in-process: typed
 * calls with the API key, an Idempotency-Key on every POST, retries that honour Retry-After,
 * problems as typed errors, lists as async iterators, the streamed export, and webhook
 * verification of a real, signed delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import {
  API_VERSION,
  createMortgageClient,
  isProblemError,
  PROBLEM_CODES,
  ProblemError,
  retryAfterMs,
  verifyWebhook,
  WebhookVerificationError,
  type ListPath,
  type MortgageClient,
  type WebhookEvent,
} from '../../sdk/src/index.ts';
import { deliveriesAt, startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';
import { spec } from '../helpers/contractFetch.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let account: TestAccount;
let client: MortgageClient;
let dispatcher: WebhookDispatcher;
let receiver: Receiver;

/** Every request the SDK sent, as the service received it. */
const sent: Request[] = [];
const recordingFetch = (request: Request) => {
  sent.push(request.clone());
  return fetch(request);
};

const APPLICATION = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  account = await app.newAccount('SDK Lending');
  client = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, fetch: recordingFetch });
  dispatcher = new WebhookDispatcher(app.ctx).start();
  receiver = await startReceiver();
});
afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await app?.close();
});

describe('typed calls with the API key', () => {
  it('creates and reads a quote', async () => {
    const { data: quote, response } = await client.api.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    expect(response.status).toBe(201);
    expect(quote!.quoteId).toMatch(/^qte-/);
    const { data: again } = await client.api.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: quote!.quoteId } } });
    expect(again).toEqual(quote);
    expect(sent.at(-1)!.headers.get('authorization')).toBe(`Bearer ${account.apiKey}`);
  });
});

describe('apiVersion', () => {
  it('sends Mos-Version: the version its types describe by default, the one asked for with apiVersion', async () => {
    const { response } = await client.api.GET('/v1/account');
    expect(sent.at(-1)!.headers.get('mos-version')).toBe(API_VERSION);
    expect(response.headers.get('mos-version')).toBe(API_VERSION);
    const early = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, apiVersion: '2026-11-21' });
    const { response: answered } = await early.api.GET('/v1/account');
    expect(answered.headers.get('mos-version')).toBe('2026-11-21');
  });
});

describe('Idempotency-Key', () => {
  it('is made for every POST that has none, and is not sent on a GET', async () => {
    sent.length = 0;
    await client.api.POST('/v1/quotes', { body: { amount: 200000, term: 15 } });
    await client.api.POST('/v1/quotes', { body: { amount: 200000, term: 15 } });
    await client.api.GET('/v1/account');
    const keys = sent.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[2]).toBeNull();
  });

  it('keeps a key the caller gives, so a repeated call replays the first answer', async () => {
    const key = `order-${Date.now()}`;
    const first = await client.api.POST('/v1/quotes', { body: { amount: 250000, term: 20 }, headers: { 'Idempotency-Key': key } });
    const second = await client.api.POST('/v1/quotes', { body: { amount: 250000, term: 20 }, headers: { 'Idempotency-Key': key } });
    expect(second.data).toEqual(first.data);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('retries', () => {
  /** A fetch that answers the first `failures` requests itself, then lets the service answer. */
  function flaky(failures: Array<{ status: number; retryAfter?: string }>) {
    const seen: Array<{ at: number; key: string | null }> = [];
    const fetchImpl = async (request: Request) => {
      seen.push({ at: Date.now(), key: request.headers.get('idempotency-key') });
      const failure = failures.shift();
      if (!failure) return fetch(request);
      return new Response(JSON.stringify({ type: '/problems/x', title: 'x', status: failure.status, code: 'rate_limited', requestId: 'req-1' }), {
        status: failure.status,
        headers: { 'content-type': 'application/problem+json', ...(failure.retryAfter ? { 'retry-after': failure.retryAfter } : {}) },
      });
    };
    return { seen, fetchImpl };
  }

  it('retries 429, 502 and 503, waiting Retry-After, with the same Idempotency-Key', async () => {
    const { seen, fetchImpl } = flaky([{ status: 429, retryAfter: '1' }, { status: 502 }, { status: 503, retryAfter: '0' }]);
    const retrying = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, fetch: fetchImpl, baseDelayMs: 10 });
    const { data, response } = await retrying.api.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
    expect(response.status).toBe(201);
    expect(data!.amount).toBe(300000);
    expect(seen).toHaveLength(4);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(990);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
  });

  it('gives up after maxRetries and throws the last problem', async () => {
    const { seen, fetchImpl } = flaky([{ status: 503 }, { status: 503 }, { status: 503 }]);
    const retrying = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, fetch: fetchImpl, baseDelayMs: 1, maxRetries: 2 });
    await expect(retrying.api.GET('/v1/account')).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(3);
  });

  it('does not retry other statuses', async () => {
    const { seen, fetchImpl } = flaky([{ status: 500 }]);
    const retrying = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, fetch: fetchImpl, baseDelayMs: 1 });
    await expect(retrying.api.GET('/v1/account')).rejects.toBeInstanceOf(ProblemError);
    expect(seen).toHaveLength(1);
  });

  it('hands a 429 whose Retry-After is longer than its longest wait back after one call, without retrying early', async () => {
    // Retry-After in seconds and as an HTTP date, each past a longest wait of 1 s: had the client
    // retried (early), the service would have answered the retry, and the call would have succeeded.
    for (const retryAfter of ['2', new Date(Date.now() + 120_000).toUTCString()]) {
      const { seen, fetchImpl } = flaky([{ status: 429, retryAfter }]);
      const retrying = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, fetch: fetchImpl, baseDelayMs: 1, maxDelayMs: 1_000 });
      await expect(retrying.api.GET('/v1/account'), retryAfter).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
      expect(seen, retryAfter).toHaveLength(1);
    }
    // The default longest wait is 60 s: a minute and a second is handed back too.
    const { seen, fetchImpl } = flaky([{ status: 429, retryAfter: '61' }]);
    const byDefault = createMortgageClient({ baseUrl: app.baseUrl, apiKey: account.apiKey, fetch: fetchImpl });
    await expect(byDefault.api.GET('/v1/account')).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('12')).toBe(12_000);
    expect(retryAfterMs(new Date(1_000_000 + 5_000).toUTCString(), 1_000_000)).toBe(5_000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});

describe('problems as typed errors', () => {
  it('throws a ProblemError carrying the code, status, pointers and request id', async () => {
    const error = await client.api.POST('/v1/quotes', { body: { amount: 350000, term: 360 } }).catch((e: unknown) => e);
    expect(isProblemError(error, 'validation_failed')).toBe(true);
    const problem = error as ProblemError;
    expect(problem.status).toBe(400);
    expect(problem.problem!.errors![0]!.pointer).toBe('/term');
    expect(problem.requestId).toMatch(/^req-/);
    expect(PROBLEM_CODES[problem.code as keyof typeof PROBLEM_CODES]).toBe(400);
  });

  it('a business refusal and an unknown resource are problems too', async () => {
    await expect(client.api.POST('/v1/quotes', { body: { amount: 999, term: 30 } })).rejects.toMatchObject({ code: 'amount_out_of_bounds', status: 422 });
    await expect(client.api.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: 'qte-01jdz8k3n4q2v6x9b7c5t1r0aa' } } })).rejects.toMatchObject({
      code: 'not_found',
      status: 404,
    });
    const anonymous = createMortgageClient({ baseUrl: app.baseUrl, apiKey: 'mos_live_not-a-key' });
    await expect(anonymous.api.GET('/v1/account')).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
  });
});

describe('lists as async iterators', () => {
  it('walks every page of a list', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const { data } = await client.api.POST('/v1/applications', { body: APPLICATION });
      created.push(data!.mortgageId);
    }
    sent.length = 0;
    const seen: string[] = [];
    for await (const application of client.list('/v1/applications', { query: { limit: 2 } })) seen.push(application.mortgageId);
    expect([...seen].sort()).toEqual([...created].sort());
    expect(sent.length).toBe(3);
    expect(new URL(sent[1]!.url).searchParams.get('cursor')).toBeTruthy();
  });

  it('takes path parameters for nested lists', async () => {
    const { data: hook } = await client.api.POST('/v1/webhooks', { body: { url: receiver.url('/sdk'), events: ['application.approved'] } });
    const deliveries = [];
    for await (const delivery of client.list('/v1/webhooks/{webhookId}/deliveries', { path: { webhookId: hook!.webhookId } })) deliveries.push(delivery);
    expect(deliveries).toEqual([]);
  });
});

describe('every list of the contract', () => {
  /** The list operations the SDK's ListPath type accepts: a path the type does not take fails the type check. */
  const LISTS: ListPath[] = [
    '/v1/api-keys',
    '/v1/webhooks',
    '/v1/webhooks/{webhookId}/deliveries',
    '/v1/events',
    '/v1/audit-events',
    '/v1/applications',
    '/v1/applications/{mortgageId}/documents',
    '/v1/export-formats',
    '/v1/request-logs',
    '/v1/rate-locks',
    '/v1/applications/{mortgageId}/notices',
    '/v1/exports/hmda-lar/check',
  ];
  /** A declined application has one notice: that list is walked on its one item, in the one page it always is (it takes no limit). */
  const FEWEST: Record<string, number> = { '/v1/applications/{mortgageId}/notices': 1 };
  const UNPAGED = new Set<string>(['/v1/applications/{mortgageId}/notices']);

  it('the list above is every GET of the spec that answers a cursor page', () => {
    const propertiesOf = (schema: any): string[] => [...Object.keys(schema?.properties ?? {}), ...((schema?.allOf ?? []) as unknown[]).flatMap(propertiesOf)];
    const paged = Object.entries(spec.paths as Record<string, any>)
      .filter(([, item]) => propertiesOf(item.get?.responses?.['200']?.content?.['application/json']?.schema).includes('nextCursor'))
      .map(([template]) => template);
    expect([...paged].sort()).toEqual([...LISTS].sort());
  });

  it('walks each one page by page to exactly the items one big page holds', async () => {
    const owner = await app.newAccount('SDK Lists');
    const lists = createMortgageClient({ baseUrl: app.baseUrl, apiKey: owner.apiKey });
    // At least two items in every list, so that a page of one has a next page.
    await lists.api.POST('/v1/api-keys', { body: { name: 'Second key', role: 'member' } });
    const { data: hook } = await lists.api.POST('/v1/webhooks', { body: { url: receiver.url('/lists'), events: ['application.approved', 'document.uploaded'] } });
    await lists.api.POST('/v1/webhooks', { body: { url: receiver.url('/lists-other'), events: ['application.approved'] } });
    const { data: application } = await lists.api.POST('/v1/applications', { body: APPLICATION });
    await lists.api.POST('/v1/applications', { body: APPLICATION });
    await lists.api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: application!.mortgageId } } });
    for (const name of ['one.pdf', 'two.pdf']) {
      const form = new FormData();
      form.set('documentType', 'income_proof');
      form.set('file', new File([Buffer.from('%PDF-1.4\n%%EOF\n')], name, { type: 'application/pdf' }));
      const uploaded = await fetch(`${app.baseUrl}/v1/applications/${application!.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${owner.apiKey}` }, body: form });
      expect(uploaded.status).toBe(201);
    }
    for (const name of ['first-layout', 'second-layout']) await lists.api.POST('/v1/export-formats', { body: { name, base: 'csv' } });
    for (let k = 0; k < 2; k++) {
      const { data: quote } = await lists.api.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
      await lists.api.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30 } });
    }
    // A reviewer's decline makes the notice; with the approval above, the year's register holds two rows.
    const { data: referred } = await lists.api.POST('/v1/applications', { body: { applicant: { name: 'Referred Applicant', amount: 350000 }, term: 30 } });
    await lists.api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: referred!.mortgageId } } });
    expect((await lists.api.POST('/v1/applications/{mortgageId}/decline', { params: { path: { mortgageId: referred!.mortgageId } }, body: { reasons: ['incomplete_application'] } })).response.status).toBe(200);
    // The endpoint's delivery log fills as the dispatcher delivers its three events.
    const attempts = await eventually(async () => {
      const { data } = await lists.api.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: hook!.webhookId } } });
      return data!.data.length >= 3 && data!.data.length;
    }, 10_000, 50);
    expect(attempts).toBe(3); // all delivered (200): the log does not change while it is walked

    // The request log grows with every call of the walk: walked on the requests that made the applications, which do not change.
    await app.flushRequestLogs();
    const fixed: Record<string, Record<string, string | number>> = {
      '/v1/request-logs': { operationId: 'createApplication' },
      '/v1/exports/hmda-lar/check': { year: new Date().getUTCFullYear() },
    };
    const ids = { webhookId: hook!.webhookId, mortgageId: application!.mortgageId };
    const idsOf = (list: string) => (list.endsWith('/notices') ? { ...ids, mortgageId: referred!.mortgageId } : ids);
    const get = lists.api.GET as unknown as (path: string, init: object) => Promise<{ data?: { data: unknown[]; nextCursor: string | null } }>;
    for (const list of LISTS) {
      const params = Object.fromEntries([...list.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, idsOf(list)[m[1] as keyof typeof ids]]));
      const init = (Object.keys(params).length > 0 ? { path: params } : {}) as never;
      const { data: whole } = await get(list, { params: { path: params, query: { ...fixed[list], ...(UNPAGED.has(list) ? {} : { limit: 100 }) } } });
      expect(whole!.nextCursor, list).toBeNull();
      expect(whole!.data.length, list).toBeGreaterThanOrEqual(FEWEST[list] ?? 2);
      const walked: unknown[] = [];
      for await (const item of lists.list(list, { ...(init as object), query: { ...fixed[list], ...(UNPAGED.has(list) ? {} : { limit: 1 }) } } as never)) walked.push(item);
      expect(walked, list).toEqual(whole!.data);
    }
  });
});

describe('the export', () => {
  it('streams a CSV export with its content type and file name', async () => {
    const download = await client.exportMortgages({ format: 'csv', fields: 'mortgageId,status' });
    expect(download.contentType).toBe('text/csv');
    expect(download.filename).toMatch(/^mortgages-\d{4}-\d{2}-\d{2}\.csv$/);
    const text = await new Response(download.body).text();
    expect(text.split('\r\n')[0]).toBe('mortgageId,status');
    expect(text.trim().split('\r\n')).toHaveLength(6);
  });

  it('yields the records one by one', async () => {
    const records = [];
    for await (const record of client.exportRecords({ fields: 'mortgageId,applicant.name' })) records.push(record);
    expect(records).toHaveLength(5);
    expect(records[0]).toEqual({ mortgageId: expect.stringMatching(/^mtg-/), applicant: { name: 'Jane Doe' } });
  });

  it('an export of no records is an empty stream, and yields nothing (the service answers Content-Length: 0)', async () => {
    const empty = await client.exportMortgages({ format: 'ndjson', status: 'withdrawn' });
    expect(empty.contentType).toBe('application/x-ndjson');
    expect(await new Response(empty.body).text()).toBe('');
    const records = [];
    for await (const record of client.exportRecords({ status: 'withdrawn' })) records.push(record);
    expect(records).toEqual([]);
  });
});

describe('webhook verification', () => {
  it('verifies a real delivery and returns the typed event; refuses a tampered one', async () => {
    const { data: hook } = await client.api.POST('/v1/webhooks', { body: { url: receiver.url('/verify'), events: ['document.uploaded'] } });
    await client.api.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: hook!.webhookId } }, body: { event: 'document.uploaded' } });
    const [delivery] = await deliveriesAt(receiver, '/verify');
    const event: WebhookEvent = verifyWebhook(hook!.secret, delivery!.body, delivery!.headers);
    expect(event.event).toBe('document.uploaded');
    if (event.event === 'document.uploaded') expect(event.documentType).toBeTypeOf('string');
    expect(() => verifyWebhook(hook!.secret, delivery!.body.replace('document', 'Document'), delivery!.headers)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(`whsec_${Buffer.from('another secret of 32 bytes!!!!!!').toString('base64')}`, delivery!.body, delivery!.headers)).toThrow(WebhookVerificationError);
  });

  it('refuses a genuinely signed delivery whose timestamp is 10 minutes old, or 10 minutes ahead (a replay, or a forged clock)', () => {
    const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
    const body = JSON.stringify({ event: 'document.uploaded', mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', documentType: 'income_proof', url: 'https://x.test/d' });
    const id = 'evt-01jdz8k3n4q2v6x9b7c5t1r0ab';
    /** The headers of a delivery signed with the right secret at `offsetMs` from now. */
    const signedAt = (offsetMs: number) => {
      const timestamp = new Date(Date.now() + offsetMs);
      return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, timestamp, body) };
    };
    expect(verifyWebhook(secret, body, signedAt(0))).toEqual(JSON.parse(body)); // the same delivery, signed now, is genuine
    for (const offsetMs of [-10 * 60_000, 10 * 60_000]) {
      expect(() => verifyWebhook(secret, body, signedAt(offsetMs)), `${offsetMs} ms`).toThrow(WebhookVerificationError);
    }
  });

  it('accepts Headers and a byte body, as a fetch-style server gives them', () => {
    const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
    const body = JSON.stringify({ event: 'document.uploaded', mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', documentType: 'income_proof', url: 'https://x.test/d' });
    const id = 'evt-01jdz8k3n4q2v6x9b7c5t1r0aa';
    const timestamp = new Date();
    const signature = new Webhook(secret).sign(id, timestamp, body);
    const headers = new Headers({ 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature });
    expect(verifyWebhook(secret, new TextEncoder().encode(body), headers)).toEqual(JSON.parse(body));
  });
});

describe('a restricted key (docs/partners/restricted-keys.md)', () => {
  it('an email/CRM sync key reads applications and the events feed, and gets scope_missing for anything else', async () => {
    const { data: key } = await client.api.POST('/v1/api-keys', { body: { name: 'CRM sync', scopes: { applications: 'read', events: 'read' } } });
    expect(key).toMatchObject({ role: 'restricted', scopes: { applications: 'read', events: 'read' } });
    const sync = createMortgageClient({ baseUrl: app.baseUrl, apiKey: key!.apiKey });
    const { data: applications } = await sync.api.GET('/v1/applications');
    expect(Array.isArray(applications!.data)).toBe(true);
    const { data: events } = await sync.api.GET('/v1/events', { params: { query: { limit: 50 } } });
    expect(Array.isArray(events!.data)).toBe(true);
    const refused = await sync.api.POST('/v1/quotes', { body: { amount: 350000, term: 30 } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isProblemError(refused, 'scope_missing')).toBe(true);
    expect((refused as ProblemError).problem?.requiredScope).toBe('quotes:write');
  });
});
