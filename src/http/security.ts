/**
 * The spec's security schemes at the edge: each reads the bearer token and asks the context's
 * authenticator (a use case the edge is handed, not one it imports). A refused credential throws
 * an AppError of kind `unauthenticated`; openapi-backend records it as a failed scheme.
 */
import type { Context } from 'koa';
import { parseBankToken } from '../banks/tokenFormat.ts';
import type { AppContext } from '../context.ts';
import { fail } from '../errors.ts';
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
  // Bank tokens are checked with the partner (introspection) before anything else, so requests are
  // limited per partner before that call: junk tokens must not make the service hammer a partner.
  const partnerLimiter = new RateLimiter(ctx.config.rateLimitPerMinute);
  return {
    apiKey: async (authorization) => {
      if (authorization === undefined) throw fail.unauthenticated('Send an API key as Authorization: Bearer <API key>.');
      const token = bearerToken(authorization);
      if (!token) throw fail.unauthenticated('The Authorization header must be "Bearer <API key>".');
      return ctx.authenticate.apiKey(token);
    },
    bankToken: async (authorization, koa) => {
      const token = authorization === undefined ? null : bearerToken(authorization);
      if (authorization !== undefined && !token) {
        throw fail.unauthenticated('The Authorization header must be "Bearer <bank token>".');
      }
      const parsed = token === null ? null : parseBankToken(token);
      if (parsed) {
        partnerLimiter.enforce(`partner:${parsed.partnerId}`, ctx.clock.now().getTime(), (headers) => koa.set(headers), "This bank partner's tokens have");
      }
      return ctx.authenticate.bankToken(token);
    },
  };
}
