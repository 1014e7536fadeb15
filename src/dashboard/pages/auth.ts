/**
 * Sign-up, sign-in (the password, then the code of a second factor when the user has one),
 * sign-out and accepting an invitation: the pages a visitor sees before signing in.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { isAppError } from '../../errors.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../domain/users/password.ts';
import { startSession, signIn, endSession, type SignInLimits } from '../../services/sessions.ts';
import { acceptInvitation, findInvitation, signUp } from '../../services/users.ts';
import { checkSecondFactor } from '../../services/mfa.ts';
import type { AttemptLimiter } from '../../services/rateLimits.ts';
import { SECOND_FACTOR_PAGE } from '../mfaGate.ts';
import { actingAs, anonymous, ensureAnonymousCsrf, formErrors, formOf, holdSession, redirect, requireSession, stateOf, submittedValues } from '../page.ts';
import { render } from '../render.ts';
import { readCookie, setCookie, type CookieNames } from '../security.ts';
import { overviewData } from './overview.ts';

const PASSWORD_RULE = `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters; any characters, spaces too.`;

interface AuthOptions {
  limits: SignInLimits & { signUps: AttemptLimiter };
  names: () => CookieNames;
}

export function authRoutes(router: Router, ctx: AppContext, options: AuthOptions): void {
  const { limits, names } = options;

  const signUpPage = (koa: Context, extra: Record<string, unknown> = {}, status = 200) => {
    ensureAnonymousCsrf(koa, names());
    render(koa, 'sign-up', { title: 'Create an account', values: {}, errors: {}, message: null, passwordRule: PASSWORD_RULE, ...extra }, status);
  };
  const signInPage = (koa: Context, extra: Record<string, unknown> = {}, status = 200) => {
    ensureAnonymousCsrf(koa, names());
    render(koa, 'sign-in', { title: 'Sign in', values: {}, errors: {}, message: null, notice: null, ...extra }, status);
  };

  router.get('sign-up', '/sign-up', async (koa) => {
    if (stateOf(koa).session) return redirect(koa, '/dashboard');
    signUpPage(koa);
  });

  router.post('sign-up.send', '/sign-up', async (koa) => {
    // Signed in already: most often the browser re-sending the sign-up that just succeeded (a
    // reload of the page that showed the first key once). Nothing to make again: the overview.
    if (stateOf(koa).session) return redirect(koa, '/dashboard');
    const form = formOf(koa);
    try {
      const { user, firstKey, account } = await signUp(anonymous(ctx, koa), limits.signUps, {
        name: form.get('/name') ?? '',
        email: form.get('/email') ?? '',
        password: form.get('/password') ?? '',
        clientAddress: koa.request.ip,
      });
      holdSession(koa, ctx, await startSession(ctx, user, readCookie(koa, names().session)));
      ctx.log.info({ accountId: account.accountId, userId: user.userId }, 'dashboard sign-up');
      // The first key's secret is in this response only (never stored): the overview shows it once.
      render(koa, 'overview', { ...(await overviewData(ctx, stateOf(koa).session!)), newKey: firstKey.apiKey, welcome: true });
    } catch (err) {
      if (isAppError(err) && err.kind === 'rate_limited') {
        if (err.retryAfterSeconds !== undefined) koa.set('Retry-After', String(err.retryAfterSeconds));
        return signUpPage(koa, { values: submittedValues(form), message: err.detail }, 429);
      }
      const shown = formErrors(err);
      if (!shown) throw err;
      signUpPage(koa, { values: submittedValues(form), errors: shown.fields, message: shown.message }, isAppError(err) && err.kind === 'conflict' ? 409 : 400);
    }
  });

  router.get('sign-in', '/sign-in', async (koa) => {
    if (stateOf(koa).session) return redirect(koa, '/dashboard');
    signInPage(koa, { notice: koa.query['signed-out'] === '1' ? 'You are signed out.' : null });
  });

  router.post('sign-in.send', '/sign-in', async (koa) => {
    const form = formOf(koa);
    try {
      const session = await signIn(anonymous(ctx, koa), limits, {
        email: form.get('/email') ?? '',
        password: form.get('/password') ?? '',
        clientAddress: koa.request.ip,
        replacing: readCookie(koa, names().session),
      });
      holdSession(koa, ctx, session);
      redirect(koa, session.stage === 'second_factor' ? SECOND_FACTOR_PAGE : '/dashboard');
    } catch (err) {
      if (!isAppError(err) || (err.kind !== 'unauthenticated' && err.kind !== 'rate_limited')) throw err;
      if (err.retryAfterSeconds !== undefined) koa.set('Retry-After', String(err.retryAfterSeconds));
      signInPage(koa, { values: { '/email': form.get('/email') ?? '' }, message: err.detail }, err.kind === 'rate_limited' ? 429 : 401);
    }
  });

  const codePage = (koa: Context, extra: Record<string, unknown> = {}, status = 200) =>
    render(koa, 'sign-in-code', { title: 'Enter your code', errors: {}, message: null, ...extra }, status);

  // The second step of signing in, for a user with a second factor: the session opens nothing else until then.
  router.get('sign-in.code', '/sign-in/code', async (koa) => {
    if (requireSession(koa).stage !== 'second_factor') return redirect(koa, '/dashboard');
    codePage(koa);
  });

  router.post('sign-in.code.send', '/sign-in/code', async (koa) => {
    const session = requireSession(koa);
    if (session.stage !== 'second_factor') return redirect(koa, '/dashboard');
    try {
      // Signed in now: under a new id and CSRF token, so whoever knew the id before the code holds nothing.
      const checked = await checkSecondFactor(actingAs(ctx, koa, session), limits, session, formOf(koa).get('/code') ?? '', koa.request.ip);
      holdSession(koa, ctx, checked.session);
      redirect(koa, '/dashboard');
    } catch (err) {
      if (!isAppError(err) || (err.kind !== 'invalid' && err.kind !== 'rate_limited')) throw err;
      if (err.retryAfterSeconds !== undefined) koa.set('Retry-After', String(err.retryAfterSeconds));
      const shown = formErrors(err);
      codePage(koa, { errors: shown?.fields ?? {}, message: err.detail }, err.kind === 'rate_limited' ? 429 : 401);
    }
  });

  router.post('sign-out', '/sign-out', async (koa) => {
    const session = stateOf(koa).session;
    if (session) await endSession(actingAs(ctx, koa, session), session.sessionId, session.user);
    setCookie(koa, names(), 'session', null);
    redirect(koa, '/dashboard/sign-in?signed-out=1');
  });

  const invitationPage = async (koa: Context, extra: Record<string, unknown> = {}, status = 200) => {
    const invitation = await findInvitation(ctx, koa.params.token!);
    ensureAnonymousCsrf(koa, names());
    render(koa, 'invitation', { title: 'Join your team', invitation, token: koa.params.token, errors: {}, message: null, passwordRule: PASSWORD_RULE, ...extra }, status);
  };

  router.get('invitation', '/invitations/:token', async (koa) => invitationPage(koa));

  router.post('invitation.accept', '/invitations/:token', async (koa) => {
    const form = formOf(koa);
    try {
      const user = await acceptInvitation(anonymous(ctx, koa), koa.params.token!, form.get('/password') ?? '');
      holdSession(koa, ctx, await startSession(ctx, user, readCookie(koa, names().session)));
      redirect(koa, '/dashboard');
    } catch (err) {
      const shown = formErrors(err);
      // A closed link (422) or a taken email (409) is the error page; a password to fix is shown beside its field.
      if (!shown || !isAppError(err) || err.code !== 'validation_failed') throw err;
      await invitationPage(koa, { errors: shown.fields, message: shown.message }, 400);
    }
  });
}
