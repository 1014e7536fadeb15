/**
 * Per-API-key rate limiting: a fixed one-minute window per key, in memory (a single instance owns
 * its keys; with several instances the counters move to the shared store). Headers follow the
 * IETF RateLimit header draft: `RateLimit-Policy: "default";q=1200;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds to reset>`.
 */
import { WindowCounter } from '../domain/limits/windowCounter.ts';
import { problems } from './problem.ts';

export interface RateLimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

export class RateLimiter {
  readonly #limit: number;
  readonly #counter: WindowCounter;

  constructor(limitPerMinute: number) {
    this.#limit = limitPerMinute;
    this.#counter = new WindowCounter(limitPerMinute);
  }

  get enabled(): boolean {
    return this.#counter.enabled;
  }

  consume(key: string, now: number): RateLimitDecision {
    const taken = this.#counter.take(key, now);
    return {
      allowed: taken.allowed,
      retryAfterSeconds: taken.retryAfterSeconds,
      headers: {
        'RateLimit-Policy': `"default";q=${this.#limit};w=60`,
        RateLimit: `"default";r=${taken.remaining};t=${taken.retryAfterSeconds}`,
      },
    };
  }

  /**
   * Counts one request of `key`, puts the RateLimit headers on the response through `setHeaders`,
   * and throws the 429 problem once the key has used its minute. `whose` names the caller in the
   * problem's detail ("This API key"). Does nothing when rate limiting is off.
   */
  enforce(key: string, now: number, setHeaders: (headers: Record<string, string>) => void, whose: string): void {
    if (!this.enabled) return;
    const decision = this.consume(key, now);
    setHeaders(decision.headers);
    if (!decision.allowed) {
      throw problems.rateLimited(
        `${whose} used ${this.#limit} requests this minute; retry after ${decision.retryAfterSeconds} seconds.`,
        { 'Retry-After': String(decision.retryAfterSeconds) },
      );
    }
  }
}
