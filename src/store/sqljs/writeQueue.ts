/**
 * The one FIFO queue every transaction, read, checkpoint, probe and rebuild runs through: sql.js
 * runs one statement at a time on one thread, so a transaction must never interleave with another
 * across its awaits. A job holds the queue until it settles.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { StoreUnavailableError } from '../core/errors.ts';

export interface QueueOptions {
  /** Run even though the store is degraded and its memory could not be rebuilt (close). */
  tolerateRebuildFailure?: boolean;
}

/** What must happen before the next job: memory rebuilt from disk after a failed write (see degradedMode.ts). */
export interface BeforeEachJob {
  readonly needsRebuild: boolean;
  rebuild(): Promise<void>;
  unavailable(cause: Error): Error;
}

export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly jobContext = new AsyncLocalStorage<object>();
  private currentJob: object | null = null;
  /** Set once the store is closed: every job queued after fails. */
  closed = false;
  private readonly before: BeforeEachJob;

  constructor(before: BeforeEachJob) {
    this.before = before;
  }

  /** Runs `job` after every job queued before it. */
  enqueue<T>(job: () => Promise<T>, options: QueueOptions = {}): Promise<T> {
    const token = {};
    const run = this.tail.then(async () => {
      if (this.closed) throw new StoreUnavailableError('store is closed');
      this.currentJob = token;
      try {
        if (this.before.needsRebuild) {
          try {
            await this.before.rebuild();
          } catch (err) {
            if (!options.tolerateRebuildFailure) throw this.before.unavailable(err as Error);
          }
        }
        return await this.jobContext.run(token, job);
      } finally {
        this.currentJob = null;
      }
    });
    this.tail = run.catch(() => {});
    return run;
  }

  /** True when called from inside the running job: queueing another job from there would wait for itself. */
  insideJob(): boolean {
    return this.currentJob !== null && this.jobContext.getStore() === this.currentJob;
  }
}
