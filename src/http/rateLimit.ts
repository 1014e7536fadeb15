/**
 * Per-API-key rate limiting: a fixed one-minute window per key, in memory (a single instance owns
 * its keys; with several instances the counters move to the shared store). Headers follow the
 * IETF RateLimit header draft: `RateLimit-Policy: "default";q=1200;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds to reset>`.
 */
import { problems } from './problem.ts';

const WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  count: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

export class RateLimiter {
  readonly #limit: number;
  readonly #windows = new Map<string, Window>();
  #lastSweep = 0;

  constructor(limitPerMinute: number) {
    this.#limit = limitPerMinute;
  }

  get enabled(): boolean {
    return this.#limit > 0;
  }

  consume(key: string, now: number): RateLimitDecision {
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (!window || now - window.startedAt >= WINDOW_MS) {
      window = { startedAt: now, count: 0 };
      this.#windows.set(key, window);
    }
    const resetSeconds = Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000));
    const allowed = window.count < this.#limit;
    if (allowed) window.count += 1;
    const remaining = Math.max(0, this.#limit - window.count);
    return {
      allowed,
      retryAfterSeconds: resetSeconds,
      headers: {
        'RateLimit-Policy': `"default";q=${this.#limit};w=60`,
        RateLimit: `"default";r=${remaining};t=${resetSeconds}`,
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

  /** Drops windows that ended, so memory follows active keys rather than every key ever seen. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < WINDOW_MS) return;
    this.#lastSweep = now;
    for (const [key, window] of this.#windows) {
      if (now - window.startedAt >= WINDOW_MS) this.#windows.delete(key);
    }
  }
}
