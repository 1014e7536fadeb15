/**
 * The SDK's retrying fetch (sdk/src/retry.ts) on its own, over a stand-in fetch: which answers it
 * retries and when (by a fake clock: the waits are decided, not measured), Retry-After in both
 * forms, failed connections, and a caller's abort during or before a wait.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffMs, resilientFetch, retryAfterMs, type RetryOptions } from '../../sdk/src/index.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

type Answer = { status: number; retryAfter?: string; body?: string | null } | Error;

/** A fetch that gives `answers` in turn (an Error is a failed connection), then 200s; it records when each call came, by the clock in use. */
function scripted(answers: Answer[], onCall?: (call: number) => void) {
  const calls: Array<{ at: number; key: string | null }> = [];
  const fetchImpl = async (request: Request) => {
    calls.push({ at: Date.now(), key: request.headers.get('idempotency-key') });
    onCall?.(calls.length);
    const answer = answers.shift() ?? { status: 200, body: '{"ok":true}' };
    if (answer instanceof Error) throw answer;
    const headers: Record<string, string> = answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter };
    return new Response(answer.body === undefined ? '{"code":"x"}' : answer.body, { status: answer.status, headers });
  };
  return { calls, fetchImpl };
}

function get(fetchImpl: (request: Request) => Promise<Response>, options?: RetryOptions, signal?: AbortSignal): Promise<Response> {
  return resilientFetch(fetchImpl, options)(new Request('http://127.0.0.1:9/v1/account', signal ? { signal } : {}));
}

describe('retryAfterMs', () => {
  it('reads whole seconds (space around them allowed), or an HTTP date from now; anything else is no answer', () => {
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs(' 7 ')).toBe(7_000);
    expect(retryAfterMs(new Date(1_000_000 + 5_000).toUTCString(), 1_000_000)).toBe(5_000);
    expect(retryAfterMs(new Date(1_000_000 - 5_000).toUTCString(), 1_000_000)).toBe(0); // a date passed: no wait
    expect(retryAfterMs('Sunday, 06-Nov-94 08:49:37 GMT', Date.parse('1994-11-06T08:49:30Z'))).toBe(7_000); // the obsolete forms too
    expect(retryAfterMs('Sun Nov  6 08:49:37 1994', Date.parse('1994-11-06T08:49:30Z'))).toBe(7_000);
    // Fractional or negative seconds and other junk are no answer (the backoff applies), not a date in 2001 ("retry now").
    for (const odd of ['1.5', '-3', '12abc', 'abc12', 'soon', '']) expect(retryAfterMs(odd), odd).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe('backoffMs', () => {
  it('is full jitter: a random share of base · 2^retry, never past the longest wait', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    expect(backoffMs(0, 100, 10_000)).toBe(50);
    expect(backoffMs(3, 100, 10_000)).toBe(400);
    expect(backoffMs(10, 100, 1_000)).toBe(1_000);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(backoffMs(5, 100, 10_000)).toBe(0);
  });
});

describe('resilientFetch', () => {
  it('waits its backoff between retries by the clock: 500 ms doubled each retry by default (the random share at its most)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.spyOn(Math, 'random').mockReturnValue(1);
    const { calls, fetchImpl } = scripted([{ status: 503 }, { status: 502 }, { status: 429 }]);
    const answer = get(fetchImpl);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(calls).toHaveLength(1); // the first wait is 500 ms
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toHaveLength(2); // then 1 s
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(calls).toHaveLength(3); // then 2 s
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(4); // and the fourth try is answered
    expect((await answer).status).toBe(200);
    expect(new Set(calls.map((c) => c.key)).size).toBe(1); // no key on a GET: null every time
  });

  it('waits a Retry-After equal to its longest wait, then retries', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { calls, fetchImpl } = scripted([{ status: 429, retryAfter: '2' }]);
    const answer = get(fetchImpl, { maxDelayMs: 2_000 });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect((await answer).status).toBe(200);
  });

  it('hands back a Retry-After longer than its longest wait at once; the default longest wait is 60 s', async () => {
    const { calls, fetchImpl } = scripted([{ status: 503, retryAfter: '61' }]);
    expect((await get(fetchImpl)).status).toBe(503);
    expect(calls).toHaveLength(1);
  });

  it('retries an answer without a body too', async () => {
    const { calls, fetchImpl } = scripted([{ status: 503, body: null }]);
    expect((await get(fetchImpl, { baseDelayMs: 0 })).status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it('retries a failed connection up to maxRetries, then throws its error', async () => {
    const refused = new TypeError('fetch failed');
    const cured = scripted([refused, refused]);
    expect((await get(cured.fetchImpl, { baseDelayMs: 0 })).status).toBe(200);
    expect(cured.calls).toHaveLength(3);
    const down = scripted([refused, refused, refused]);
    await expect(get(down.fetchImpl, { baseDelayMs: 0, maxRetries: 2 })).rejects.toBe(refused);
    expect(down.calls).toHaveLength(3);
    const off = scripted([refused]);
    await expect(get(off.fetchImpl, { maxRetries: 0 })).rejects.toBe(refused);
    expect(off.calls).toHaveLength(1);
  });

  it("stops at the caller's abort: a failed connection after it is not retried, and a wait ends with it", async () => {
    const controller = new AbortController();
    const refused = new TypeError('fetch failed');
    const afterAbort = scripted([refused], () => controller.abort(new Error('caller gave up')));
    await expect(get(afterAbort.fetchImpl, { baseDelayMs: 0 }, controller.signal)).rejects.toBe(refused);
    expect(afterAbort.calls).toHaveLength(1);

    // Aborted before the wait starts: the wait does not start.
    const before = new AbortController();
    const abortedFirst = scripted([{ status: 429, retryAfter: '30' }], () => before.abort(new Error('gave up first')));
    await expect(get(abortedFirst.fetchImpl, {}, before.signal)).rejects.toThrow('gave up first');
    expect(abortedFirst.calls).toHaveLength(1);

    // Aborted during a wait: the wait ends then, with the caller's reason.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const during = new AbortController();
    const waiting = scripted([{ status: 429, retryAfter: '30' }]);
    const answer = get(waiting.fetchImpl, {}, during.signal);
    const settled = answer.then(
      () => 'resolved',
      (err: Error) => err.message,
    );
    await vi.advanceTimersByTimeAsync(10_000);
    during.abort(new Error('gave up waiting'));
    expect(await settled).toBe('gave up waiting');
    expect(waiting.calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0); // the wait's timer was cleared
  });
});
