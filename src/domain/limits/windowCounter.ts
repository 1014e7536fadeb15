/**
 * A fixed one-minute window per key, in memory: how many of something (requests, failed
 * authentications) a key has used this minute, out of a limit. Pure: the caller passes the time.
 *
 * `take` counts one use before the work it guards is done, and gives a `release` that hands it back
 * (within the same window) when the work turns out not to count: so concurrent callers cannot
 * together get past the limit while their outcomes are still unknown.
 */
export const WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  count: number;
}

export interface Taken {
  /** false when the key had already used its limit this window (nothing was counted then). */
  allowed: boolean;
  /** Uses left in the window after this one. */
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  retryAfterSeconds: number;
  /** Gives the use back, if its window is still the current one; does nothing the second time. */
  release(): void;
}

export class WindowCounter {
  readonly limit: number;
  readonly #windows = new Map<string, Window>();
  #lastSweep = 0;

  /** `limit` uses a minute per key; 0 means no limit. */
  constructor(limit: number) {
    this.limit = limit;
  }

  get enabled(): boolean {
    return this.limit > 0;
  }

  /** Keys held in memory: those with a window that has not been swept since it ended. */
  get size(): number {
    return this.#windows.size;
  }

  take(key: string, now: number): Taken {
    if (!this.enabled) return { allowed: true, remaining: Infinity, retryAfterSeconds: 0, release: () => {} };
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (!window || now - window.startedAt >= WINDOW_MS) {
      window = { startedAt: now, count: 0 };
      this.#windows.set(key, window);
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000));
    const allowed = window.count < this.limit;
    if (allowed) window.count += 1;
    const counted = window;
    let released = !allowed;
    return {
      allowed,
      remaining: Math.max(0, this.limit - window.count),
      retryAfterSeconds,
      release: () => {
        if (released) return;
        released = true;
        if (this.#windows.get(key) === counted && counted.count > 0) counted.count -= 1;
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
