/**
 * Routes outside the contract: health, readiness, the bundled spec and its Redoc reference.
 *
 * /openapi.json is generated/openapi.json with one change: the default of the first server's
 * `publicBaseUrl` variable is the URL this service is published at (PUBLIC_BASE_URL), so a client
 * generated from it points at the right host.
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
    <redoc spec-url="/openapi.json" show-extensions="x-required-role,x-required-scope"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

interface PublishedSpec {
  servers?: Array<{ variables?: Record<string, { default: string }> }>;
}

/** The published document with `publicBaseUrl` as the default of the first server's variable. */
function publishedSpec(bundled: string, publicBaseUrl: string): string {
  const doc = JSON.parse(bundled) as PublishedSpec;
  const variable = doc.servers?.[0]?.variables?.publicBaseUrl;
  if (variable) variable.default = publicBaseUrl;
  return JSON.stringify(doc, null, 2) + '\n';
}

export function siteRoutes(store: Store, publicBaseUrl: () => string): Router {
  const router = new Router();
  const bundled = readFileSync(BUNDLED_SPEC_URL, 'utf8');
  let served: { baseUrl: string; spec: string } | undefined;
  const redocPath = require.resolve('redoc/bundles/redoc.standalone.js');
  let redocScript: Buffer | undefined;

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    const ready = store.isOpen();
    const degraded = !ready && store.storageState?.() === 'degraded';
    ctx.status = ready ? 200 : 503;
    // The archive's state is detail, not readiness: a failing archive leaves the service serving.
    const archive = store.archiveStatus?.();
    ctx.body = {
      status: ready ? 'ready' : 'unavailable',
      store: ready ? 'open' : degraded ? 'degraded' : 'closed',
      ...(archive ? { archive: { state: archive.state, lagSeconds: Math.round(archive.lagSeconds * 10) / 10 } } : {}),
    };
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    const baseUrl = publicBaseUrl();
    if (served?.baseUrl !== baseUrl) served = { baseUrl, spec: publishedSpec(bundled, baseUrl) };
    ctx.body = served.spec;
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
