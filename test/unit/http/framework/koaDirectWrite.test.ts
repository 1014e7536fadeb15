/**
 * writeDirectly against Koa's own respond(): the same JSON result (status, headers set before, the
 * result's headers, body) sent both ways gives the same status, headers and bytes; and
 * writesDirectly leaves to Koa exactly the responses respond() treats differently.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectly, writesDirectly } from '../../../../src/http/framework/koaDirectWrite.ts';

let server: http.Server;
let base: string;
const decisions: boolean[] = [];

beforeAll(async () => {
  const app = new Koa();
  app.use(async (koa) => {
    const status = Number(koa.get('x-status'));
    const headers = JSON.parse(koa.get('x-headers') || '{}') as Record<string, string>;
    const body = JSON.parse(decodeURIComponent(koa.get('x-body'))) as unknown;
    koa.set('X-Before', 'set by earlier middleware');
    if (koa.get('x-way') === 'direct') {
      decisions.push(writesDirectly(koa, status));
      return writeDirectly(koa, status, headers, JSON.stringify(body));
    }
    // What the contract's writeResult does on Koa's path.
    koa.status = status;
    koa.set(headers);
    koa.body = body;
  });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function send(way: 'koa' | 'direct', status: number, body: unknown, headers?: Record<string, string>) {
  const response = await fetch(`${base}/v1/x`, {
    headers: { 'x-way': way, 'x-status': String(status), 'x-body': encodeURIComponent(JSON.stringify(body)), 'x-headers': JSON.stringify(headers ?? {}) },
  });
  const sent = Object.fromEntries([...response.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive'));
  return { status: response.status, headers: sent, bytes: Buffer.from(await response.arrayBuffer()).toString('hex') };
}

describe("writeDirectly sends what Koa's respond() sends", () => {
  const cases: Array<[string, number, unknown, Record<string, string>?]> = [
    ['an object', 200, { id: 'q_1', amount: 350000, nested: { list: [1, 2, 3] } }],
    ['a created object with headers of its own', 201, { id: 'x' }, { Location: '/v1/quotes/q_1', 'RateLimit-Remaining': '9' }],
    ['an array', 200, [{ a: 1 }, { b: 'é ✓ 😀' }]],
    ['an accepted empty object', 202, {}],
    ['a header the result overrides', 200, { ok: true }, { 'X-Before': 'the result wins' }],
  ];
  for (const [what, status, body, headers] of cases) {
    it(`for ${what}`, async () => {
      decisions.length = 0;
      const direct = await send('direct', status, body, headers);
      expect(decisions).toEqual([true]);
      expect(direct).toEqual(await send('koa', status, body, headers));
    });
  }
});

describe('writesDirectly', () => {
  const koaFor = (method: string, res: Partial<http.ServerResponse> = {}) =>
    ({ method, res: { writableEnded: false, headersSent: false, socket: { writable: true }, ...res } }) as unknown as Koa.Context;

  it("leaves HEAD, 204, 205 and 304 to Koa (respond() writes no body for them)", () => {
    expect(writesDirectly(koaFor('HEAD'), 200)).toBe(false);
    for (const status of [204, 205, 304]) expect(writesDirectly(koaFor('GET'), status)).toBe(false);
    expect(writesDirectly(koaFor('GET'), 200)).toBe(true);
  });

  it('leaves an ended response, one whose headers went, or one whose socket is gone to Koa', () => {
    expect(writesDirectly(koaFor('GET', { writableEnded: true }), 200)).toBe(false);
    expect(writesDirectly(koaFor('GET', { headersSent: true }), 200)).toBe(false);
    expect(writesDirectly(koaFor('GET', { socket: { writable: false } as never }), 200)).toBe(false);
  });
});
