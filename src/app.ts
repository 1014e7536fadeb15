/**
 * The Koa application: middleware order and the contract wiring, nothing else.
 */
import Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import { bodyParsers } from './http/bodyParsers.ts';
import type { AppContext } from './context.ts';
import { createContract } from './http/contract.ts';
import { dashboard } from './dashboard/index.ts';
import { errorHandler } from './http/errorHandler.ts';
import { isApiPath, ServiceApp } from './http/framework/koaFastPath.ts';
import { fail } from './errors.ts';
import { observeRequests } from './http/observe.ts';
import { requestIdMiddleware } from './http/requestId.ts';
import { requestLogMiddleware } from './http/requestLog.ts';
import { requestLogRecorder, type RequestLogRecorder } from './services/requestLogs.ts';
import { securityHandlers } from './http/security.ts';
import { siteRoutes } from './http/siteRoutes.ts';
import { operationHandlers } from './operations/index.ts';

export interface AppOptions {
  /** Record /v1 requests in the request log (default: REQUEST_LOGS); the benchmark compares both. */
  requestLogs?: boolean;
}

export interface BuiltApp {
  /** The Koa application; serve it with `http.createServer(app.callback())`. */
  app: Koa;
  /** The openapi-backend instance that routes /v1 (tests check that it routes every operation of the spec). */
  api: OpenAPIBackend;
  /** The request log's buffer: stop() it (it writes what is left) after the server closed and before the store does. */
  requestLogs: RequestLogRecorder;
}

export async function buildApp(ctx: AppContext, options: AppOptions = {}): Promise<BuiltApp> {
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
  // Metrics and spans per request; null (not installed at all) when both are off.
  const observe = observeRequests(ctx);
  const requestLogs = requestLogRecorder(ctx);
  const recording = options.requestLogs ?? ctx.config.requestLogs.enabled;
  const requestLog = recording ? requestLogMiddleware(requestLogs.record, () => ctx.clock.now().getTime()) : null;
  const nothingAfter = async () => {};
  const answer = (koa: Koa.Context) => problems(koa, () => contract.middleware(koa, nothingAfter));
  const logged = requestLog ? (koa: Koa.Context) => requestLog(koa, () => answer(koa)) : answer;
  const observed = observe ? (koa: Koa.Context) => observe(koa, () => logged(koa)) : logged;
  // /v1 by ServiceApp's own path: the same middleware as below, in the same order.
  app.api = ((koa: Koa.Context) => requestId(koa, () => observed(koa))) as (koa: Koa.Context) => Promise<void>;
  app.use(requestId);
  if (observe) app.use(observe);
  if (requestLog) app.use(requestLog);
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
  return { app, api: contract.api, requestLogs };
}
