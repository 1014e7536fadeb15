/**
 * The dashboard under /dashboard: server-rendered pages, each a thin view over the same use cases
 * the /v1 handlers call (src/services/). This file is the pipeline every dashboard request goes
 * through: security headers, one spelling per path, the session from its cookie, for a POST the
 * same-origin check; then, for the route the router matched, what that route needs (routeAccess.ts):
 * the form and its CSRF token, the second factor's gates, then the page. Failures become HTML
 * error pages.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AppContext } from '../context.ts';
import { fail, isAppError } from '../errors.ts';
import { resumeSession, signInLimits, type SignInLimits } from '../services/sessions.ts';
import { signUpLimit } from '../services/users.ts';
import { assetRoutes } from './assets.ts';
import { DashboardFormTooLarge, readForm } from './forms.ts';
import { storeUnavailability } from '../http/storeUnavailability.ts';
import { gateRestrictedSession, stepUpIfNeeded } from './mfaGate.ts';
import { SignInRequired, stateOf, statusOf } from './page.ts';
import { apiKeyRoutes } from './pages/apiKeys.ts';
import { applicationRoutes } from './pages/applications.ts';
import { auditRoutes } from './pages/audit.ts';
import { deskRoutes } from './pages/desk.ts';
import { authRoutes } from './pages/auth.ts';
import { environmentRoutes } from './pages/environment.ts';
import { exportRoutes } from './pages/exports.ts';
import { overviewRoutes } from './pages/overview.ts';
import { quoteRoutes } from './pages/quotes.ts';
import { securityRoutes } from './pages/security.ts';
import { requestLogRoutes } from './pages/requestLogs.ts';
import { settingsRoutes } from './pages/settings.ts';
import { teamRoutes } from './pages/team.ts';
import { webhookRoutes } from './pages/webhooks.ts';
import { render } from './render.ts';
import { accessOf, type RegisteredRoute, type RouteAccess } from './routeAccess.ts';
import { checkCsrfToken, checkSameOrigin, cookieNames, readCookie, setCookie, setSecurityHeaders } from './security.ts';
import type { DashboardState } from './state.ts';

/**
 * One spelling per page: paths match exactly, case and trailing slash included (a form sent to
 * `/dashboard/api-keys/` or `/dashboard/API-Keys` is a 404, not the same form by another name).
 */
const ROUTER_OPTIONS = { prefix: '/dashboard', strict: true, sensitive: true } as const;

interface Built {
  router: Router;
  limits: SignInLimits;
  /** Each route's entry in ROUTE_ACCESS (routeAccess.ts), checked when built. */
  access: Map<RegisteredRoute, RouteAccess>;
}

function build(ctx: AppContext): Built {
  const router = new Router(ROUTER_OPTIONS);
  const names = () => cookieNames(ctx.config.publicBaseUrl);
  const limits = signInLimits(ctx);
  authRoutes(router, ctx, { limits: { ...limits, signUps: signUpLimit(ctx) }, names });
  securityRoutes(router, ctx, limits);
  overviewRoutes(router, ctx);
  environmentRoutes(router, ctx);
  apiKeyRoutes(router, ctx);
  webhookRoutes(router, ctx);
  applicationRoutes(router, ctx);
  deskRoutes(router, ctx);
  quoteRoutes(router, ctx);
  exportRoutes(router, ctx);
  teamRoutes(router, ctx);
  requestLogRoutes(router, ctx);
  settingsRoutes(router, ctx);
  auditRoutes(router, ctx);
  return { router, limits, access: accessOf(router.stack) };
}

/** The dashboard's routes (not its static files) with what each needs: for tests that walk every page and form. */
export function dashboardRoutes(ctx: AppContext): Array<{ name: string; methods: string[]; path: string; access: RouteAccess }> {
  return [...build(ctx).access].map(([route, access]) => ({ name: route.name!, methods: route.methods, path: String(route.path), access }));
}

