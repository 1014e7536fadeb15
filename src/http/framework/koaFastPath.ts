/**
 * Patch of Koa: /v1 taken past Koa's per-request machinery.
 *
 * Replaces: `Application.prototype.callback` (koa/lib/application.js) for the server's request
 * listener, and calls Koa's private `compose` (the `options.compose` it keeps) and
 * `handleRequest(ctx, fnMiddleware)`, which its TypeScript declarations leave out.
 *
 * Why: a /v1 request gets Koa's own context and the same middleware (request id, problems and access
 * log, the contract), nested directly instead of composed. A response the contract has written
 * itself (a JSON result, see koaDirectWrite.ts) needs nothing more, so Koa's onFinished listener
 * (on-finished/ee-first attached per request), middleware composition and respond() are left out
 * for it. Any other response (a problem, a stream, no body) is finished by Koa's handleRequest
 * exactly as before, with the status the middleware set. Everything outside /v1 is Koa's, unchanged,
 * and so is everything when the app uses asyncLocalStorage (ctxStorage).
 *
 * Measured: the onFinished listener alone was about 7 % of GET /v1/account's CPU, and the three
 * together a sixth of it (issue 17's profile; the commit "Edge: /v1 past Koa's per-request
 * machinery when the contract has written the response itself").
 *
 * Checked against: koa 3.3.0 (pinned exactly in package.json). handleRequest there sets
 * `res.statusCode = 404`, attaches onFinished, runs the middleware and then respond(ctx), which
 * returns at once when `ctx.respond === false`. test/unit/http/framework/koaFastPath.test.ts fails
 * when those private methods change name, arity or that behaviour.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';

export type Pipeline = (koa: Koa.Context) => Promise<void>;

/** What Koa's application does per request, which its TypeScript declarations leave out. */
export interface KoaInternals {
  compose(middleware: Koa.Middleware[]): Pipeline;
  handleRequest(koa: Koa.Context, fn: Pipeline): Promise<void>;
}

export const isApiPath = (path: string) => path === '/v1' || path.startsWith('/v1/');

export class ServiceApp extends Koa {
  /** The /v1 pipeline: the same middleware the app registers, nested directly (null: Koa's own path for everything). */
  api: Pipeline | null = null;

  override callback(): ReturnType<Koa['callback']> {
    const api = this.api;
    if (!api || this.ctxStorage) return super.callback();
    const koa = this as unknown as KoaInternals;
    const rest = koa.compose(this.middleware);
    if (!this.listenerCount('error')) this.on('error', this.onerror);
    const respondLater = (context: Koa.Context): Promise<void> | undefined => {
      if (context.respond === false) return undefined;
      const res = context.res;
      const status = res.statusCode;
      // handleRequest starts every response at 404 before it runs the middleware; ours has run.
      return koa.handleRequest(context, () => {
        res.statusCode = status;
        return Promise.resolve();
      });
    };
    return (req, res) => {
      const context = this.createContext(req as IncomingMessage, res as ServerResponse);
      if (!isApiPath(context.path)) return koa.handleRequest(context, rest);
      res.statusCode = 404;
      return api(context)
        .then(() => respondLater(context))
        .catch((err: Error) => context.onerror(err));
    };
  }
}
