/**
 * What src/http/framework/koaFastPath.ts relies on in Koa's private API, pinned: compose and
 * handleRequest exist with the arity it calls them with; handleRequest starts the response at 404,
 * runs the pipeline, then respond() writes the body unless `ctx.respond === false`; callback()
 * hands each request to handleRequest with the composed middleware. Then ServiceApp itself: /v1
 * past Koa when the pipeline wrote the response, through handleRequest otherwise, and every other
 * path Koa's own.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceApp, type KoaInternals, type Pipeline } from '../../../../src/http/framework/koaFastPath.ts';
import { writeDirectly } from '../../../../src/http/framework/koaDirectWrite.ts';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A Koa whose handleRequest calls are counted (by the path they were for). */
function counting<T extends Koa>(app: T): { app: T; handled: string[] } {
  const handled: string[] = [];
  const internals = app as unknown as KoaInternals;
  const original = internals.handleRequest.bind(app);
  internals.handleRequest = (ctx, fn) => {
    handled.push(ctx.path);
    return original(ctx, fn);
  };
  return { app, handled };
}

describe("Koa's private API as koaFastPath.ts calls it", () => {
  it('compose(middleware) and handleRequest(ctx, fn) exist with those arities', () => {
    const app = new Koa() as unknown as KoaInternals & Koa;
    expect(typeof app.compose).toBe('function');
    expect(app.compose.length).toBe(1);
    expect(typeof app.compose([])).toBe('function');
    expect(typeof app.handleRequest).toBe('function');
    expect(app.handleRequest.length).toBe(2);
    expect(app.createContext.length).toBe(2);
  });

  it('handleRequest starts the response at 404, runs the pipeline, then writes the body it set', async () => {
    const app = new Koa();
    const seen: number[] = [];
    const pipeline: Pipeline = async (ctx) => {
      seen.push(ctx.res.statusCode);
      ctx.res.statusCode = 200;
      ctx.status = 202;
      ctx.body = { ok: true };
    };
    const base = await serve((req, res) => {
      (app as unknown as KoaInternals).handleRequest(app.createContext(req, res), pipeline);
    });
    const response = await fetch(`${base}/x`);
    expect(seen).toEqual([404]);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('handleRequest leaves the response alone when the pipeline set ctx.respond = false', async () => {
    const app = new Koa();
    const base = await serve((req, res) => {
      (app as unknown as KoaInternals).handleRequest(app.createContext(req, res), async (ctx) => {
        ctx.body = 'Koa would write this';
        // (the body setter declared this body's length; the pipeline sends another)
        ctx.remove('Content-Length');
        ctx.respond = false;
        ctx.res.statusCode = 200;
        ctx.res.end('written by the pipeline');
      });
    });
    expect(await (await fetch(`${base}/x`)).text()).toBe('written by the pipeline');
  });

  it('callback() runs every request through handleRequest with the composed middleware', async () => {
    const { app, handled } = counting(new Koa());
    app.use(async (ctx) => {
      ctx.body = 'composed';
    });
    const base = await serve(app.callback());
    expect(await (await fetch(`${base}/a`)).text()).toBe('composed');
    expect(handled).toEqual(['/a']);
  });
});

describe('ServiceApp', () => {
  function serviceApp(api: Pipeline | null) {
    const { app, handled } = counting(new ServiceApp());
    app.api = api;
    app.use(async (ctx) => {
      ctx.body = `koa ${ctx.path}`;
    });
    return { app, handled };
  }

  it('answers /v1 without handleRequest when the pipeline wrote the response itself', async () => {
    const { app, handled } = serviceApp(async (ctx) => writeDirectly(ctx, 200, { 'X-Test': '1' }, '{"direct":true}'));
    const base = await serve(app.callback());
    const response = await fetch(`${base}/v1/account`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-test')).toBe('1');
    expect(await response.json()).toEqual({ direct: true });
    expect(handled).toEqual([]);
  });

  it('finishes any other /v1 response through handleRequest, keeping the status the pipeline set', async () => {
    const { app, handled } = serviceApp(async (ctx) => {
      ctx.status = 409;
      ctx.body = { problem: true };
    });
    const base = await serve(app.callback());
    const response = await fetch(`${base}/v1/quotes`);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({ problem: true });
    expect(handled).toEqual(['/v1/quotes']);
  });

  it("leaves every other path, and every path when no /v1 pipeline is set, to Koa's own callback", async () => {
    const withApi = serviceApp(async () => {
      throw new Error('not for this path');
    });
    const base = await serve(withApi.app.callback());
    expect(await (await fetch(`${base}/v1x`)).text()).toBe('koa /v1x');
    expect(withApi.handled).toEqual(['/v1x']);

    const without = serviceApp(null);
    const plain = await serve(without.app.callback());
    expect(await (await fetch(`${plain}/v1/account`)).text()).toBe('koa /v1/account');
    expect(without.handled).toEqual(['/v1/account']);
  });
});