export function dashboard(ctx: AppContext): Middleware {
  const { router, limits, access } = build(ctx);
  // Each route's own checks run first in its chain: the decision is the route's that runs.
  for (const layer of router.stack) layer.stack.unshift(guard(ctx, limits, access.get(layer)!));
  const routes = router.routes() as unknown as Middleware;
  const assetRouter = new Router(ROUTER_OPTIONS);
  assetRoutes(assetRouter);
  const assets = assetRouter.routes() as unknown as Middleware;

  return async (koa, next) => {
    setSecurityHeaders(koa);
    // Static files need no session.
    if (assetRouter.match(koa.path, koa.method).route) return assets(koa, next);
    const state: DashboardState = { session: null, anonymousCsrf: null, form: null, reads: null };
    koa.state.dashboard = state;
    try {
      // A trailing slash is not a spelling of a page: a GET of one goes to the page's own path, anything else is a 404.
      if (koa.path.endsWith('/')) {
        const canonical = koa.path.replace(/\/+$/, '');
        if ((koa.method !== 'GET' && koa.method !== 'HEAD') || !router.match(canonical, 'GET').route) throw fail.notFound(`There is no dashboard page at ${koa.path}.`);
        koa.status = 301;
        return koa.redirect(canonical + koa.search);
      }
      const cookies = cookieNames(ctx.config.publicBaseUrl);
      const sessionId = readCookie(koa, cookies.session);
      if (sessionId) {
        state.session = await resumeSession(ctx, sessionId);
        if (!state.session) setCookie(koa, cookies, 'session', null); // ended: the browser forgets it too
      }
      state.anonymousCsrf = readCookie(koa, cookies.csrf) ?? null;
      if (koa.method === 'POST') checkSameOrigin(koa, ctx.config.publicBaseUrl);
      await routes(koa, async () => {});
      if (koa.status === 404 && koa.body === undefined) throw fail.notFound(`There is no dashboard page at ${koa.path}.`);
    } catch (err) {
      if (err instanceof SignInRequired) {
        koa.status = 303;
        koa.redirect('/dashboard/sign-in');
        return;
      }
      // A store that cannot serve now is the same 503 the API answers, with its Retry-After.
      err = storeUnavailability(err) ?? err;
      const status = err instanceof DashboardFormTooLarge ? 413 : isAppError(err) ? statusOf(err) : 500;
      if (isAppError(err)) koa.state.problemCode = err.code; // counted by the edge's metrics (a 429's kind)
      if (status >= 500) ctx.log.error({ err, requestId: koa.state.requestId, traceId: koa.state.traceId, path: koa.path }, 'dashboard page failed');
      const message = err instanceof DashboardFormTooLarge ? err.message : isAppError(err) && status < 500 ? err.detail : 'Something went wrong on our side; try again in a moment.';
      if (isAppError(err) && err.retryAfterSeconds !== undefined) koa.set('Retry-After', String(err.retryAfterSeconds));
      render(koa, 'error', { title: TITLES[status] ?? 'Error', status, message }, status);
    }
  };
}

/**
 * What runs before a route's page, knowing the route: a form needs a session (unless sent before
 * sign-in), is read, and must carry the right CSRF token; then a session still owing its second
 * factor reaches only the routes open to it, and a form that asks for a fresh code asks (mfaGate.ts).
 */
function guard(ctx: AppContext, limits: SignInLimits, access: RouteAccess): Middleware {
  return async (koa, next) => {
    const state = stateOf(koa);
    if (koa.method === 'POST') {
      // A form sent after its session ended (or signed out elsewhere) changes nothing: sign in again.
      if (!access.beforeSignIn && !state.session) throw new SignInRequired();
      state.form = await readForm(koa);
      checkCsrfToken(state.form.get('_csrf'), access.beforeSignIn ? (state.anonymousCsrf ?? undefined) : state.session?.csrfToken);
    }
    if (gateRestrictedSession(koa, access) || (await stepUpIfNeeded(koa, ctx, limits, access))) return;
    const reader = state.session ? `user:${state.session.user.userId}` : null;
    if (access.replicaReads && reader && ctx.store.forReplicaReads) state.reads = Object.create(ctx, { store: { value: ctx.store.forReplicaReads(reader) } }) as AppContext;
    try {
      await next();
    } finally {
      // What this user's form wrote is read from the primary for a while: their next page shows it.
      if (koa.method === 'POST' && reader) ctx.store.clientWrote?.(reader);
    }
  };
}

const TITLES: Record<number, string> = {
  400: 'Not valid',
  401: 'Not signed in',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  415: 'Not a form',
  422: 'Refused',
  429: 'Too many attempts',
  500: 'Something went wrong',
  502: 'A partner failed',
  503: 'Unavailable',
};
