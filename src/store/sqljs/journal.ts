/**
 * The write-ahead journal file of the sql.js engine: one framed record per committed write
 * transaction (see journalRecords.ts for the frame), appended and made durable (fsynced) before
 * the transaction is acknowledged.
 *
 * Group commit: `append` queues a frame; while one durable write is in flight, frames appended
 * meanwhile are gathered and written with the next one. A durable write is a write to the file
 * opened O_DSYNC (data and size on disk when it returns), or write+fdatasync where there is no
 * O_DSYNC. A flush that starts from idle waits for the rest of the current event-loop turn, so
 * commits made together share it.
 */
import { constants, open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StorageWriteError, StoreUnavailableError } from '../core/errors.ts';
import { FILE_MODE, naming, syncDir, writeFileDurable, type FaultInjector } from '../core/files.ts';
import { StatementNumbers, encodeRecord, parseJournal, type EncodedRecord, type JournalRecord, type ParsedJournal } from './journalRecords.ts';

export interface RecoveredJournal extends ParsedJournal {
  /** Bytes after the last whole record (a write cut short by a crash), set aside and cut off. */
  tornBytes: number;
  /** Where the torn tail's bytes were kept, or null. */
  setAsidePath: string | null;
  existed: boolean;
}

/**
 * Reads the journal and returns its records. A torn tail is never destroyed: its bytes are first
 * copied (durably) to `<journal>.damaged-<time>`, and only then cut off the journal.
 */
