/**
 * The fetch under the client: it sends an `Idempotency-Key` with every POST that has none (the
 * same key on every retry, so a retried POST takes effect once), and retries 429, 502 and 503
 * answers and failed connections with exponential backoff and jitter, waiting `Retry-After` when
 * the answer gives one.
 */

export interface RetryOptions {
  /** Retries after the first try (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** First backoff when the answer has no Retry-After, doubled each retry (default 500 ms). */
  baseDelayMs?: number;
  /** The longest the client waits before a retry; a longer Retry-After is returned to the caller instead (default 60 s). */
  maxDelayMs?: number;
}

export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 502, 503]);

/**
 * Each form of an HTTP date (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT` and the two obsolete
 * ones) starts with the day's name. Date.parse alone takes "1.5" or "-3" for dates in 2001, so a
 * malformed Retry-After would read as "retry now".
 */
const HTTP_DATE_START = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)/;

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!HTTP_DATE_START.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full jitter: a random wait up to base · 2^retry (AWS architecture blog, "Exponential Backoff And Jitter"). */
export function backoffMs(retry: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.min(maxDelayMs, Math.random() * baseDelayMs * 2 ** retry);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

export function resilientFetch(fetchImpl: (input: Request) => Promise<Response>, options: RetryOptions = {}): (input: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 3;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  return async (input) => {
    let request = input;
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) {
      const headers = new Headers(request.headers);
      headers.set('Idempotency-Key', newIdempotencyKey());
      request = new Request(request, { headers });
    }
    for (let retry = 0; ; retry += 1) {
      let response: Response;
      try {
        response = await fetchImpl(request.clone());
      } catch (err) {
        if (retry >= maxRetries || request.signal.aborted) throw err;
        await sleep(backoffMs(retry, baseDelayMs, maxDelayMs), request.signal);
        continue;
      }
      if (!RETRIED_STATUSES.has(response.status) || retry >= maxRetries) return response;
      const wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(retry, baseDelayMs, maxDelayMs);
      if (wait > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}
