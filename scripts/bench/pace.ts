/**
 * The soak's pace: loops started at a fixed rate (an open loop), or as fast as the clients go.
 *
 * Why a fixed rate: clients that run flat out make the load, and so the data the soak leaves
 * behind, a measure of the machine's speed. The same 20 minutes grew sql.js's database to 1.0 GiB
 * on one machine and 2.0 GiB on a faster one, where every checkpoint's copy and every minute's
 * export of the whole database cost the last minutes their throughput: the soak then measured the
 * machine against the embedded engine's ceiling, not the service's drift. At a fixed rate every
 * machine that keeps up does the same work on the same data, and what still drifts is the service.
 *
 * A loop that starts late (every client was busy, or the service stalled) is timed from when it
 * was due, not from when it started: a stall shows in the latencies of the requests it held up, as
 * a partner sending at its own pace would see it, rather than being hidden by clients that waited
 * (coordinated omission).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** When the `index`-th loop (from 0) is due, for loops started `perSecond` a second from `startedAt` (ms). */
export function loopDueAt(index: number, perSecond: number, startedAt: number): number {
  return startedAt + (index * 1000) / perSecond;
}

export class LoopPace {
  private nextIndex = 0;
  readonly perSecond: number | null;
  private readonly pacedFrom: number;
  /**
   * `perSecond` null: no pace, each loop is due as soon as a client asks (the closed loop). Before
   * `pacedFrom` (performance.now()'s clock) loops are unpaced too: the soak's warm-up runs flat
   * out, so that the measured minutes start from a service whose heap and compiled code are at
   * the size busy work gives them. At a fifth of the machine's speed a service reaches that size
   * slowly: on PostgreSQL its RSS crept from 213 to 269 MiB over 20 paced minutes while V8's heap
   * stayed at 177–181 MiB committed and the same 771 pages mapped; the creep was V8's pages being
   * touched for the first time, which a flat-out run does in its first minute.
   */
  constructor(perSecond: number | null, pacedFrom: number = performance.now()) {
    this.perSecond = perSecond;
    this.pacedFrom = pacedFrom;
  }

  /** Waits until the next loop is due and returns when that was (performance.now()'s clock): in the past when the loop is late. */
  async next(now: () => number = () => performance.now()): Promise<number> {
    const at = now();
    if (this.perSecond === null || at < this.pacedFrom) return at;
    const due = loopDueAt(this.nextIndex++, this.perSecond, this.pacedFrom);
    const wait = due - at;
    if (wait > 0) await sleep(wait);
    return due;
  }
}

/** SOAK_RATE: loops a second (a positive number), or `max` for clients that run flat out; `fallback` when unset. */
export function parseRate(text: string | undefined, fallback: number): number | null {
  if (text === undefined || text.trim() === '') return fallback;
  if (text.trim().toLowerCase() === 'max') return null;
  const rate = Number(text);
  if (!Number.isFinite(rate) || rate <= 0) throw new Error(`SOAK_RATE must be a positive number of loops a second, or max (got ${JSON.stringify(text)})`);
  return rate;
}
