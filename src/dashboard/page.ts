/** What every page handler uses: the session it needs, the form it was sent, redirects and errors. */
import type { Context } from 'koa';
import { AppError, fail, isAppError } from '../errors.ts';
import { statusOfKind } from '../http/problem.ts';
import type { ActiveSession } from '../services/sessions.ts';
import { accountEnvironment } from '../services/accounts.ts';
import { userOrigin, withOrigin } from '../services/audit.ts';
import type { AppContext } from '../context.ts';
import type { OperationId } from '../contract/handlers.ts';
import { fieldErrors, type FieldErrors } from './forms.ts';
import { cookieNames, newCsrfToken, setCookie, type CookieNames } from './security.ts';
import type { DashboardState } from './state.ts';
import { needsAdmin } from './validation.ts';

/** Thrown by a page that needs a signed-in user when there is none: the answer is a redirect to sign-in. */
export class SignInRequired extends Error {}

export function stateOf(koa: Context): DashboardState {
  return koa.state.dashboard as DashboardState;
}

/** The context a page reads its table through: one that may read from a replica where the route allows it (routeAccess.ts). */
export function readingContext(ctx: AppContext, koa: Context): AppContext {
  return stateOf(koa).reads ?? ctx;
}

/** The signed-in user's session; a visitor is sent to the sign-in page. */
export function requireSession(koa: Context): ActiveSession {
  const session = stateOf(koa).session;
  if (!session) throw new SignInRequired();
  return session;
}

/**
 * The session of a user who may do what these operations do: one the contract keeps for admins
 * (`x-required-role: admin`) is for admin users here, as it is for admin keys in the API; a member
 * gets 403 (integrations are read-only for them). The rule is the spec's, not written again here.
 */
export function requireRoleFor(koa: Context, ...operationIds: OperationId[]): ActiveSession {
  const session = requireSession(koa);
  if (session.user.role !== 'admin' && operationIds.some(needsAdmin)) {
    throw fail.forbidden(`This page is for admins of the account; your role is ${session.user.role}, so integrations are read-only for you.`);
  }
  return session;
}

/** Where a dashboard request comes from (the audit log's client address, user agent and request id). */
function requestPlace(koa: Context): { clientAddress: string | null; userAgent: string | null; requestId: string | null } {
  const userAgent = koa.get('user-agent');
  return { clientAddress: koa.request.ip || null, userAgent: userAgent ? userAgent.slice(0, 1000) : null, requestId: (koa.state.requestId as string | undefined) ?? null };
}

/**
 * The context a page passes to the use cases that change things: the app's, as the signed-in user
 * acting from this browser (the audit log records them as the actor).
 */
export function actingAs(ctx: AppContext, koa: Context, session: ActiveSession): AppContext {
  return withOrigin(ctx, userOrigin(session.user, requestPlace(koa)));
}

/** The context of a page before sign-in: the service as actor until a use case names the user. */
export function anonymous(ctx: AppContext, koa: Context): AppContext {
  return withOrigin(ctx, { actor: { type: 'system', id: null, name: null }, ...requestPlace(koa) });
}

/** The account id the page works on: the environment the user switched to. Every page reaches its data through this one function. */
export function accountOf(session: ActiveSession): string {
  return accountEnvironment(session.user.accountId, session.environment);
}

/** The form the POST sent (read and CSRF-checked by the middleware). */
export function formOf(koa: Context): URLSearchParams {
  return stateOf(koa).form ?? new URLSearchParams();
}

/** A 303 to a page of the dashboard (Post/Redirect/Get). */
export function redirect(koa: Context, path: string): void {
  koa.status = 303;
  koa.redirect(path);
}

/**
 * Holds the browser to `session`: its cookie, and the CSRF token the page's forms carry. A session
 * gets a new id and token at every change of privilege (sign-in, the code after the password, a
 * step-up), so the id and token the browser had before open nothing.
 */
export function holdSession(koa: Context, ctx: AppContext, session: ActiveSession): void {
  setCookie(koa, cookieNames(ctx.config.publicBaseUrl), 'session', session.sessionId);
  stateOf(koa).session = session;
}

/** Makes sure a visitor's browser holds the pre-session CSRF cookie the forms before sign-in carry. */
export function ensureAnonymousCsrf(koa: Context, names: CookieNames): string {
  const state = stateOf(koa);
  if (!state.anonymousCsrf) {
    state.anonymousCsrf = newCsrfToken();
    setCookie(koa, names, 'csrf', state.anonymousCsrf);
  }
  return state.anonymousCsrf;
}

/**
 * The messages of an error a form shows beside its fields (400 validation, 409 and 422 refusals,
 * with their pointers), or null for any other error (404, 403…), which gets the error page.
 */
export function formErrors(err: unknown, fieldOf?: (pointer: string) => string): { message: string; fields: FieldErrors } | null {
  if (!isAppError(err)) return null;
  if (err.kind !== 'invalid' && err.kind !== 'refused' && err.kind !== 'conflict') return null;
  return { message: err.detail, fields: fieldErrors(err.facts.errors, fieldOf) };
}

/** The status of an error's page: the API's own for its kind. */
export function statusOf(err: AppError): number {
  return statusOfKind(err.kind);
}

/** Flattens a value into field names (JSON pointers) and the text each field shows. */
export function fieldValues(value: unknown, prefix = ''): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (Array.isArray(value)) value.forEach((item, i) => Object.assign(out, fieldValues(item, `${prefix}/${i}`)));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) Object.assign(out, fieldValues(item, `${prefix}/${key}`));
  } else if (value !== null && value !== undefined) out[prefix] = String(value);
  return out;
}

/** The submitted form's fields as the values to show again beside their messages. */
export function submittedValues(form: URLSearchParams): Record<string, string> {
  // Keyed by the client's field names: no prototype for one of them to reach.
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of form) if (name.startsWith('/') && !name.endsWith('/password')) out[name] = value;
  return out;
}

