/**
 * When the request log's buffer (src/services/requestLogs.ts) writes: as soon as a flush's worth
 * waits, else on its one-second timer; a minute's marker (the per-minute budget's count of what it
 * did not store) once a later request of the environment arrives, once the timer sees the minute
 * over, and at shutdown for the minute still running; and nothing recorded after shutdown.
 * The store is a fake that keeps the rows it is given; the timer is a fake one (no waiting).
 */
import { logEntry, T0 } from '../../helpers/requestLogEntry.ts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { REQUEST_LOG_FLUSH_BATCH, requestLogRecorder } from '../../../src/services/requestLogs.ts';

const MINUTE = 60_000;

const entry = (n: number, arrivedAt?: number) => logEntry(n, arrivedAt);

/** A store that keeps every batch row's entries, and a clock the test moves. */
function fakeApp() {
  const written: Array<{ requestId: string; omittedCount: number | null; omittedFirstAt: number | null }> = [];
  let now = T0 + 30_000;
  const tx = {
    run: async (_sql: string, params: unknown[]) => {
      const firstAt = Date.parse(params[2] as string);
      for (const e of JSON.parse(params[9] as string) as unknown[][]) {
        written.push({ requestId: e[0] as string, omittedCount: (e[13] as number | undefined) ?? null, omittedFirstAt: typeof e[14] === 'number' ? firstAt + e[14] : null });
      }
    },
    all: async () => [],
  };
  const ctx = {
    store: { transaction: async <T>(fn: (t: typeof tx) => Promise<T>) => fn(tx) },
    log: { warn: () => undefined },
    clock: { now: () => new Date(now) },
  } as unknown as AppContext;
  return { ctx, written, setNow: (ms: number) => void (now = ms) };
}

/** One turn of the event loop: a flush the recorder started with setImmediate has run (the fake store does no I/O). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('when the request log is written', () => {
  it('starts a flush as soon as a flush’s worth of entries waits, and not before', async () => {
    const { ctx, written } = fakeApp();
    const recorder = requestLogRecorder(ctx, { entriesPerMinute: Infinity });
    try {
      for (let n = 0; n < REQUEST_LOG_FLUSH_BATCH - 1; n++) recorder.record(entry(n));
      await turn();
      expect(written).toHaveLength(0);
      recorder.record(entry(REQUEST_LOG_FLUSH_BATCH - 1));
      await turn();
      expect(written).toHaveLength(REQUEST_LOG_FLUSH_BATCH);
      // And again for the next flush's worth.
      for (let n = 0; n < REQUEST_LOG_FLUSH_BATCH; n++) recorder.record(entry(REQUEST_LOG_FLUSH_BATCH + n));
      await turn();
      expect(written).toHaveLength(2 * REQUEST_LOG_FLUSH_BATCH);
    } finally {
      await recorder.stop();
    }
  });

  it('writes fewer entries on its one-second timer, and a minute’s marker once the timer sees the minute over', async () => {
    const { ctx, written, setNow } = fakeApp();
    const recorder = requestLogRecorder(ctx, { entriesPerMinute: 1 });
    try {
      recorder.record(entry(1));
      recorder.record(entry(2)); // past the minute's budget: counted
      recorder.record(entry(3)); // likewise, and the minute's marker for now
      await turn();
      expect(written).toEqual([]);
      vi.advanceTimersByTime(1_000);
      await turn();
      expect(written.map((w) => w.requestId)).toEqual(['req-1']);

      setNow(T0 + MINUTE + 100);
      vi.advanceTimersByTime(1_000);
      await turn();
      expect(written).toEqual([
        { requestId: 'req-1', omittedCount: null, omittedFirstAt: null },
        { requestId: 'req-3', omittedCount: 2, omittedFirstAt: T0 + 2 },
      ]);
    } finally {
      await recorder.stop();
    }
  });

  it('writes a minute’s marker, before the new minute’s entry, once a later request of the environment arrives', async () => {
    const { ctx, written } = fakeApp();
    const recorder = requestLogRecorder(ctx, { entriesPerMinute: 1 });
    try {
      recorder.record(entry(1));
      recorder.record(entry(2));
      recorder.record(entry(3));
      recorder.record(entry(4, T0 + MINUTE + 5));
      await recorder.flush();
      expect(written).toEqual([
        { requestId: 'req-1', omittedCount: null, omittedFirstAt: null },
        { requestId: 'req-3', omittedCount: 2, omittedFirstAt: T0 + 2 },
        { requestId: 'req-4', omittedCount: null, omittedFirstAt: null },
      ]);
    } finally {
      await recorder.stop();
    }
  });

  it('writes what is left on shutdown, the running minute’s marker included, and nothing recorded after', async () => {
    const { ctx, written } = fakeApp();
    const recorder = requestLogRecorder(ctx, { entriesPerMinute: 1 });
    recorder.record(entry(1));
    recorder.record(entry(2));
    recorder.record(entry(3));
    await recorder.stop();
    expect(written).toEqual([
      { requestId: 'req-1', omittedCount: null, omittedFirstAt: null },
      { requestId: 'req-3', omittedCount: 2, omittedFirstAt: T0 + 2 },
    ]);
    recorder.record(entry(4, T0 + 2 * MINUTE));
    await recorder.flush();
    expect(written.map((w) => w.requestId)).toEqual(['req-1', 'req-3']);
  });
});
