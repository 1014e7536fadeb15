/**
 * Builds the one dependency context from its parts: main.ts, the admin command line and tests all
 * make theirs here, so every one has the same shape and the same use cases behind the edge's checks.
 */
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { AppContext, Authenticators } from './context.ts';
import { systemResolver, type Resolver } from './net/resolve.ts';
import type { Logger } from './log.ts';
import { Metrics, type MetricSources } from './observability/metrics.ts';
import { storeObserver } from './observability/storeObserver.ts';
import type { Tracer } from './observability/tracing.ts';
import { apiKeyAuthenticator } from './services/authentication.ts';
import { bankTokenAuthenticator } from './services/bankVerification.ts';
import { outboxBacklog } from './services/events.ts';
import { sharedRequestCounter } from './services/rateLimits.ts';
import type { Store } from './store/store.ts';

export interface ContextParts {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  resolve?: Resolver;
  /** Where spans go (main.ts's started SDK, a test's in-memory exporter); absent: no traces. */
  tracer?: Tracer | null;
}

/** The app's metrics when METRICS_PORT asks for them: gauges read the store's state, pool and outbox at scrape time. */
function metricsFor(parts: ContextParts): Metrics | null {
  if (parts.config.telemetry.metricsPort === null) return null;
  const store = parts.store as ContextParts['store'] & { stats?(): { pool?: { total: number; idle: number; waiting: number }; replicas?: ReturnType<NonNullable<MetricSources['replicas']>> | null } };
  const storageState = store.storageState?.bind(store);
  const databaseBytes = store.databaseBytes?.bind(store);
  const pool = store.stats?.().pool ? () => store.stats!().pool! : undefined;
  const archive = store.archiveStatus?.() ? () => store.archiveStatus!() : undefined;
  const replicas = store.stats?.().replicas ? () => store.stats!().replicas! : undefined;
  return new Metrics({
    outboxBacklog: () => outboxBacklog(parts),
    ...(storageState ? { storageState } : {}),
    ...(databaseBytes ? { databaseBytes } : {}),
    ...(pool ? { pool } : {}),
    ...(archive ? { archive } : {}),
    ...(replicas ? { replicas } : {}),
    now: () => parts.clock.now().getTime(),
  });
}

export function createContext(parts: ContextParts): AppContext {
  const authenticate = {} as Authenticators;
  const metrics = metricsFor(parts);
  const tracer = parts.tracer ?? null;
  if (metrics !== null || tracer !== null) parts.store.observe?.(storeObserver(metrics, tracer));
  const ctx: AppContext = {
    ...parts,
    metrics,
    tracer,
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
