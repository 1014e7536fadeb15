/**
 * Security handlers for the spec's schemes other than `apiKey` (which contract.ts handles), keyed
 * by scheme name. Each returns what the operation sees in `ctx.security[scheme]`, or throws an
 * AuthenticationError whose message becomes the 401's detail.
 */
import type { AppServices } from '../services/appServices.ts';
import { authenticateBankToken, BankTokenRefused } from '../services/bankVerification.ts';
import type { SecurityHandler } from './contract.ts';
import { AuthenticationError, bearerToken } from './security.ts';

export function securityHandlers(services: AppServices): Record<string, SecurityHandler> {
  return {
    // bank token scheme (issue: bank verification)
    bankToken: async (authorization) => {
      if (authorization !== undefined && !bearerToken(authorization)) {
        throw new AuthenticationError('The Authorization header must be "Bearer <bank token>".');
      }
      try {
        return await authenticateBankToken(services, authorization === undefined ? null : bearerToken(authorization));
      } catch (err) {
        if (err instanceof BankTokenRefused) throw new AuthenticationError(err.message);
        throw err;
      }
    },
  };
}
