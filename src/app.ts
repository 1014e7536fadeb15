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

export async function buildApp(ctx: AppContext): Promise<BuiltApp> {
  const app = new Koa({ proxy: false });
  const contract = await createContract({
    ctx,
    handlers: operationHandlers,
    securityHandlers: securityHandlers(ctx),
    bodyParsers: bodyParsers(ctx),
  });
  const site = siteRoutes(ctx.store, () => ctx.config.publicBaseUrl);
  const dashboardMiddleware = dashboard(ctx);

  app.use(requestIdMiddleware());
  app.use(errorHandler(ctx.log));
  const siteMiddleware = site.routes() as unknown as Koa.Middleware;
  app.use(async (koa, next) => {
    // /v1 goes straight to the contract: the site's router has nothing there, and matching it on
    // every API call was a tenth of a light request's CPU (issue 17's profile).
    if (koa.path === '/v1' || koa.path.startsWith('/v1/')) return contract.middleware(koa, next);
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
