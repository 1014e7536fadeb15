/**
 * A failed write to disk (a full disk) degrades the store instead of stopping it: the memory is
 * rebuilt from what is durable before the next job (so nothing unacknowledged is ever shown, see
 * recovery.ts), writes are refused with StorageUnavailableError, reads keep answering, and a probe
 * returns the store to normal by itself once the disk takes writes again.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageUnavailableError, type StorageWriteError } from '../core/errors.ts';
import { syncDir, writeFileDurable, type FaultInjector } from '../core/files.ts';
import type { EngineLog } from './dataDir.ts';
import type { BeforeEachJob, WriteQueue } from './writeQueue.ts';

/** What the probe writes to learn whether the disk takes writes again. */
const PROBE_BYTES = 64 * 1024;
export const PROBE_FILE = '.write-probe';
const DEFAULT_PROBE_INTERVAL_MS = 1000;

/** What degraded mode needs of the engine. */
export interface DegradedHost {
  readonly queue: WriteQueue;
  readonly closing: Promise<void> | null;
  readonly lsn: number;
  /** Replaces memory with what is durable (inside the queue). */
  rebuildFromDisk(): Promise<void>;
}

export class DegradedMode implements BeforeEachJob {
  /** Set when a write to disk failed; cleared by a successful probe. */
  degraded: { since: Date; cause: Error } | null = null;
  /** Memory may hold transactions that were never made durable: rebuild it from disk before any other job. */
  needsRebuild = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private readonly host: DegradedHost;
  private readonly dir: string;
  private readonly intervalMs: number;
  private readonly faults: FaultInjector | undefined;
  private readonly log: EngineLog;

  constructor(host: DegradedHost, dir: string, intervalMs: number | undefined, faults: FaultInjector | undefined, log: EngineLog) {
    this.host = host;
    this.dir = dir;
    this.intervalMs = intervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.faults = faults;
    this.log = log;
  }

  rebuild(): Promise<void> {
    return this.host.rebuildFromDisk();
  }

  /** The refusal of a write while degraded; its Retry-After is the probe's interval. */
  unavailable(cause: Error | null = this.degraded?.cause ?? null): StorageUnavailableError {
    const why = cause ? `: ${cause.message}` : '';
    return new StorageUnavailableError(
      `storage unavailable${why}; writes are refused until the disk takes writes again`,
      Math.max(1, Math.ceil(this.intervalMs / 1000)),
      { cause },
    );
  }

  /** A write to disk failed: degrade (writes refused, memory rebuilt from disk before the next job) and start probing. */
  enter(err: Error): void {
    this.needsRebuild = true;
    if (!this.degraded) {
      this.degraded = { since: new Date(), cause: err };
      this.log('error', 'storage write failed: store degraded (writes refused, reads served) until a write succeeds again', {
        err: err.message,
        code: (err as StorageWriteError).code,
        file: (err as StorageWriteError).path,
      });
    }
    if (!this.probeTimer && !this.host.closing) {
      this.probeTimer = setInterval(() => void this.probe(), this.intervalMs);
      this.probeTimer.unref();
    }
  }

  stopProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
  }

  /** Tries a durable write; when it succeeds the store is back to normal. */
  private async probe(): Promise<void> {
    if (this.probing || this.host.closing || !this.degraded) return;
    this.probing = true;
    const probePath = join(this.dir, PROBE_FILE);
    try {
      await this.host.queue.enqueue(async () => {
        try {
          await writeFileDurable(probePath, Buffer.alloc(PROBE_BYTES), this.faults);
        } finally {
          await rm(probePath, { force: true });
        }
        // The directory too: journal.log may have been renamed in by a checkpoint whose directory
        // fsync failed, and nothing may be appended to it before its name is durable.
        await syncDir(this.dir, this.faults);
        const since = this.degraded!.since;
        this.degraded = null;
        this.stopProbe();
        this.log('warn', 'storage takes writes again: store back to normal', { degradedMs: Date.now() - since.getTime(), lsn: this.host.lsn });
      });
    } catch {
      // still failing: the next tick tries again
    } finally {
      this.probing = false;
    }
  }
}
