/**
 * The one dependency context: everything a use case, a handler, background work or the admin
 * command line needs from outside itself, in one shape. Built once (src/createContext.ts) in
 * main.ts, the CLI or a test, and passed down; a request sees the same context with its own logger.
 */
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { ApiKeyPrincipal, BankTokenPrincipal } from './contract/principals.ts';
import type { AuditOrigin } from './domain/audit/chain.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Tracer } from './observability/tracing.ts';
import type { Resolver } from './net/resolve.ts';
import type { Store } from './store/store.ts';

/**
 * The credential checks the HTTP edge runs, given to it as functions so that the edge imports no
 * use case. Each throws an AppError of kind `unauthenticated` (or `upstream_failed` when a bank
 * partner cannot say).
 */
export interface Authenticators {
  /** The bearer token of `Authorization`, checked as an API key. */
  apiKey(token: string): Promise<ApiKeyPrincipal>;
  /**
   * Makes this process forget the API keys it remembers: the revoking use case calls it once the
   * revocation has committed and before it answers, so the key is refused at once.
   */
  apiKeyRevoked(): void;
  /** The bearer token (null when none was sent) checked as a bank partner's token. */
  bankToken(token: string | null): Promise<BankTokenPrincipal>;
}

/** Counts one request of a bucket in the shared one-minute window holding `now` (several instances on one database). */
export type SharedRequestCounter = (bucket: string, now: number) => Promise<{ count: number; windowEndsAt: number }>;

export interface AppContext {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
  /** DNS for the outbound address guard (webhooks, bank partners); tests map names to loopback. */
  readonly resolve: Resolver;
  readonly authenticate: Authenticators;
  /** Set when several instances share the store: rate limits count there, not in this process. */
  readonly countShared?: SharedRequestCounter;
  /** The app's Prometheus metrics (a registry of its own); null when METRICS_PORT is unset (nothing is counted). */
  readonly metrics: Metrics | null;
  /** Where spans go; null when tracing is off (no span is made). */
  readonly tracer: Tracer | null;
  /**
   * Who and where a change comes from, for the audit log (src/services/audit.ts): set by the edge
   * for each request (the API key, or the dashboard's signed-in user, with the client's address,
   * user agent and request id) and by the admin command line (the operator). Absent: the service
   * itself (background work).
   */
  readonly origin?: AuditOrigin;
}
