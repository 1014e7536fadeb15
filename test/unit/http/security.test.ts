/**
 * The edge's security handlers (src/http/security.ts) on their own, over a stand-in context: the
 * bearer token read from Authorization, API keys handed to the authenticator, and bank tokens'
 * limits: failed authentications per client address (only refused credentials count), and the
 * partner's quota counted for proven tokens only. test/api/banks/rateLimit.test.ts holds them over HTTP.
 */
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { fail } from '../../../src/errors.ts';
import { bearerToken, securityHandlers } from '../../../src/http/security.ts';

describe('bearerToken', () => {
  it('reads "Bearer <token>" in any case, with extra spaces between and after; the first of several headers', () => {
    expect(bearerToken('Bearer abc.def')).toBe('abc.def');
    expect(bearerToken('bearer   abc')).toBe('abc');
    expect(bearerToken('BEARER abc  ')).toBe('abc');
    expect(bearerToken(['Bearer first', 'Bearer second'])).toBe('first');
  });

  it('is null for anything else', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', ' Bearer abc', 'Bearerabc', 'Bearer\tabc', 'xBearer abc']) {
      expect(bearerToken(header), String(header)).toBeNull();
    }
    expect(bearerToken([])).toBeNull();
  });
});

/** A stand-in context: authenticators that accept the tokens `good…` and refuse the rest. */
function setUp(options: { clientFailures?: number; partnerQuota?: number; bankToken?: (token: string | null) => Promise<unknown> } = {}) {
  let now = Date.parse('2026-11-21T18:00:00.000Z');
  const seen: Array<string | null> = [];
  const ctx = {
    clock: { now: () => new Date(now) },
    config: { bank: { authFailuresPerClientPerMinute: options.clientFailures ?? 2 }, rateLimitPerMinute: options.partnerQuota ?? 0 },
    authenticate: {
      apiKey: async (token: string) => {
        seen.push(token);
        if (!token.startsWith('good')) throw fail.unauthenticated('The API key is not valid.');
        return { kind: 'apiKey', token };
      },
      bankToken:
        options.bankToken ??
        (async (token: string | null) => {
          seen.push(token);
          if (token === null) throw fail.unauthenticated('Send a bank token.');
          if (!token.startsWith('good')) throw fail.unauthenticated('The bank token is not valid.');
          return { kind: 'bankToken', partner: { partnerId: token.split('-')[1] ?? 'p' } };
        }),
    },
  } as unknown as AppContext;
  const headers: Array<Record<string, string>> = [];
  const request = (ip = '192.0.2.1') => ({ request: { ip }, set: (h: Record<string, string>) => void headers.push(h) }) as unknown as Context;
  return { handlers: securityHandlers(ctx), seen, headers, request, advance: (ms: number) => (now += ms) };
}

describe('securityHandlers: apiKey', () => {
  it('hands the bearer token to the authenticator; no header, or no bearer token, is 401 with what to send', async () => {
    const { handlers, seen, request } = setUp();
    expect(await handlers.apiKey!('Bearer good-key', request())).toEqual({ kind: 'apiKey', token: 'good-key' });
    await expect(handlers.apiKey!('Bearer bad-key', request())).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'The API key is not valid.' });
    await expect(handlers.apiKey!(undefined, request())).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'Send an API key as Authorization: Bearer <API key>.' });
    await expect(handlers.apiKey!('Basic abc', request())).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'The Authorization header must be "Bearer <API key>".' });
    expect(seen).toEqual(['good-key', 'bad-key']);
  });
});

describe('securityHandlers: bankToken', () => {
  it('counts refused tokens per client address: past the limit 429 before the token is looked at, until the minute ends', async () => {
    const { handlers, seen, request, advance } = setUp({ clientFailures: 2 });
    for (const token of ['bad-1', 'bad-2']) await expect(handlers.bankToken!(`Bearer ${token}`, request())).rejects.toMatchObject({ kind: 'unauthenticated' });
    const limited = handlers.bankToken!('Bearer good-p1', request());
    await expect(limited).rejects.toMatchObject({ kind: 'rate_limited', code: 'bank_token_failures_exceeded', retryAfterSeconds: 60 });
    await expect(limited).rejects.toThrow('Requests from this address have failed bank token authentication 2 times in the last minute; retry after 60 seconds.');
    expect(seen).toEqual(['bad-1', 'bad-2']); // the third was not looked at
    // Another address is not limited; the same /64 of IPv6 is one address.
    expect(await handlers.bankToken!('Bearer good-p1', request('192.0.2.2'))).toMatchObject({ kind: 'bankToken' });
    await expect(handlers.bankToken!('Bearer bad-3', request('2001:db8::1'))).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(handlers.bankToken!('Bearer bad-4', request('2001:db8::2'))).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(handlers.bankToken!('Bearer good-p1', request('2001:db8::3'))).rejects.toMatchObject({ code: 'bank_token_failures_exceeded' });
    advance(30_000);
    await expect(handlers.bankToken!('Bearer good-p1', request())).rejects.toMatchObject({ retryAfterSeconds: 30 });
    advance(30_000);
    expect(await handlers.bankToken!('Bearer good-p1', request())).toMatchObject({ kind: 'bankToken' });
  });

  it('a token that proves valid, a missing or malformed header counts as the token it is; a partner outage does not count', async () => {
    const outage = { on: false };
    const { handlers, request } = setUp({
      clientFailures: 2,
      bankToken: async (token) => {
        if (token === null) throw fail.unauthenticated('Send a bank token.');
        if (outage.on) throw fail.upstreamFailed('bank_partner_unavailable', 'The partner is down.', 30);
        if (!token.startsWith('good')) throw fail.unauthenticated('The bank token is not valid.');
        return { kind: 'bankToken', partner: { partnerId: 'p1' } };
      },
    });
    for (let i = 0; i < 5; i++) expect(await handlers.bankToken!('Bearer good-p1', request())).toMatchObject({ kind: 'bankToken' });
    outage.on = true;
    for (let i = 0; i < 5; i++) await expect(handlers.bankToken!('Bearer good-p1', request())).rejects.toMatchObject({ code: 'bank_partner_unavailable' });
    outage.on = false;
    // The address still has its two failures: a header with no bearer token, and no header at all.
    await expect(handlers.bankToken!('Basic abc', request())).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'The Authorization header must be "Bearer <bank token>".' });
    await expect(handlers.bankToken!(undefined, request())).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'Send a bank token.' }); // the authenticator's own answer
    await expect(handlers.bankToken!('Bearer good-p1', request())).rejects.toMatchObject({ code: 'bank_token_failures_exceeded' });
  });

  it("counts the partner's quota for proven tokens only, with the RateLimit headers, per partner", async () => {
    const { handlers, headers, request } = setUp({ clientFailures: 10, partnerQuota: 2 });
    await expect(handlers.bankToken!('Bearer bad-1', request())).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(headers).toEqual([]);
    await handlers.bankToken!('Bearer good-p1', request());
    await handlers.bankToken!('Bearer good-p1', request('192.0.2.9'));
    expect(headers).toEqual([
      { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=1;t=60' },
      { 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=0;t=60' },
    ]);
    const over = handlers.bankToken!('Bearer good-p1', request());
    await expect(over).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    await expect(over).rejects.toThrow("This bank partner's tokens have used 2 requests this minute; retry after 60 seconds.");
    expect(await handlers.bankToken!('Bearer good-p2', request())).toMatchObject({ partner: { partnerId: 'p2' } });
  });
});
