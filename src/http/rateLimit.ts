/**
 * Per-API-key rate limiting: a fixed one-minute window per key, in memory when one process owns
 * the database (sql.js); in the database when several instances share it (PostgreSQL), so the
 * limit holds over all of them. Headers follow the
 * IETF RateLimit header draft: `RateLimit-Policy: "default";q=1200;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds to reset>`.
 */
import type { SharedRequestCounter } from '../context.ts';
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

  /** Set when several instances share the database: the counters live there (one-minute windows aligned to the clock). */
  readonly #shared: SharedRequestCounter | null;

  constructor(limitPerMinute: number, shared?: SharedRequestCounter) {
    this.#limit = limitPerMinute;
    this.#counter = new WindowCounter(limitPerMinute);
    this.#shared = shared ?? null;
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
  async enforce(key: string, now: number, setHeaders: (headers: Record<string, string>) => void, whose: string): Promise<void> {
    if (!this.enabled) return;
    const decision = this.#shared ? await this.#consumeShared(this.#shared, key, now) : this.consume(key, now);
    setHeaders(decision.headers);
    if (!decision.allowed) {
      throw problems.rateLimited(
        `${whose} used ${this.#limit} requests this minute; retry after ${decision.retryAfterSeconds} seconds.`,
        { 'Retry-After': String(decision.retryAfterSeconds) },
      );
    }
  }

  /** The same decision from the counter every instance shares. */
  async #consumeShared(shared: SharedRequestCounter, key: string, now: number): Promise<RateLimitDecision> {
    const { count, windowEndsAt } = await shared(key, now);
    const resetSeconds = Math.max(1, Math.ceil((windowEndsAt - now) / 1000));
    return {
      allowed: count <= this.#limit,
      retryAfterSeconds: resetSeconds,
      headers: {
        'RateLimit-Policy': `"default";q=${this.#limit};w=60`,
        RateLimit: `"default";r=${Math.max(0, this.#limit - count)};t=${resetSeconds}`,
      },
    };
  }
}
