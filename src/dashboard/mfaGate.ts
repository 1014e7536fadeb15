/**
 * What a session may reach while its second factor is outstanding, and the step-up of sensitive
 * forms, checked by the dashboard's pipeline (index.ts) before any page runs:
 *
 * - a session still waiting for the code after the password reaches the routes open to it
 *   (routeAccess.ts: the code page, sign-out, and sign-in to start over); every other page sends it
 *   to the code page;
 * - a user whose account requires a second factor they do not have reaches the routes open to that
 *   (the Security page to enrol, sign-out); every other page sends them there;
 * - a form that asks for a fresh code (routeAccess.ts), sent by a user with a second factor last
 *   checked longer ago than STEP_UP_FRESH_MS, is answered with a page asking for a code, holding the
 *   form's fields: sent with a right code, it goes to the same action, which then runs as if sent the
 *   first time (in a renewed session: a new id and CSRF token). The re-sent form carries the
 *   session's CSRF token like any other and is checked again. Users without a second factor are not
 *   asked (there is nothing to ask for; an account that requires one leaves none of its users without).
 *
 * Both decide on the route the router matched (its entry in routeAccess.ts), never on the path's spelling.
 */
import type { Context } from 'koa';
import type { AppContext } from '../context.ts';
import { isAppError } from '../errors.ts';
import { checkSecondFactor, needsEnrolment, needsStepUp } from '../services/mfa.ts';
import type { SignInLimits } from '../services/sessions.ts';
import { actingAs, holdSession, redirect, stateOf } from './page.ts';
import { render } from './render.ts';
import type { RouteAccess } from './routeAccess.ts';

/** The page that asks for the code after the password. */
export const SECOND_FACTOR_PAGE = '/dashboard/sign-in/code';
/** The page where a user sets up (enrols) a second factor. */
const SECURITY_PAGE = '/dashboard/security';

/** The field of the step-up page that carries the code (not a JSON pointer: no page's body decoder reads it). */
const STEP_UP_FIELD = '_code';

/**
 * Sends a restricted session where it must go; true when it answered (a redirect), false when the
 * request may go on to its page. A POST refused here has changed nothing.
 */
export function gateRestrictedSession(koa: Context, access: RouteAccess): boolean {
  const session = stateOf(koa).session;
  if (!session) return false;
  if (session.stage === 'second_factor') {
    if (access.openTo?.includes('awaiting-code')) return false;
    redirect(koa, SECOND_FACTOR_PAGE);
    return true;
  }
  if (needsEnrolment(session)) {
    if (access.openTo?.includes('awaiting-enrolment')) return false;
    redirect(koa, SECURITY_PAGE);
    return true;
  }
  return false;
}

/**
 * For a POST of a sensitive form: true when it answered with the step-up page (nothing changed),
 * false when the action may run (no factor to ask for, checked recently, or the right code sent now).
 */
export async function stepUpIfNeeded(koa: Context, ctx: AppContext, limits: SignInLimits, access: RouteAccess): Promise<boolean> {
  const state = stateOf(koa);
  const session = state.session;
  if (koa.method !== 'POST' || !session || access.stepUp?.ask !== 'fresh-code') return false;
  if (!needsStepUp(session, ctx.clock.now())) return false;
  const form = state.form ?? new URLSearchParams();
  const typed = form.get(STEP_UP_FIELD);
  let message: string | null = null;
  let status = 401;
  if (typed !== null) {
    try {
      const { session: renewed } = await checkSecondFactor(actingAs(ctx, koa, session), limits, session, typed, koa.request.ip);
      holdSession(koa, ctx, renewed);
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
