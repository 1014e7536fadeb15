/**
 * Routes outside the contract: health, readiness, the bundled spec and its Redoc reference.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Router from '@koa/router';
import type { Store } from '../store/store.ts';
import { BUNDLED_SPEC_URL } from '../contract/spec.ts';

const require = createRequire(import.meta.url);

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Mortgage Origination API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
  </head>
  <body>
    <redoc spec-url="/openapi.json"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

export function siteRoutes(store: Store): Router {
  const router = new Router();
  const spec = readFileSync(BUNDLED_SPEC_URL, 'utf8');
  const redocPath = require.resolve('redoc/bundles/redoc.standalone.js');
  let redocScript: Buffer | undefined;

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    const ready = store.isOpen();
    const degraded = !ready && (store as { storageState?: () => string }).storageState?.() === 'degraded';
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable', store: ready ? 'open' : degraded ? 'degraded' : 'closed' };
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = spec;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = REFERENCE_PAGE;
  });
  router.get('/docs/redoc.standalone.js', (ctx) => {
    redocScript ??= readFileSync(redocPath);
    ctx.type = 'application/javascript';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = redocScript;
  });
  return router;
}
