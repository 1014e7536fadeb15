/**
 * What a session may reach while its second factor is outstanding, and the step-up of sensitive
 * forms, checked by the dashboard's pipeline (index.ts) before any page runs:
 *
 * - a session still waiting for the code after the password reaches the code page and sign-out
 *   (and sign-in, to start over); every other page sends it to the code page;
 * - a user whose account requires a second factor they do not have reaches the Security page (to
 *   enrol) and sign-out; every other page sends them there;
 * - a sensitive form (SENSITIVE_FORMS) sent by a user with a second factor last checked longer ago
 *   than STEP_UP_FRESH_MS is answered with a page asking for a code, holding the form's fields: sent
 *   with a right code, it goes to the same action, which then runs as if sent the first time. The
 *   re-sent form carries the session's CSRF token like any other and is checked again. Users without
 *   a second factor are not asked (there is nothing to ask for; an account that requires one leaves
 *   none of its users without).
 */
import type { Context } from 'koa';
import type { AppContext } from '../context.ts';
import { isAppError } from '../errors.ts';
import { checkSecondFactor, needsEnrolment, needsStepUp } from '../services/mfa.ts';
import type { SignInLimits } from '../services/sessions.ts';
import { actingAs, redirect, stateOf } from './page.ts';
import { render } from './render.ts';

/** The page that asks for the code after the password. */
export const SECOND_FACTOR_PAGE = '/dashboard/sign-in/code';
/** The page where a user sets up (enrols) a second factor. */
const SECURITY_PAGE = '/dashboard/security';

/**
 * Forms that ask for a fresh code: create or revoke an API key, rotate a webhook secret, change a
 * role, reset a user's second factor, change the account's requirement. (Deleting test data joins
 * this list when the dashboard offers it.)
 */
const SENSITIVE_FORMS = [
  /^\/dashboard\/api-keys$/,
  /^\/dashboard\/api-keys\/[^/]+\/revoke$/,
  /^\/dashboard\/webhooks\/[^/]+\/rotate-secret$/,
  /^\/dashboard\/team\/users\/[^/]+\/role$/,
  /^\/dashboard\/team\/users\/[^/]+\/mfa-reset$/,
  /^\/dashboard\/team\/mfa-requirement$/,
];

/** The field of the step-up page that carries the code (not a JSON pointer: no page's body decoder reads it). */
const STEP_UP_FIELD = '_code';

const SIGN_OUT = '/dashboard/sign-out';
const SIGN_IN = '/dashboard/sign-in';

/** The paths a restricted session may reach, by restriction. */
const OPEN_WHILE_WAITING_FOR_CODE = new Set([SECOND_FACTOR_PAGE, SIGN_OUT, SIGN_IN]);
const OPEN_WHILE_ENROLMENT_REQUIRED = new Set([SECURITY_PAGE, `${SECURITY_PAGE}/enrol`, `${SECURITY_PAGE}/enrol/confirm`, SIGN_OUT, SIGN_IN]);

/**
 * Sends a restricted session where it must go; true when it answered (a redirect), false when the
 * request may go on to its page. A POST refused here has changed nothing.
 */
export function gateRestrictedSession(koa: Context): boolean {
  const session = stateOf(koa).session;
  if (!session) return false;
  if (session.stage === 'second_factor') {
    if (OPEN_WHILE_WAITING_FOR_CODE.has(koa.path)) return false;
    redirect(koa, SECOND_FACTOR_PAGE);
    return true;
  }
  if (needsEnrolment(session)) {
    if (OPEN_WHILE_ENROLMENT_REQUIRED.has(koa.path)) return false;
    redirect(koa, SECURITY_PAGE);
    return true;
  }
  return false;
}

/**
 * For a POST of a sensitive form: true when it answered with the step-up page (nothing changed),
 * false when the action may run (no factor to ask for, checked recently, or the right code sent now).
 */
export async function stepUpIfNeeded(koa: Context, ctx: AppContext, limits: SignInLimits): Promise<boolean> {
  const state = stateOf(koa);
  const session = state.session;
  if (koa.method !== 'POST' || !session || !SENSITIVE_FORMS.some((pattern) => pattern.test(koa.path))) return false;
  if (!needsStepUp(session, ctx.clock.now())) return false;
  const form = state.form ?? new URLSearchParams();
  const typed = form.get(STEP_UP_FIELD);
  let message: string | null = null;
  let status = 401;
  if (typed !== null) {
    try {
      await checkSecondFactor(actingAs(ctx, koa, session), limits, session, typed, koa.request.ip);
      state.session = { ...session, secondFactorAt: ctx.clock.now().toISOString() };
      return false;
    } catch (err) {
      if (!isAppError(err) || (err.kind !== 'invalid' && err.kind !== 'rate_limited')) throw err;
      message = err.detail;
      if (err.kind === 'rate_limited') {
        status = 429;
        if (err.retryAfterSeconds !== undefined) koa.set('Retry-After', String(err.retryAfterSeconds));
      }
    }
  }
  // The form's own fields go back with the code; the token and the code are the page's.
  const fields = [...form].filter(([name]) => name !== '_csrf' && name !== STEP_UP_FIELD);
  render(koa, 'step-up', { title: 'Confirm it is you', action: koa.path, fields, codeField: STEP_UP_FIELD, message }, status);
  return true;
}
