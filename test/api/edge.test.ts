/**
 * The HTTP edge, the same for every operation: request ids, routing failures, body handling,
 * validation problems, unexpected failures and rate limits, all as RFC 9457 problem+json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  account = await app.newAccount();
});
afterAll(() => app?.close());

const auth = () => ({ Authorization: `Bearer ${account.apiKey}` });
const json = () => ({ ...auth(), 'Content-Type': 'application/json' });

describe('X-Request-Id', () => {
  it("answers with an id of its own even when the caller sent a sane one (kept as the request log's clientRequestId)", async () => {
    const response = await app.fetch('/v1/account', { headers: { ...auth(), 'X-Request-Id': 'partner-trace.42:a_b' } });
    expect(response.headers.get('x-request-id')).toMatch(/^req-[0-9a-z]{26}$/);
  });

  it('answers an id with spaces or of 129+ characters with a generated one, and does not refuse the request', async () => {
    for (const offered of ['has spaces in it', 'x'.repeat(129), '<script>']) {
      const response = await app.fetch('/v1/account', { headers: { ...auth(), 'X-Request-Id': offered } });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toMatch(/^req-[0-9a-z]{26}$/);
    }
  });

  it('generates a distinct id when none is sent, and puts it in problem bodies too', async () => {
    const first = await app.fetch('/v1/account');
    const second = await app.fetch('/v1/account');
    const id = first.headers.get('x-request-id');
    expect(id).toMatch(/^req-/);
    expect(second.headers.get('x-request-id')).not.toBe(id);
    expect(await first.json()).toMatchObject({ requestId: id });
  });

  it('is on responses outside /v1 too', async () => {
    const response = await fetch(`${app.baseUrl}/healthz`);
    expect(response.headers.get('x-request-id')).toMatch(/^req-/);
  });
});

describe('routing failures', () => {
  it('a path with a broken percent-encoding is 400 malformed_path, not 500', async () => {
    for (const path of ['/v1/applications/%ZZ', '/v1/webhooks/%E0%A4%A']) {
      const response = await app.fetch(path, { headers: auth() });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'malformed_path' });
    }
  });

  it('an unknown /v1 route is a 404 problem', async () => {
    const response = await app.fetch('/v1/nothing-here', { headers: auth() });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 404, code: 'not_found', instance: '/v1/nothing-here' });
  });

  it('an unknown route outside /v1 is a 404 problem', async () => {
    const response = await app.fetch('/v2/quotes');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'not_found' });
  });

  it('a known path with the wrong method is 405 with Allow', async () => {
    const response = await app.fetch('/v1/api-keys', { method: 'PATCH', headers: auth() });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
    expect(await response.json()).toMatchObject({ status: 405, code: 'method_not_allowed' });

    const single = await app.fetch('/v1/account', { method: 'DELETE', headers: auth() });
    expect(single.status).toBe(405);
    expect(single.headers.get('allow')).toBe('GET');
  });
});

describe('request bodies', () => {
  it.each(['gzip', 'deflate', 'br'])('a body that does not decode with Content-Encoding %s is 400, not 500', async (encoding) => {
    const response = await app.fetch('/v1/api-keys', {
      method: 'POST',
      headers: { ...json(), 'Content-Encoding': encoding },
      body: '{"role": "member", "name": "plain, not compressed"}',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_content_encoding' });
  });

  it('malformed JSON is 400 malformed_json', async () => {
    const response = await app.fetch('/v1/api-keys', { method: 'POST', headers: json(), body: '{"role": "member", "name": ' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'malformed_json' });
  });

  it('a schema violation is 400 with one errors[] pointer per offending field', async () => {
    const response = await app.fetch('/v1/api-keys', { method: 'POST', headers: json(), body: JSON.stringify({ role: 'owner', colour: 'red' }) });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { code: string; errors: Array<{ pointer: string; message: string }> };
    expect(problem.code).toBe('validation_failed');
    const byPointer = Object.fromEntries(problem.errors.map((e) => [e.pointer, e.message]));
    expect(byPointer['/role']).toBe('must be one of: "admin", "member", "restricted"');
    expect(byPointer['/name']).toBe('is required');
    expect(byPointer['/colour']).toBe('is not a known field');
  });

  it('a parameter of the wrong form points into #/query', async () => {
    const response = await app.fetch('/v1/api-keys?limit=500', { headers: auth() });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { errors: Array<{ pointer: string }> };
    expect(problem.errors.map((e) => e.pointer)).toContain('#/query/limit');
  });

  it('the wrong content type is 415', async () => {
    const response = await app.fetch('/v1/api-keys', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'role=member&name=x',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ code: 'unsupported_media_type' });
  });

  it('a JSON body over 1 MiB is 413, and nothing is created', async () => {
    // Read through the API, not the store's write count: the request log writes its batches on a
    // timer of its own, which made that count move under this test now and then (PostgreSQL, CI).
    const keys = async () => ((await (await app.fetch('/v1/api-keys?limit=100', { headers: auth() })).json()) as { data: Array<{ id: string }> }).data.map((k) => k.id);
    const keysBefore = await keys();
    const body = JSON.stringify({ role: 'member', name: 'x', padding: 'p'.repeat(1024 * 1024) });
    const response = await app.fetch('/v1/api-keys', { method: 'POST', headers: json(), body });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
    expect(await keys()).toEqual(keysBefore);
  });

  it('a body just under the limit is read (and refused only for its unknown field)', async () => {
    const body = JSON.stringify({ role: 'member', name: 'x', padding: 'p'.repeat(1024 * 1024 - 100) });
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const response = await app.fetch('/v1/api-keys', { method: 'POST', headers: json(), body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/padding' }] });
  });
});

describe('rate limiting', () => {
  let limited: TestApp;
  beforeAll(async () => {
    // Held still: on PostgreSQL the windows are the clock's minutes, and a real clock crossing one
    // between the third request and the fourth would start a new window (as in test/api/metrics.test.ts).
    limited = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' }, clock: manualClock() });
  });
  afterAll(() => limited?.close());

  it('answers 429 with Retry-After and RateLimit headers once a key has used its minute, per key', async () => {
    const lender = await limited.newAccount();
    const headers = { Authorization: `Bearer ${lender.apiKey}` };
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await limited.fetch('/v1/account', { headers });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
      remaining.push(ok.headers.get('ratelimit')!.split(';')[1]!);
    }
    expect(remaining).toEqual(['r=2', 'r=1', 'r=0']);

    const refused = await limited.fetch('/v1/account', { headers });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    expect(await refused.json()).toMatchObject({ status: 429, code: 'rate_limited' });

    // Another key of the same account has its own budget.
    const member = await limited.fetch('/v1/account', { headers: { Authorization: `Bearer ${lender.memberKey}` } });
    expect(member.status).toBe(200);
  });
});

describe('unexpected failures', () => {
  it('a failing store gives a 500 problem with no internals, and /readyz says so', async () => {
    const broken = await startTestApp();
    try {
      const lender = await broken.newAccount();
      await broken.ctx.store.close(); // a real failure mode: the store is gone under a running app
      // Plain fetch: 500 is declared by no operation (the contract check would reject it first).
      const response = await fetch(`${broken.baseUrl}/v1/account`, { headers: { Authorization: `Bearer ${lender.apiKey}` } });
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const text = await response.text();
      expect(JSON.parse(text)).toMatchObject({ status: 500, code: 'internal_error', requestId: response.headers.get('x-request-id') });
      for (const leak of ['Error', 'store', 'closed', 'sql', ' at ', '.ts', '/work', '/tmp', broken.dataDir]) expect(text).not.toContain(leak);

      const ready = await fetch(`${broken.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
    } finally {
      await broken.close();
    }
  });
});
