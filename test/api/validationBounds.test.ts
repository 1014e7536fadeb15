/**
 * No request under the body limit can make validation overflow the stack or answer a huge
 * problem: bodies with 10⁵ unknown keys, 10⁵ invalid array items and very long strings get a 400
 * problem with at most 20 `errors` (`errorsTruncated: true` when there were more), under 64 KiB,
 * and change nothing. (The 1,000,027-byte body with about 125,000 keys used to get a 500.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost' } });
  account = await app.newAccount();
});
afterAll(() => app.close());

const LIMIT = 1024 * 1024;
const MAX_PROBLEM_BYTES = 64 * 1024;

/** `count` distinct short keys (base-36), each set to 0, as JSON text. */
function manyKeys(count: number, extra: Record<string, unknown> = {}): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(extra)) parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
  for (let i = 0; i < count; i++) parts.push(`"${i.toString(36)}":0`);
  return `{${parts.join(',')}}`;
}

async function send(method: string, path: string, body: string): Promise<{ status: number; text: string; json: Record<string, any> }> {
  expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LIMIT); // every case is a body the service must read
  const response = await app.fetch(path, {
    method,
    headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, any> };
}

function expectBounded(result: { status: number; text: string; json: Record<string, any> }): void {
  expect(result.status).toBe(400);
  expect(Buffer.byteLength(result.text)).toBeLessThan(MAX_PROBLEM_BYTES);
  expect(result.json.code).toBe('validation_failed');
  expect(result.json.errors.length).toBeGreaterThan(0);
  expect(result.json.errors.length).toBeLessThanOrEqual(20);
}

async function quoteCount(): Promise<number> {
  return app.ctx.store.read(async (db) => (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM quotes'))!.n);
}

describe('request validation stays bounded', () => {
  it('a 1 MB quote request with about 125,000 unknown keys gets a small 400, not a 500', async () => {
    const before = await quoteCount();
    // 7-9 bytes per key: as many keys as fit under the limit
    let count = 125_000;
    let body = manyKeys(count, { amount: 350000, term: 30 });
    while (Buffer.byteLength(body) > LIMIT) body = manyKeys((count -= 5_000), { amount: 350000, term: 30 });
    expect(count).toBeGreaterThanOrEqual(100_000);
    const result = await send('POST', '/v1/quotes', body);
    expectBounded(result);
    expect(result.json.errorsTruncated).toBe(true);
    expect(result.json.errors[0]).toEqual({ pointer: '/0', message: 'is not a known field' });
    expect(await quoteCount()).toBe(before);
  });

  it('10⁵ invalid array items get a small 400', async () => {
    const events = Array.from({ length: 100_000 }, () => 'x');
    const result = await send('POST', '/v1/webhooks', JSON.stringify({ url: 'http://127.0.0.1:9/hook', events }));
    expectBounded(result);
    expect(result.json.errorsTruncated).toBe(true);
    const { data } = await account.client.GET('/v1/webhooks', { params: { query: { limit: 100 } } });
    expect(data!.data).toHaveLength(0);
  });

  it('10⁵ items in a nested array of a rate sheet get a small 400', async () => {
    const band = { minTermYears: 1, maxTermYears: 'x', rate: 'y' };
    const result = await send('PUT', '/v1/pricing', JSON.stringify({ baseRates: Array.from({ length: 10_000 }, () => band), ltvAdjustments: Array.from({ length: 90_000 }, () => 0) }));
    expectBounded(result);
    expect(result.json.errorsTruncated).toBe(true);
  });

  it('very long strings (as a value, as a key, as many keys) get a small 400', async () => {
    const long = 'k'.repeat(900_000);
    for (const body of [
      JSON.stringify({ amount: 350000, term: 30, [long]: 1 }),
      JSON.stringify({ amount: long.slice(0, 450_000), term: long.slice(0, 450_000) }),
      JSON.stringify({ amount: 350000, term: 30, ...Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`${i}`.padEnd(10_000, 'z'), 1])) }),
    ]) {
      const result = await send('POST', '/v1/quotes', body);
      expectBounded(result);
      for (const issue of result.json.errors) expect(issue.pointer.length + issue.message.length).toBeLessThan(1_000);
    }
  });

  it('a request with a few problems still lists each of them, without errorsTruncated', async () => {
    const result = await send('POST', '/v1/quotes', JSON.stringify({ amount: 350000, term: 30, a: 1, b: 2, c: 3 }));
    expectBounded(result);
    expect(result.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/a', '/b', '/c']);
    expect(result.json).not.toHaveProperty('errorsTruncated');
  });
});
