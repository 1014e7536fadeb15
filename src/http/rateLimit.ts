/**
 * Per-API-key rate limiting: a fixed one-minute window per key, in memory when one process owns
 * the database (sql.js); in the database when several instances share it (PostgreSQL), so the
 * limit holds over all of them. Headers follow the
 * IETF RateLimit header draft: `RateLimit-Policy: "default";q=1200;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds to reset>`.
 */
import { countRequest, deleteRateLimitWindows } from '../store/rateLimits.ts';
import type { Store } from '../store/store.ts';
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

  /** Set when several instances share the database: the counters live there (one-minute windows aligned to the clock). */
  readonly #shared: Store | null;

  constructor(limitPerMinute: number, store?: Store) {
    this.#limit = limitPerMinute;
    this.#shared = store?.sharedByInstances ? store : null;
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
  async #consumeShared(store: Store, key: string, now: number): Promise<RateLimitDecision> {
    const windowStart = now - (now % WINDOW_MS);
    const count = await store.transaction((tx) => countRequest(tx, key, new Date(windowStart).toISOString()));
    if (now - this.#lastSweep >= WINDOW_MS) {
      this.#lastSweep = now;
      const ended = new Date(windowStart - WINDOW_MS).toISOString();
      void store.transaction((tx) => deleteRateLimitWindows(tx, ended)).catch(() => {});
    }
    const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000));
    const allowed = count <= this.#limit;
    return {
      allowed,
      retryAfterSeconds: resetSeconds,
      headers: {
        'RateLimit-Policy': `"default";q=${this.#limit};w=60`,
        RateLimit: `"default";r=${Math.max(0, this.#limit - count)};t=${resetSeconds}`,
      },
    };
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
