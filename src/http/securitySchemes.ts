/**
 * Security handlers for the spec's schemes other than `apiKey` (which contract.ts handles), keyed
 * by scheme name. Each returns what the operation sees in `ctx.security[scheme]`, or throws an
 * AuthenticationError whose message becomes the 401's detail.
 */
import { parseBankToken } from '../banks/tokenFormat.ts';
import type { AppServices } from '../services/appServices.ts';
import { authenticateBankToken, BankTokenRefused } from '../services/bankVerification.ts';
import type { SecurityHandler } from './contract.ts';
import { RateLimiter } from './rateLimit.ts';
import { AuthenticationError, bearerToken } from './security.ts';

export function securityHandlers(services: AppServices): Record<string, SecurityHandler> {
  // Bank tokens are checked with the partner (introspection) before anything else, so requests are
  // limited per partner before that call: junk tokens must not make the service hammer a partner.
  const partnerLimiter = new RateLimiter(services.config.rateLimitPerMinute, services.store);
  return {
    // bank token scheme (issue: bank verification)
    bankToken: async (authorization, koa) => {
      const token = authorization === undefined ? null : bearerToken(authorization);
      if (authorization !== undefined && !token) {
        throw new AuthenticationError('The Authorization header must be "Bearer <bank token>".');
      }
      const parsed = token === null ? null : parseBankToken(token);
      if (parsed) {
        await partnerLimiter.enforce(`partner:${parsed.partnerId}`, services.clock.now().getTime(), (headers) => koa.set(headers), "This bank partner's tokens have");
      }
      try {
        return await authenticateBankToken(services, token);
      } catch (err) {
        if (err instanceof BankTokenRefused) throw new AuthenticationError(err.message);
        throw err;
      }
    },
  };
}
