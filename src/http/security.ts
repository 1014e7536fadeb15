/**
 * The spec's security schemes at the edge: each reads the bearer token and asks the context's
 * authenticator (a use case the edge is handed, not one it imports). A refused credential throws
 * an AppError of kind `unauthenticated`; openapi-backend records it as a failed scheme.
 *
 * Bank tokens (`POST /v1/banks/verify`) are limited so that no request without a valid token can
 * use up a valid token's allowance:
 * - failed authentications are counted per client address (BANK_AUTH_FAILURES_PER_CLIENT_PER_MINUTE);
 *   an address that has used its allowance gets 429 `bank_token_failures_exceeded` before its
 *   token is even looked at, until its minute ends. Every check holds a place in that count while
 *   it runs and gives it back when the token proves valid, so a burst of concurrent junk cannot
 *   slip past the limit together;
 * - a partner's quota (RATE_LIMIT_PER_MINUTE) counts only requests whose token has been proven
 *   (by the sandbox, locally, or by the partner), so nobody can spend it with made-up tokens;
 * - refusals by an `http` partner are capped per partner, all clients together, inside the use
 *   case (BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE), so junk never makes the service hammer a partner.
 */
import type { Context } from 'koa';
import type { AppContext } from '../context.ts';
import { clientAddressKey } from '../domain/limits/clientAddress.ts';
import { WindowCounter } from '../domain/limits/windowCounter.ts';
import { fail, isAppError } from '../errors.ts';
import { RateLimiter } from './rateLimit.ts';

/** A security handler for one scheme: returns what the operation will see, or throws. */
export type SecurityHandler = (authorization: string | string[] | undefined, koa: Context) => Promise<unknown>;

/** The bearer token of an Authorization header, or null when there is none of that form. */
export function bearerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer +([^\s]+) *$/i.exec(value ?? '');
  return match?.[1] ?? null;
}

export function securityHandlers(ctx: AppContext): Record<string, SecurityHandler> {
  const clientFailures = new WindowCounter(ctx.config.bank.authFailuresPerClientPerMinute);
  const partnerQuota = new RateLimiter(ctx.config.rateLimitPerMinute, ctx.countShared);
  return {
    apiKey: async (authorization) => {
      if (authorization === undefined) throw fail.unauthenticated('Send an API key as Authorization: Bearer <API key>.');
      const token = bearerToken(authorization);
      if (!token) throw fail.unauthenticated('The Authorization header must be "Bearer <API key>".');
      return ctx.authenticate.apiKey(token);
    },
    bankToken: async (authorization, koa) => {
      const now = ctx.clock.now().getTime();
      const place = clientFailures.take(clientAddressKey(koa.request.ip), now);
      if (!place.allowed) {
        throw fail.rateLimited(
          'bank_token_failures_exceeded',
          `Requests from this address have failed bank token authentication ${clientFailures.limit} times in the last minute; ` +
            `retry after ${place.retryAfterSeconds} seconds.`,
          place.retryAfterSeconds,
        );
      }
      let principal: Awaited<ReturnType<AppContext['authenticate']['bankToken']>>;
      try {
        const token = authorization === undefined ? null : bearerToken(authorization);
        if (authorization !== undefined && !token) {
          throw fail.unauthenticated('The Authorization header must be "Bearer <bank token>".');
        }
        principal = await ctx.authenticate.bankToken(token);
      } catch (err) {
        // Only a refused credential counts against the address; a partner outage or a cap is not its failure.
        if (!(isAppError(err) && err.kind === 'unauthenticated')) place.release();
        throw err;
      }
      place.release();
      await partnerQuota.enforce(`partner:${principal.partner.partnerId}`, now, (headers) => koa.set(headers), "This bank partner's tokens have");
      return principal;
    },
  };
}
