/**
 * The request log's buffer (src/services/requestLogs.ts): bounded while the store cannot take the
 * entries (the oldest dropped a flush's worth at a time, counted and warned about), nothing lost
 * from what it kept once the store takes writes again, written oldest first in batch rows of at
 * most REQUEST_LOG_BATCH_ENTRIES; and an entry's long path and problem body cut to their bounds.
 */
import { logEntry } from '../../helpers/requestLogEntry.ts';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { boundedEntry, REQUEST_LOG_BUFFER_LIMIT, REQUEST_LOG_FLUSH_BATCH, REQUEST_LOG_PATH_KEPT, requestLogRecorder } from '../../../src/services/requestLogs.ts';
import { REQUEST_LOG_BATCH_ENTRIES } from '../../../src/store/requestLogs.ts';

const entry = (n: number, arrivedAt?: number) => logEntry(n, arrivedAt);

describe('the request log buffer', () => {
  it('drops the oldest when full while the store fails, warns, and writes every entry it kept once the store is back', async () => {
    let failing = true;
    const rows: unknown[][] = [];
    const warnings: string[] = [];
    const fields: unknown[] = [];
    const tx = {
      run: async (_sql: string, params: unknown[]) => void rows.push(params),
      all: async () => [],
    };
    const ctx = {
      store: {
        transaction: async <T>(fn: (t: typeof tx) => Promise<T>) => {
          if (failing) throw new Error('the disk is full');
          return fn(tx);
        },
      },
      log: { warn: (f: unknown, msg: string) => void (warnings.push(msg), fields.push(f)) },
      clock: { now: () => new Date('2026-11-26T12:00:30.000Z') },
    } as unknown as AppContext;
    // No per-minute budget here: this is the buffer's own bound, under one environment's traffic.
    const recorder = requestLogRecorder(ctx, { entriesPerMinute: Infinity });
    try {
      const recorded = REQUEST_LOG_BUFFER_LIMIT + 1;
      for (let n = 0; n < recorded; n++) recorder.record(entry(n));
      expect(recorder.dropped).toBe(REQUEST_LOG_FLUSH_BATCH);
      await recorder.flush();
      expect(warnings).toEqual(['request log buffer full: oldest entries dropped', 'request log flush failed; retrying later']);
      expect(fields[0]).toEqual({ dropped: REQUEST_LOG_FLUSH_BATCH, droppedTotal: REQUEST_LOG_FLUSH_BATCH });
      expect(fields[1]).toMatchObject({ err: new Error('the disk is full') });
      expect(rows).toEqual([]);

      failing = false;
      await recorder.flush();
      // Each row: (id, account, first_at, last_at, entry_count, statuses, key_ids, operation_ids, dictionary, entries).
      const counts = rows.map((r) => r[4] as number);
      expect(Math.max(...counts)).toBeLessThanOrEqual(REQUEST_LOG_BATCH_ENTRIES);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(recorded - REQUEST_LOG_FLUSH_BATCH);
      const requestIds = rows.flatMap((r) => (JSON.parse(r[9] as string) as Array<[string]>).map(([requestId]) => requestId));
      expect(requestIds[0]).toBe(`req-${REQUEST_LOG_FLUSH_BATCH}`);
      expect(requestIds.at(-1)).toBe(`req-${recorded - 1}`);
      expect(new Set(requestIds).size).toBe(requestIds.length);
      expect(recorder.dropped).toBe(REQUEST_LOG_FLUSH_BATCH);
      // A flush that dropped nothing warns of nothing.
      expect(warnings).toHaveLength(2);
    } finally {
      await recorder.stop();
    }
  });

  it('drops a failed batch that no longer fits (entries arrived while it was written), counts it, and warns of it on the next flush', async () => {
    let failing = true;
    const requestIds: string[] = [];
    const warnings: Array<[unknown, string]> = [];
    let recorder: ReturnType<typeof requestLogRecorder> | undefined;
    let next = 0;
    const tx = {
      run: async (_sql: string, params: unknown[]) => void requestIds.push(...(JSON.parse(params[9] as string) as Array<[string]>).map(([id]) => id)),
      all: async () => [],
    };
    const ctx = {
      store: {
        transaction: async <T>(fn: (t: typeof tx) => Promise<T>) => {
          if (failing) {
            // A flush's worth of requests answered while the write is under way: the buffer is full again.
            for (let n = 0; n < REQUEST_LOG_FLUSH_BATCH; n++) recorder!.record(entry(next++));
            throw new Error('the disk is full');
          }
          return fn(tx);
        },
      },
      log: { warn: (f: unknown, msg: string) => void warnings.push([f, msg]) },
      clock: { now: () => new Date('2026-11-26T12:00:30.000Z') },
    } as unknown as AppContext;
    recorder = requestLogRecorder(ctx, { entriesPerMinute: Infinity });
    try {
      while (next < REQUEST_LOG_BUFFER_LIMIT) recorder.record(entry(next++));
      expect(recorder.dropped).toBe(0);
      await recorder.flush();
      // The failed batch (the oldest flush's worth) had no room left: gone, and counted.
      expect(recorder.dropped).toBe(REQUEST_LOG_FLUSH_BATCH);
      expect(warnings.map(([, msg]) => msg)).toEqual(['request log flush failed; retrying later']);

      failing = false;
      await recorder.flush();
      expect(warnings[1]).toEqual([{ dropped: REQUEST_LOG_FLUSH_BATCH, droppedTotal: REQUEST_LOG_FLUSH_BATCH }, 'request log buffer full: oldest entries dropped']);
      expect(requestIds).toHaveLength(REQUEST_LOG_BUFFER_LIMIT);
      expect(requestIds[0]).toBe(`req-${REQUEST_LOG_FLUSH_BATCH}`);
      expect(requestIds.at(-1)).toBe(`req-${next - 1}`);
    } finally {
      await recorder.stop();
    }
  });
});

