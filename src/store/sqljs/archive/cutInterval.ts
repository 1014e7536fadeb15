/**
 * How long the archiver lets a journal segment grow before it cuts and ships it. A write
 * acknowledged just after a cut waits for the next cut, then at most for the file being written
 * ahead of its own, then for its own write (a write and two fsyncs): cut + 2 × write. The cut
 * interval is what is left of ARCHIVE_MAX_DELAY_MS for that, so the recovery point holds when the
 * archive's disk slows down, and is half the delay (fewer, larger files) while writes are quick.
 */

/** How many recent file writes the estimate looks at: enough to see a slow disk, few enough to forget one. */
const WINDOW = 16;

/** The cut interval for `maxDelayMs` when recent file writes took up to `writeMs`: between a tenth and half of the delay. */
export function cutIntervalMs(maxDelayMs: number, writeMs: number): number {
  const half = Math.max(1, Math.floor(maxDelayMs / 2));
  const floor = Math.max(1, Math.floor(maxDelayMs / 10));
  return Math.min(half, Math.max(floor, Math.floor(maxDelayMs - 2 * writeMs)));
}

/** The durations of the archive's last file writes; `slowest` is the estimate the cut interval plans for. */
export class RecentWrites {
  private readonly durations: number[] = [];

  add(ms: number): void {
    this.durations.push(ms);
    if (this.durations.length > WINDOW) this.durations.shift();
  }

  get slowest(): number {
    return this.durations.length === 0 ? 0 : Math.max(...this.durations);
  }
}
