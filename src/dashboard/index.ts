/**
 * The dashboard under /dashboard: server-rendered pages, each a thin view over the same use cases
 * the /v1 handlers call (src/services/). This file is the pipeline every dashboard request goes
 * through: security headers, the session from its cookie, and for a POST the same-origin check,
 * the form and its CSRF token, before the page runs; failures become HTML error pages.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AppContext } from '../context.ts';
import { fail, isAppError } from '../errors.ts';
import { resumeSession, signInLimits } from '../services/sessions.ts';
import { signUpLimit } from '../services/users.ts';
import { assetRoutes, isAssetPath } from './assets.ts';
import { DashboardFormTooLarge, readForm } from './forms.ts';
import { storeUnavailability } from '../http/storeUnavailability.ts';
import { gateRestrictedSession, stepUpIfNeeded } from './mfaGate.ts';
import { SignInRequired, statusOf } from './page.ts';
import { apiKeyRoutes } from './pages/apiKeys.ts';
import { applicationRoutes } from './pages/applications.ts';
import { auditRoutes } from './pages/audit.ts';
import { deskRoutes } from './pages/desk.ts';
import { authRoutes, ANONYMOUS_FORMS } from './pages/auth.ts';
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
import { checkCsrfToken, checkSameOrigin, cookieNames, readCookie, setCookie, setSecurityHeaders } from './security.ts';
import type { DashboardState } from './state.ts';

export function dashboard(ctx: AppContext): Middleware {
  const router = new Router({ prefix: '/dashboard' });
  const names = () => cookieNames(ctx.config.publicBaseUrl);
  assetRoutes(router);
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
  const routes = router.routes() as unknown as Middleware;

  return async (koa, next) => {
    setSecurityHeaders(koa);
    if (isAssetPath(koa.path)) return routes(koa, next);
    const state: DashboardState = { session: null, anonymousCsrf: null, form: null };
    koa.state.dashboard = state;
    try {
      const cookies = names();
      const sessionId = readCookie(koa, cookies.session);
      if (sessionId) {
        state.session = await resumeSession(ctx, sessionId);
        if (!state.session) setCookie(koa, cookies, 'session', null); // ended: the browser forgets it too
      }
      state.anonymousCsrf = readCookie(koa, cookies.csrf) ?? null;
      if (koa.method === 'POST') {
        checkSameOrigin(koa, ctx.config.publicBaseUrl);
        const anonymousForm = ANONYMOUS_FORMS.some((pattern) => pattern.test(koa.path));
        // A form sent after its session ended (or signed out elsewhere) changes nothing: sign in again.
        if (!anonymousForm && !state.session) throw new SignInRequired();
        state.form = await readForm(koa);
        checkCsrfToken(state.form.get('_csrf'), anonymousForm ? (state.anonymousCsrf ?? undefined) : state.session?.csrfToken);
      }
      // A session still owing its second factor reaches only the pages that take it; a sensitive
      // form asks for a fresh code first (mfaGate.ts).
      if (gateRestrictedSession(koa) || (await stepUpIfNeeded(koa, ctx, limits))) return;
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
