/**
 * The dashboard's request checks (src/dashboard/security.ts) on their own, over stand-in requests:
 * the origin check (Origin, else Referer; this host under this scheme, or the public URL), the
 * CSRF token comparison, cookies read and written. test/dashboard/security.test.ts holds them over HTTP.
 */
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { checkCsrfToken, checkSameOrigin, cookieHeader, cookieNames, readCookie, sameToken, setCookie, setSecurityHeaders } from '../../../src/dashboard/security.ts';

/** A request as the checks read it: its headers, and the host and scheme it came in on. */
function request(headers: Record<string, string>, host = '127.0.0.1:3000', protocol = 'http'): Context {
  const set: Record<string, string[]> = {};
  return {
    get: (name: string) => headers[name] ?? '',
    host,
    protocol,
    set: (name: string, value: string) => void (set[name] = [value]),
    append: (name: string, value: string) => void (set[name] = [...(set[name] ?? []), value]),
    sent: set,
  } as unknown as Context;
}

const PUBLIC = 'https://dashboard.example.test';
const allowed = (headers: Record<string, string>, host?: string, protocol?: string) => {
  try {
    checkSameOrigin(request(headers, host, protocol), PUBLIC);
    return true;
  } catch (err) {
    expect(err).toMatchObject({ kind: 'forbidden' });
    expect((err as Error).message).toContain('its Origin does not match');
    return false;
  }
};

describe('checkSameOrigin', () => {
  it("takes an Origin of this host under this scheme, or the public URL's origin", () => {
    expect(allowed({ Origin: 'http://127.0.0.1:3000' })).toBe(true);
    expect(allowed({ Origin: 'https://127.0.0.1:3000' }, '127.0.0.1:3000', 'https')).toBe(true);
    expect(allowed({ Origin: PUBLIC })).toBe(true); // behind a proxy: the request's host is not the public one
    expect(allowed({ Origin: `${PUBLIC}:443` })).toBe(true);
  });

  it('refuses another host, port or scheme, the public host under http, "null", junk and no header at all', () => {
    for (const origin of ['http://evil.test', 'http://127.0.0.1:3001', 'https://127.0.0.1:3000', 'http://dashboard.example.test', 'null', 'not a url', 'http://[']) {
      expect(allowed({ Origin: origin }), origin).toBe(false);
    }
    expect(allowed({})).toBe(false);
  });

  it('without an Origin, reads the Referer the same way; with one, the Origin decides', () => {
    expect(allowed({ Referer: 'http://127.0.0.1:3000/dashboard/api-keys?x=1' })).toBe(true);
    expect(allowed({ Referer: `${PUBLIC}/dashboard` })).toBe(true);
    expect(allowed({ Referer: 'https://127.0.0.1:3000/dashboard' })).toBe(false);
    expect(allowed({ Referer: 'http://evil.test/dashboard' })).toBe(false);
    expect(allowed({ Origin: 'http://evil.test', Referer: 'http://127.0.0.1:3000/dashboard' })).toBe(false);
    expect(allowed({ Origin: 'http://127.0.0.1:3000', Referer: 'http://evil.test/' })).toBe(true);
  });
});

describe('CSRF tokens', () => {
  it('sameToken: equal non-empty strings only', () => {
    expect(sameToken('a'.repeat(43), 'a'.repeat(43))).toBe(true);
    expect(sameToken('a'.repeat(43), `${'a'.repeat(42)}b`)).toBe(false);
    expect(sameToken('a'.repeat(43), 'a'.repeat(42))).toBe(false);
    for (const [a, b] of [['', ''], [undefined, undefined], [null, null], ['x', undefined], [undefined, 'x'], ['', 'x']] as const) {
      expect(sameToken(a, b), `${a} ${b}`).toBe(false);
    }
  });

  it('checkCsrfToken refuses (403) a missing or different token, and takes the expected one', () => {
    expect(() => checkCsrfToken('t0k3n', 't0k3n')).not.toThrow();
    for (const sent of [null, '', 't0k3m']) {
      expect(() => checkCsrfToken(sent, 't0k3n'), String(sent)).toThrow(/its CSRF token does not match/);
    }
    expect(() => checkCsrfToken('t0k3n', undefined)).toThrow(expect.objectContaining({ kind: 'forbidden' }));
  });
});

describe('cookies', () => {
  it('reads the first cookie of a name, whatever the spaces, and nothing of a name that is only a prefix or a value', () => {
    const cookies = request({ Cookie: 'other=1;mos_session= abc ; mos_session=second; =odd; mos_csrf=x=y' });
    expect(readCookie(cookies, 'mos_session')).toBe('abc');
    expect(readCookie(cookies, 'mos_csrf')).toBe('x=y');
    expect(readCookie(cookies, 'other')).toBe('1');
    expect(readCookie(cookies, 'mos')).toBeUndefined();
    expect(readCookie(cookies, 'abc')).toBeUndefined();
    expect(readCookie(request({}), 'mos_session')).toBeUndefined();
  });

  it('names and flags: __Host- and Secure for an https public URL only; a deleted cookie gets Max-Age=0', () => {
    expect(cookieNames('https://x.test')).toEqual({ session: '__Host-mos_session', csrf: '__Host-mos_csrf', secure: true });
    expect(cookieNames('http://x.test')).toEqual({ session: 'mos_session', csrf: 'mos_csrf', secure: false });
    expect(cookieHeader('a', 'v', false)).toBe('a=v; Path=/; HttpOnly; SameSite=Lax');
    expect(cookieHeader('a', 'v', true)).toBe('a=v; Path=/; HttpOnly; SameSite=Lax; Secure');
    expect(cookieHeader('a', null, true)).toBe('a=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0');
    const response = request({});
    setCookie(response, cookieNames('https://x.test'), 'csrf', 'token');
    setCookie(response, cookieNames('https://x.test'), 'session', null);
    expect((response as unknown as { sent: Record<string, string[]> }).sent['Set-Cookie']).toEqual([
      '__Host-mos_csrf=token; Path=/; HttpOnly; SameSite=Lax; Secure',
      '__Host-mos_session=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0',
    ]);
  });
});

describe('setSecurityHeaders', () => {
  it('sets the CSP and the other protections on every page', () => {
    const response = request({});
    setSecurityHeaders(response);
    expect((response as unknown as { sent: Record<string, string[]> }).sent).toEqual({
      'Content-Security-Policy': [
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      ],
      'X-Frame-Options': ['DENY'],
      'Referrer-Policy': ['same-origin'],
      'X-Content-Type-Options': ['nosniff'],
      'Cross-Origin-Opener-Policy': ['same-origin'],
      'Permissions-Policy': ['camera=(), microphone=(), geolocation=(), payment=()'],
    });
  });
});
