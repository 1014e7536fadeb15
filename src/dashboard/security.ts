/**
 * The dashboard's browser security, after OWASP's cheat sheets (Session Management, CSRF
 * Prevention, HTTP Headers, Content Security Policy):
 *
 * - cookies: `HttpOnly`, `SameSite=Lax`, `Path=/`; with an https public URL also `Secure` and the
 *   `__Host-` prefix (the browser then refuses the cookie from a subdomain or over plain http);
 *   no `Max-Age`, so a session cookie ends with the browser (the store ends the session itself);
 * - every POST must come from this origin (`Origin`, else `Referer`; neither is refused) and carry
 *   the form's CSRF token: the session's synchronizer token when signed in; before sign-in, the
 *   token of a pre-session cookie (double submit) that sign-in, sign-up and invitation forms carry;
 * - headers: a strict Content-Security-Policy (scripts and styles from this origin only, no inline
 *   script or style, no framing, forms post only here), `X-Frame-Options: DENY` for older
 *   browsers, `Referrer-Policy: same-origin`, `nosniff`, and `Cache-Control: no-store` on pages.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { fail } from '../errors.ts';

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Pico draws its icons (select arrows, checkboxes) as data: SVG images in its stylesheet.
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function setSecurityHeaders(koa: Context): void {
  koa.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  koa.set('X-Frame-Options', 'DENY');
  koa.set('Referrer-Policy', 'same-origin');
  koa.set('X-Content-Type-Options', 'nosniff');
  koa.set('Cross-Origin-Opener-Policy', 'same-origin');
  koa.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
}

export interface CookieNames {
  session: string;
  /** The pre-session CSRF cookie of the forms shown before sign-in. */
  csrf: string;
  secure: boolean;
}

/** The cookies' names and flags for a service published at `publicBaseUrl`. */
export function cookieNames(publicBaseUrl: string): CookieNames {
  const secure = publicBaseUrl.startsWith('https:');
  return secure ? { session: '__Host-mos_session', csrf: '__Host-mos_csrf', secure } : { session: 'mos_session', csrf: 'mos_csrf', secure };
}

/** A `Set-Cookie` value; `value: null` deletes the cookie. */
export function cookieHeader(name: string, value: string | null, secure: boolean): string {
  const parts = [`${name}=${value ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (secure) parts.push('Secure');
  if (value === null) parts.push('Max-Age=0');
  return parts.join('; ');
}

export function setCookie(koa: Context, names: CookieNames, which: 'session' | 'csrf', value: string | null): void {
  koa.append('Set-Cookie', cookieHeader(names[which], value, names.secure));
}

/** A cookie's value as the request sent it (the first of that name), or undefined. */
export function readCookie(koa: Context, name: string): string | undefined {
  for (const part of (koa.get('Cookie') || '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Equal strings, compared in constant time for a given length. */
export function sameToken(a: string | undefined | null, b: string | undefined | null): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Refuses (403) a POST that does not come from a page of this service: its `Origin` (or, when a
 * browser sends none, its `Referer`) must name this host, or the public URL's origin.
 */
export function checkSameOrigin(koa: Context, publicBaseUrl: string): void {
  const source = koa.get('Origin') || koa.get('Referer');
  let origin: URL | null = null;
  try {
    origin = source && source !== 'null' ? new URL(source) : null;
  } catch {
    origin = null;
  }
  const published = new URL(publicBaseUrl);
  const ok = origin !== null && (origin.origin === published.origin || (origin.host === koa.host && origin.protocol === `${koa.protocol}:`));
  if (!ok) throw fail.forbidden('This form was not sent from a page of this dashboard (its Origin does not match); open the page again and send it from there.');
}

/** Refuses (403) a form whose CSRF token is missing or not the one expected. */
export function checkCsrfToken(sent: string | null, expected: string | undefined): void {
  if (!sameToken(sent, expected)) throw fail.forbidden('This form has expired or did not come from this dashboard (its CSRF token does not match); open the page again and send it from there.');
}
