/**
 * The Koa application: middleware order and the contract wiring, nothing else.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import { bodyParsers } from './http/bodyParsers.ts';
import type { AppContext } from './context.ts';
import { createContract } from './http/contract.ts';
import { dashboard } from './dashboard/index.ts';
import { errorHandler } from './http/errorHandler.ts';
import { fail } from './errors.ts';
import { requestIdMiddleware } from './http/requestId.ts';
import { securityHandlers } from './http/security.ts';
import { siteRoutes } from './http/siteRoutes.ts';
import { operationHandlers } from './operations/index.ts';

export interface BuiltApp {
  /** The Koa application; serve it with `http.createServer(app.callback())`. */
  app: Koa;
  /** The openapi-backend instance that routes /v1 (tests check that it routes every operation of the spec). */
  api: OpenAPIBackend;
}

const isApiPath = (path: string) => path === '/v1' || path.startsWith('/v1/');

type Pipeline = (koa: Koa.Context) => Promise<void>;

/** What Koa's application does per request, which its TypeScript declarations leave out. */
interface KoaInternals {
  compose(middleware: Koa.Middleware[]): Pipeline;
  handleRequest(koa: Koa.Context, fn: Pipeline): Promise<void>;
}

/**
 * Koa, with /v1 taken past its per-request machinery: the request gets Koa's own context and the
 * same middleware (request id, problems and access log, the contract), but a response the contract
 * has written itself (a JSON result) needs nothing more, so Koa's onFinished listener, middleware
 * composition and respond() are left out for it: a sixth of GET /v1/account's CPU (issue 17's
 * profile). Any other response (a problem, a stream, no body) is finished by Koa's handleRequest
 * exactly as before, with the status the middleware set. Everything outside /v1 is Koa's, unchanged.
 */
class ServiceApp extends Koa {
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

export async function buildApp(ctx: AppContext): Promise<BuiltApp> {
  const app = new ServiceApp({ proxy: false });
  const contract = await createContract({
    ctx,
    handlers: operationHandlers,
    securityHandlers: securityHandlers(ctx),
    bodyParsers: bodyParsers(ctx),
  });
  const site = siteRoutes(ctx.store, () => ctx.config.publicBaseUrl);
  const dashboardMiddleware = dashboard(ctx);

  const requestId = requestIdMiddleware();
  const problems = errorHandler(ctx.log);
  const nothingAfter = async () => {};
  // /v1 by ServiceApp's own path: the same middleware as below, in the same order.
  app.api = (koa) => requestId(koa, () => problems(koa, () => contract.middleware(koa, nothingAfter))) as Promise<void>;
  app.use(requestId);
  app.use(problems);
  const siteMiddleware = site.routes() as unknown as Koa.Middleware;
  app.use(async (koa, next) => {
    // (ServiceApp sends /v1 past this; it would go straight to the contract too.)
    if (isApiPath(koa.path)) return contract.middleware(koa, next);
    // The dashboard answers its own errors as HTML pages (the API's are problem+json).
    if (koa.path === '/dashboard' || koa.path.startsWith('/dashboard/')) {
      return dashboardMiddleware(koa, async () => {
        throw fail.notFound(`There is nothing at ${koa.method} ${koa.path}.`);
      });
    }
    return siteMiddleware(koa, async () => {
      if (koa.status === 404 && koa.body === undefined) throw fail.notFound(`There is nothing at ${koa.method} ${koa.path}.`);
      return next();
    });
  });
  // Koa logs unhandled errors itself; the errorHandler above has already answered and logged them.
  app.silent = true;
  return { app, api: contract.api };
}
