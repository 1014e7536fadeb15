/**
 * The JSON body read by bufferedJson against koa-body reading the same bytes: the same value, or
 * the same kind of refusal, for bodies of every shape, read at once or once the whole body is in.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferedJson, jsonBodyParser, NOT_HERE } from '../../../src/http/requestBody.ts';

const LIMIT = 4096;
let server: http.Server;
let port: number;

interface Outcome {
  path: string;
  chunked?: boolean;
  value?: unknown;
  error?: { status: unknown; name: string; type: unknown };
}

beforeAll(async () => {
  const app = new Koa();
  const koaBody = jsonBodyParser(LIMIT);
  app.use(async (ctx) => {
    const refusal = (err: unknown) => {
      const e = err as { status?: unknown; type?: unknown; name: string };
      return { status: e.status, name: e.name, type: e.type };
    };
    let outcome: Outcome;
    // Read at once (the body may still be arriving) or once Node's parser has all of it.
    if (ctx.get('x-wait') === 'yes') await new Promise((resolve) => setImmediate(resolve));
    let buffered: unknown = NOT_HERE;
    try {
      if (ctx.get('x-read') === 'buffered') buffered = bufferedJson(ctx, LIMIT);
      if (buffered !== NOT_HERE) outcome = { path: 'buffered', value: await buffered };
    } catch (err) {
      outcome = { path: 'buffered', error: refusal(err) };
    }
    if (buffered === NOT_HERE && outcome! === undefined) {
      try {
        await koaBody(ctx, async () => {});
        outcome = { path: 'koa-body', value: (ctx.request as { body?: unknown }).body };
      } catch (err) {
        outcome = { path: 'koa-body', error: refusal(err) };
      }
    }
    // Values travel as JSON with an own __proto__ key kept visible.
    ctx.body = {
      ...outcome!,
      chunked: ctx.get('transfer-encoding') === 'chunked',
      value: outcome!.value === undefined ? undefined : Object.entries(outcome!.value as object),
    };
  });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function send(body: Buffer, read: 'buffered' | 'koa-body', wait = false): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-read': read, 'x-wait': wait ? 'yes' : 'no' };
    if (read === 'buffered') headers['content-length'] = String(body.length);
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(JSON.parse(text) as Outcome));
    });
    req.on('error', reject);
    if (read === 'buffered') req.end(body);
    else {
      // Written before end(), without a Content-Length, it goes chunked: koa-body reads it (bufferedJson declines).
      req.write(body);
      req.end();
    }
  });
}

describe('bufferedJson', () => {
  it('gives what koa-body gives for the same bytes', async () => {
    const samples = [
      '{"amount":350000,"term":30}',
      '\ufeff{"a":1}',
      '\ufeff',
      '  \n\t[1,2,3]',
      ' "just a string"',
      '42',
      '{"a":',
      '{"__proto__":{"x":1}}',
      '{"a":{"\\u005f_proto__":{}}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"é":"ü","emoji":"\ud83d\ude00"}',
    ].map((s) => Buffer.from(s, 'utf8'));
    samples.push(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d])); // invalid UTF-8 inside a string
    const random = fc.sample(fc.oneof(fc.json().map((s) => Buffer.from(s)), fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b))), 150);
    for (const body of [...samples, ...random]) {
      const slow = await send(body, 'koa-body');
      expect([slow.path, slow.chunked]).toEqual(['koa-body', true]);
      for (const wait of [false, true]) {
        const fast = await send(body, 'buffered', wait);
        expect(fast.path, body.toString('hex')).toBe('buffered');
        expect({ value: fast.value, error: fast.error }, body.toString('hex')).toEqual({ value: slow.value, error: slow.error });
      }
    }
  });

  it('leaves to koa-body what it does not read itself', async () => {
    const big = Buffer.from(JSON.stringify({ a: 'x'.repeat(LIMIT) }));
    const fast = await send(big, 'buffered');
    expect(fast.path).toBe('koa-body');
    expect(fast.error?.status).toBe(413);
  });
});
