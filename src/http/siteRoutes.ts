/**
 * Routes outside the contract: health, readiness, the bundled spec and its Redoc reference.
 *
 * /openapi.json is generated/openapi.json with one change: the default of the first server's
 * `publicBaseUrl` variable is the URL this service is published at (PUBLIC_BASE_URL), so a client
 * generated from it points at the right host. `?version=<date>` serves that released version's
 * frozen bundle (openapi/versions/) the same way, and /docs?version=<date> its reference;
 * /docs/changelog lists the version changes from their modules (src/domain/versions/changes/).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Router from '@koa/router';
import type { Store } from '../store/store.ts';
import { BUNDLED_SPEC_URL } from '../contract/spec.ts';
import { CURRENT_VERSION } from '../domain/versions/registry.ts';
import { RELEASED_VERSIONS } from '../domain/versions/released.ts';

/** The versions whose contract and reference are served: the released ones and the current one. */
const SERVED_VERSIONS = [...new Set([...RELEASED_VERSIONS, CURRENT_VERSION])];
import { changelogPage } from './changelog.ts';
import { ApiProblem } from './problem.ts';

const require = createRequire(import.meta.url);

const referencePage = (specUrl: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Mortgage Origination API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
  </head>
  <body>
    <redoc spec-url="${specUrl}" show-extensions="x-required-role,x-required-scope"></redoc>
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
  const served = new Map<string, { baseUrl: string; spec: string }>();
  /** The version a `?version=` asks for (the current one without it); a bad one is 400 api_version_invalid. */
  const versionAsked = (query: unknown): string => {
    if (query === undefined) return CURRENT_VERSION;
    // The current version is served before it is released too (its change modules are on main, its bundle is the working contract).
    if (typeof query === 'string' && (RELEASED_VERSIONS.includes(query) || query === CURRENT_VERSION)) return query;
    throw new ApiProblem(400, 'api_version_invalid', 'The API version is not valid', `version must be one of ${SERVED_VERSIONS.join(', ')}.`, {
      supportedVersions: SERVED_VERSIONS,
    });
  };
  const bundleOf = (version: string) => (version === CURRENT_VERSION ? bundled : readFileSync(new URL(`../../openapi/versions/${version}.json`, import.meta.url), 'utf8'));
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
    const version = versionAsked(ctx.query.version);
    const baseUrl = publicBaseUrl();
    let spec = served.get(version);
    if (spec?.baseUrl !== baseUrl) served.set(version, (spec = { baseUrl, spec: publishedSpec(bundleOf(version), baseUrl) }));
    ctx.set('Mos-Version', version);
    ctx.body = spec.spec;
  });
  router.get('/docs', (ctx) => {
    const version = versionAsked(ctx.query.version);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = referencePage(version === CURRENT_VERSION ? '/openapi.json' : `/openapi.json?version=${version}`);
  });
  router.get('/docs/changelog', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = changelogPage();
  });
  router.get('/docs/redoc.standalone.js', (ctx) => {
    redocScript ??= readFileSync(redocPath);
    ctx.type = 'application/javascript';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = redocScript;
  });
  return router;
}
