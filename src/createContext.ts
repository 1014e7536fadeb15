/**
 * Builds the one dependency context from its parts: main.ts, the admin command line and tests all
 * make theirs here, so every one has the same shape and the same use cases behind the edge's checks.
 */
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { AppContext, Authenticators } from './context.ts';
import { systemResolver, type Resolver } from './net/resolve.ts';
import type { Logger } from './log.ts';
import { apiKeyAuthenticator } from './services/authentication.ts';
import { bankTokenAuthenticator } from './services/bankVerification.ts';
import { sharedRequestCounter } from './services/rateLimits.ts';
import type { Store } from './store/store.ts';

export interface ContextParts {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  resolve?: Resolver;
}

export function createContext(parts: ContextParts): AppContext {
  const authenticate = {} as Authenticators;
  const ctx: AppContext = {
    ...parts,
    resolve: parts.resolve ?? systemResolver,
    authenticate,
    ...(parts.store.sharedByInstances ? { countShared: sharedRequestCounter(parts) } : {}),
  };
  const apiKeys = apiKeyAuthenticator(ctx);
  authenticate.apiKey = apiKeys.authenticate;
  authenticate.apiKeyRevoked = apiKeys.forget;
  authenticate.bankToken = bankTokenAuthenticator(ctx);
  return ctx;
}