export async function recoverJournal(path: string, faults?: FaultInjector, now: Date = new Date()): Promise<RecoveredJournal> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], goodBytes: 0, tornBytes: 0, setAsidePath: null, existed: false };
    throw err;
  }
  const parsed = parseJournal(buf, path);
  const tornBytes = buf.length - parsed.goodBytes;
  let setAsidePath: string | null = null;
  if (tornBytes > 0) {
    setAsidePath = `${path}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
    await writeFileDurable(setAsidePath, buf.subarray(parsed.goodBytes), faults);
    await syncDir(dirname(path));
    await naming('truncate', path, async () => {
      const fh = await open(path, 'r+');
      try {
        await fh.truncate(parsed.goodBytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
  }
  return { ...parsed, tornBytes, setAsidePath, existed: true };
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {}); // waiters get the rejection; an unobserved batch is not an unhandled rejection
  return { promise, resolve, reject };
}

export interface JournalOptions {
  /** Called once, with the error, when a write or fsync fails. */
  onFailure: (err: Error) => void;
  /** The error appends and waiters are rejected with after a failure. */
  unavailable?: (cause: Error | null) => Error;
  faults?: FaultInjector | undefined;
  /** Told how long each flush (one write and fsync for a group of commits) took, in seconds. */
  onFlush?: (seconds: number) => void;
  /** Handed each batch once durable, and told where numbering starts afresh (the continuous archive). */
  archive?: JournalArchiveTap | undefined;
}

/** What the continuous archive (archive/archiver.ts) takes from the journal: the bytes it wrote, never a copy made for it. */
export interface JournalArchiveTap {
  framesDurable(data: Buffer, fromLsn: number, toLsn: number, atMs: number): void;
  numberingRestarted(lsn: number): void;
}

/** Writes are durable when they return (O_DSYNC), where the platform offers it; else each batch is fdatasynced. */
const SYNC_EACH_WRITE = typeof constants.O_DSYNC === 'number' && constants.O_DSYNC !== 0;

/** Append-only journal file with group commit. */
export class Journal {
  readonly path: string;
  private readonly handle: FileHandle;
  private readonly onFailure: (err: Error) => void;
  private readonly makeUnavailable: (cause: Error | null) => Error;
  private readonly faults: FaultInjector | undefined;
  private readonly onFlush: ((seconds: number) => void) | undefined;
  private readonly archive: JournalArchiveTap | undefined;
  private pending: Buffer[] = [];
  private pendingLsn = 0;
  /** The statements this file defines (a new Journal object, on a reopened file too, starts afresh). */
  private readonly statements = new StatementNumbers();
  /** The batch being gathered (written by the next write+fsync). */
  private nextBatch: Deferred | null = null;
  /** The batch whose write+fsync is in flight. */
  private currentBatch: Deferred | null = null;
  private flushing = false;
  private failure: Error | null = null;
  /** Bytes durably in the file. */
  bytes: number;
  /** Bytes appended but not yet durable. */
  pendingBytes = 0;
  durableLsn: number;
  fsyncs = 0;

  private constructor(path: string, handle: FileHandle, bytes: number, durableLsn: number, options: JournalOptions) {
    this.path = path;
    this.handle = handle;
    this.bytes = bytes;
    this.durableLsn = durableLsn;
    this.onFailure = options.onFailure;
    this.makeUnavailable = options.unavailable ?? ((cause) => new StoreUnavailableError('store failed: a journal write could not be made durable', { cause }));
    this.faults = options.faults;
    this.onFlush = options.onFlush;
    this.archive = options.archive;
    // A new Journal object numbers its statements afresh, on a reopened file too.
    this.archive?.numberingRestarted(durableLsn);
  }

  /**
   * Opens (creating, mode 0600) the journal at `path`, whose first `bytes` are whole records up to
   * `durableLsn`. With O_DSYNC where the platform has it: each write returns once its data (and
   * the size needed to read it back) is on the disk, as though followed by fdatasync (open(2)),
   * so a batch is one call to the thread pool instead of a write and then an fdatasync (the
   * second call's dispatch was 3-4 % of a quote's main-thread CPU).
   */
  static async open(path: string, bytes: number, durableLsn: number, options: JournalOptions, file: string = path): Promise<Journal> {
    // `file` differs from `path` for a journal written under a temporary name and renamed to `path` (a checkpoint's cut).
    const flags = SYNC_EACH_WRITE ? constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC : 'a';
    const handle = await naming('open', file, () => open(file, flags, FILE_MODE));
    try {
      await naming('chmod', file, () => handle.chmod(FILE_MODE));
    } catch (err) {
      await handle.close();
      throw err;
    }
    return new Journal(path, handle, bytes, durableLsn, options);
  }

  /** True once a write failed: this journal takes no more frames (the engine opens a new one). */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** Encodes a record for this file: statements it has defined are named by number. */
  encode(record: JournalRecord): EncodedRecord {
    return encodeRecord(record, this.statements);
  }

  /**
   * Numbers statements afresh from the next record on, so that the records from here are read
   * without anything before them (a checkpoint's cut keeps only those).
   */
  restartStatements(): void {
    this.statements.restart();
    this.archive?.numberingRestarted(this.durableLsn);
  }

  /** Queues a record encoded by encode(); resolves once it is written and fsynced. */
  append(lsn: number, record: EncodedRecord): Promise<void> {
    if (this.failure) return Promise.reject(this.unavailable());
    const frame = record.frame;
    this.statements.adopt(record.defines);
    this.pending.push(frame);
    this.pendingBytes += frame.length;
    this.pendingLsn = lsn;
    this.nextBatch ??= deferred();
    const { promise } = this.nextBatch;
    if (!this.flushing) {
      // The first frame after a quiet spell starts a flush only once the commits made meanwhile
      // (the rest of this turn of the event loop: a burst of requests read together) have joined
      // it. Started at once, it carried that one frame and the burst waited for a second fsync.
      this.flushing = true;
      setImmediate(() => void this.flushLoop());
    }
    return promise;
  }

  /** Resolves once everything appended so far is durable; rejects if the journal failed. */
  flushed(): Promise<void> {
    if (this.failure) return Promise.reject(this.unavailable());
    return (this.nextBatch ?? this.currentBatch)?.promise ?? Promise.resolve();
  }

  private unavailable(): Error {
    return this.makeUnavailable(this.failure);
  }

  private async flushLoop(): Promise<void> {
    this.flushing = true;
    while (this.pending.length > 0 && !this.failure) {
      const batch = this.nextBatch!;
      this.currentBatch = batch;
      const data = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
      const lsn = this.pendingLsn;
      this.pending = [];
      this.pendingBytes = 0;
      this.nextBatch = null;
      const started = performance.now();
      try {
        this.faults?.beforeWrite(this.path, data.length);
        let written = 0;
        while (written < data.length) {
          const { bytesWritten } = await this.handle.write(data, written, data.length - written);
          written += bytesWritten;
        }
        if (!SYNC_EACH_WRITE) await this.handle.datasync();
        this.fsyncs++;
        this.bytes += data.length;
        const fromLsn = this.durableLsn + 1;
        this.durableLsn = lsn;
        this.archive?.framesDurable(data, fromLsn, lsn, Date.now());
        this.onFlush?.((performance.now() - started) / 1000);
        batch.resolve();
      } catch (err) {
        this.failure = new StorageWriteError('write', this.path, err);
        const error = this.unavailable();
        batch.reject(error);
        (this.nextBatch as Deferred | null)?.reject(error); // frames appended during the failed write
        this.nextBatch = null;
        this.pending = [];
        this.pendingBytes = 0;
        this.onFailure(this.failure);
      }
    }
    this.currentBatch = null;
    this.flushing = false;
  }

  /** Empties the file (after a checkpoint). Call only when nothing is pending. */
  async truncate(): Promise<void> {
    await this.flushed();
    await naming('truncate', this.path, async () => {
      await this.handle.truncate(0);
      await this.handle.sync();
    });
    this.bytes = 0;
    this.statements.restart();
    this.archive?.numberingRestarted(this.durableLsn);
  }

  async close(): Promise<void> {
    await this.flushed().catch(() => {});
    await this.handle.close();
  }
}