describe('what an entry keeps', () => {
  it('cuts a long path to its first 512 characters (no percent-escape cut in two) and a long problem body’s strings likewise', () => {
    const path = `/v1/quotes/qte-${'a'.repeat(495)}%41${'b'.repeat(5000)}`;
    const problem = JSON.stringify({ type: '/problems/validation-failed', status: 400, instance: path, errors: [{ pointer: '/quoteId', message: 'x'.repeat(3000) }] });
    const kept = boundedEntry({ ...entry(1), path, pathLength: path.length, status: 400, problem });
    expect(kept.path).toBe(path.slice(0, 510));
    expect(kept.pathLength).toBe(path.length);
    const parsed = JSON.parse(kept.problem!) as { type: string; instance: string; errors: Array<{ message: string }> };
    expect(parsed.type).toBe('/problems/validation-failed');
    expect(parsed.instance).toBe(kept.path);
    expect(parsed.errors[0]!.message).toHaveLength(REQUEST_LOG_PATH_KEPT);
    // A long body that is not JSON (none is) is not kept rather than thrown on after the answer.
    expect(boundedEntry({ ...entry(3), status: 500, problem: 'x'.repeat(3000) }).problem).toBeNull();
    // A short entry is kept as it is.
    const short = { ...entry(2), problem: '{"status":404}' };
    expect(boundedEntry(short)).toBe(short);
  });

  it('keeps a long problem body’s numbers, short strings and structure as they were', () => {
    const problem = JSON.stringify({ type: '/problems/rate-limited', status: 429, detail: 'over 100%', retryable: true, instance: null, errors: [{ at: 3, message: 'y'.repeat(3000) }] });
    const parsed = JSON.parse(boundedEntry({ ...entry(1), status: 429, problem }).problem!) as Record<string, unknown>;
    expect(parsed).toEqual({ type: '/problems/rate-limited', status: 429, detail: 'over 100%', retryable: true, instance: null, errors: [{ at: 3, message: 'y'.repeat(REQUEST_LOG_PATH_KEPT) }] });
  });

  it('keeps a problem body of up to 2,048 characters as it was sent, whitespace and all', () => {
    const sent = (length: number) => {
      const head = '{ "type": "/problems/not-found", "status": 404, "detail": "';
      return `${head}${'z'.repeat(length - head.length - 3)}" }`;
    };
    for (const problem of [sent(2_048), '{ "status": 404 }']) {
      expect(boundedEntry({ ...entry(1), status: 404, problem }).problem).toBe(problem);
    }
    // One character more and it is the bounded (re-serialised) form.
    expect(boundedEntry({ ...entry(1), status: 404, problem: sent(2_049) }).problem).not.toContain(' ');
  });

  it('cuts a long path without leaving part of a percent-escape, wherever the cut falls, and keeps the escapes before it', () => {
    const start = '/v1/quotes/%20';
    const pathCutAt = (tail: string) => `${start}${'a'.repeat(REQUEST_LOG_PATH_KEPT - start.length - tail.length)}${tail}`;
    const cases: Array<[string, string]> = [
      [`${pathCutAt('%')}41rest`, pathCutAt('%').slice(0, -1)], // the cut falls just after '%'
      [`${pathCutAt('%4')}1rest`, pathCutAt('%4').slice(0, -2)], // between the escape's two digits
      [`${pathCutAt('%41')}rest`, pathCutAt('%41')], // just after a whole escape
    ];
    for (const [path, kept] of cases) {
      const bounded = boundedEntry({ ...entry(1), path, pathLength: path.length, problem: null });
      expect(bounded.path).toBe(kept);
      expect(bounded.pathLength).toBe(path.length);
      expect(bounded.problem).toBeNull();
    }
  });

  it('keeps a path, or a long problem’s string, of exactly 512 characters whole, whatever it ends with', () => {
    const path = `/v1/quotes/${'a'.repeat(REQUEST_LOG_PATH_KEPT - 12)}%`;
    expect(path).toHaveLength(REQUEST_LOG_PATH_KEPT);
    const problem = JSON.stringify({ status: 404, instance: path, detail: 'x'.repeat(2_000) });
    const kept = boundedEntry({ ...entry(1), path, pathLength: path.length, status: 404, problem });
    expect(kept.path).toBe(path);
    expect((JSON.parse(kept.problem!) as { instance: string }).instance).toBe(path);
  });
});
