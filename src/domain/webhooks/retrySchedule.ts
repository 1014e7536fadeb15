/**
 * When a failed delivery is tried again, and when an endpoint is given up on. Pure: the caller
 * passes the time and the random number, so the schedule is tested with a table.
 *
 * Schedule (API-CONVENTIONS.md): the first attempt at once, then 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h and 10 h after each failure, each delay spread by ±10 % jitter so that the retries of
 * many deliveries failing together do not arrive together. A receiver's `Retry-After` pushes
 * the next attempt later (never earlier), up to the longest step of the schedule.
 */

/** Delay after the n-th failed attempt (index n - 1). */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Attempts in all: the first one and one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Each delay is multiplied by a factor in [1 - JITTER, 1 + JITTER). */
export const JITTER = 0.1;

/** The longest a `Retry-After` may push an attempt out. */
export const MAX_RETRY_AFTER_MS = 10 * 3_600_000;

/** An endpoint whose attempts have all failed for this long is disabled. */
export const FAILING_ENDPOINT_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/**
 * When to make the next attempt after attempt number `attempt` (1 for the first) failed, or
 * null when that was the last one. `random` is a number in [0, 1) that picks the jitter;
 * `retryAfterMs` is the receiver's `Retry-After`, if it sent one.
 */
export function nextAttemptAt(attempt: number, now: Date, random: number, retryAfterMs: number | null = null): Date | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a whole number from 1, got ${attempt}`);
  if (!(random >= 0 && random < 1)) throw new RangeError(`random must be in [0, 1), got ${random}`);
  if (attempt >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_MS[attempt - 1]!;
  let delay = Math.round(base * (1 - JITTER + 2 * JITTER * random));
  if (retryAfterMs !== null && retryAfterMs > delay) delay = Math.min(retryAfterMs, Math.max(MAX_RETRY_AFTER_MS, delay));
  return new Date(now.getTime() + delay);
}

/**
 * Reads a `Retry-After` header (delay seconds, or an HTTP date) into milliseconds from `now`;
 * null when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}

export type AttemptVerdict =
  /** 2xx: delivered. */
  | 'delivered'
  /** 410 Gone: the receiver asks to be removed; the endpoint is disabled. */
  | 'gone'
  /** Anything else (another status, a timeout, a refused connection): retried on the schedule. */
  | 'retry';

export function attemptVerdict(statusCode: number | null): AttemptVerdict {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 410) return 'gone';
  return 'retry';
}

/**
 * True when an endpoint that has failed every attempt since `failingSince` has failed long
 * enough to be disabled.
 */
export function failingTooLong(failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= FAILING_ENDPOINT_DISABLE_AFTER_MS;
}
