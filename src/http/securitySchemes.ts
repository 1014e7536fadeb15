/**
 * Security handlers for the spec's schemes other than `apiKey` (which contract.ts handles), keyed
 * by scheme name. Each returns what the operation sees in `ctx.security[scheme]`, or throws an
 * AuthenticationError whose message becomes the 401's detail.
 */
import type { AppServices } from '../services/appServices.ts';
import type { SecurityHandler } from './contract.ts';

export function securityHandlers(_services: AppServices): Record<string, SecurityHandler> {
  return {
    // bank token scheme (issue: bank verification)
  };
}
