/**
 * Checkpoints: a snapshot of the whole database written to `snapshot.db` (atomically, via rename)
 * and the journal emptied. The snapshot stores the last LSN it contains (`_engine_meta`), so a
 * journal left behind by a crash between rename and truncate is skipped, never re-applied. The
 * checkpoint the journal's size calls for writes its snapshot outside the queue and then cuts the
 * journal to the records after it (background()). `manifest.json` names every snapshot before and
 * after its rename (see manifest.ts).
 */
import { open, rename, rm } from 'node:fs/promises';
import { naming, syncDir, writeFileDurable, type FaultInjector } from '../core/files.ts';
import type { Connection } from './connection.ts';
import type { EngineFiles, EngineLog } from './dataDir.ts';
import { preparedExportRoom } from './exportRoom.ts';
import type { DegradedMode } from './degradedMode.ts';
import { Journal, type JournalOptions } from './journal.ts';
import { describe, writeManifest, type SnapshotDescriptor } from './manifest.ts';
import type { StoreObserver } from '../store.ts';
import type { Archiver } from './archive/archiver.ts';
import type { WriteQueue } from './writeQueue.ts';

const DEFAULT_CHECKPOINT_BYTES = 64 * 1024 * 1024;
const DEFAULT_CHECKPOINT_JOURNAL_SHARE = 0.25;
/** After a failed checkpoint, the next is not tried before this long. */
const CHECKPOINT_RETRY_MS = 30_000;

/**
 * The journal size at which a background checkpoint starts: `floorBytes`, or `journalShare` of the
 * last snapshot's size where that is more. A checkpoint copies, hashes and writes the whole
 * database, so against a fixed threshold its work per write grows with the database: at 2 GB and
 * 64 MiB, every write would pay for copying 32 bytes for each byte it journals, and requests would
 * wait for the copy every 64 MiB. Growing with the snapshot (as Redis rewrites its append-only file
 * once it has grown by a share of its size) caps that at 1/journalShare bytes per journal byte,
 * while the journal replayed at a start after a crash stays a bounded share of the database.
 */
export function checkpointThreshold(floorBytes: number, journalShare: number, snapshotBytes: number): number {
  return Math.max(floorBytes, Math.ceil(journalShare * snapshotBytes));
}

/** What checkpoints need of the engine; a cut of the journal replaces `journal`. */
export interface CheckpointHost {
  readonly queue: WriteQueue;
  readonly connection: Connection;
  readonly health: DegradedMode;
  journal: Journal;
  readonly lsn: number;
  readonly closing: Promise<void> | null;
  /** Durable writes of the journals this one replaced (a cut, a rebuild), for stats(). */
  earlierFsyncs: number;
  journalOptions(): JournalOptions;
  /** Told how long a checkpoint or its snapshot took (metrics; see StoreObserver). */
  readonly observer: StoreObserver | null;
  /** Ships every snapshot installed to the continuous archive, when ARCHIVE_DIR is set. */
  readonly archiver: Archiver | null;
}

export interface CheckpointSettings {
  checkpointBytes?: number | undefined;
  checkpointJournalShare?: number | undefined;
}

export class Checkpoints {
  /** Checkpoints written since open. */
  count = 0;
  /** LSN contained in snapshot.db (-1: no snapshot yet). */
  snapshotLsn = -1;
  /** What snapshot.db holds on disk (null: none yet); every manifest written names it. */
  onDisk: SnapshotDescriptor | null;
  /**
   * A background checkpoint's snapshot being written outside the queue. Jobs that write the
   * snapshot, the manifest or the journal's layout (a checkpoint in the queue, a rebuild, close)
   * wait for it first; it never needs the queue itself, so waiting inside a job cannot deadlock.
   */
  snapshotting: Promise<void> | null = null;
  private queued = false;
  private notBefore = 0;
  private readonly floorBytes: number;
  private readonly journalShare: number;
  private readonly host: CheckpointHost;
  private readonly files: EngineFiles;
  private readonly faults: FaultInjector | undefined;
  private readonly log: EngineLog;

  constructor(host: CheckpointHost, onDisk: SnapshotDescriptor | null, settings: CheckpointSettings, files: EngineFiles, faults: FaultInjector | undefined, log: EngineLog) {
    this.host = host;
    this.onDisk = onDisk;
    this.floorBytes = settings.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES;
    this.journalShare = settings.checkpointJournalShare ?? DEFAULT_CHECKPOINT_JOURNAL_SHARE;
    this.files = files;
    this.faults = faults;
    this.log = log;
  }

  /**
   * After each commit: starts a background checkpoint once the journal has grown past the
   * threshold; `now` starts one whatever the journal's size (the archive asks for a fresh base).
   */
  maybeSchedule(now = false): void {
    if (this.queued || this.host.closing) return;
    const journal = this.host.journal;
    const threshold = checkpointThreshold(this.floorBytes, this.journalShare, this.onDisk?.bytes ?? 0);
    if (!now && journal.bytes + journal.pendingBytes < threshold) return;
    if (!now && Date.now() < this.notBefore) return;
    this.queued = true;
    this.background()
      .catch((err: Error) => {
        this.notBefore = Date.now() + CHECKPOINT_RETRY_MS;
        this.log('error', 'background checkpoint failed; the journal keeps every write, retrying later', { err: err.message });
      })
      .finally(() => {
        this.queued = false;
        // What was appended while it ran may call for the next one already.
        if (!this.host.health.needsRebuild && !this.host.journal.failed) this.maybeSchedule();
      });
  }

  async writeManifest(clean: boolean, pending: SnapshotDescriptor | null = null): Promise<void> {
    await writeManifest(this.files.dir, { snapshot: this.onDisk, pending, clean }, this.faults);
  }

  /**
   * Snapshot + journal truncate, all inside the queue (or before the store is shared): at open,
   * at close, after secrets are sealed, and when asked (checkpoint()). The manifest names the new
   * snapshot as pending before the rename and as current after it, so a crash at any point leaves
   * a snapshot.db the manifest vouches for.
   */
  async write(): Promise<void> {
    await this.snapshotting;
    await this.host.journal.flushed();
    const started = performance.now();
    const lsn = this.host.lsn;
    const image = this.host.connection.export(lsn);
    await this.install(image, lsn);
    await this.host.journal.truncate(); // a crash before this leaves records <= last_lsn: skipped at open
    this.count++;
    this.snapshotLsn = lsn;
    this.host.observer?.phase('sqljs', 'checkpoint', (performance.now() - started) / 1000);
    this.log('info', 'checkpoint written', { lsn, bytes: image.length, ms: Math.round(performance.now() - started) });
  }

  /**
   * The checkpoint the journal's size calls for, holding the queue only while the database is
   * exported (in memory, into memory made ready before: exportRoom.ts) and, after, while the
   * journal is cut to what came after the export. The snapshot is hashed, written, fsynced and
   * renamed into place meanwhile, while transactions go on appending to the journal: done in the
   * queue, that held every request for 100-300 ms over a 30-80 MB database (issue 17's quotes
   * bench), longer as the database grows.
   */
  private async background(): Promise<void> {
    const host = this.host;
    const started = performance.now();
    // Touched before the queue is held, so that the copy in it is only a copy (exportRoom.ts).
    const room = await preparedExportRoom(host.connection.bytes());
    if (host.closing) return; // close() checkpoints everything itself
    let written!: () => void;
    const taken = await host.queue.enqueue(async () => {
      await this.snapshotting;
      await host.journal.flushed();
      const exporting = performance.now();
      const lsn = host.lsn;
      const exported = {
        image: host.connection.export(lsn, room),
        lsn,
        exportMs: performance.now() - exporting,
        journal: host.journal,
        journalBytes: host.journal.bytes,
        generation: this.count,
      };
      // The records from here on are all the cut keeps: they must not name statements defined before it.
      host.journal.restartStatements();
      // Set before the queue moves on, so that every later job sees the snapshot being written.
      this.snapshotting = new Promise<void>((resolve) => (written = resolve));
      return exported;
    });
    try {
      await this.install(taken.image, taken.lsn);
    } finally {
      this.snapshotting = null;
      written();
    }
    // From here snapshot.db holds everything up to taken.lsn: the journal's records up to it are skipped at open.
    if (host.closing) return; // close() checkpoints everything itself
    await host.queue.enqueue(async () => {
      // A checkpoint in the queue or a rebuild came first: the journal is already right as it is.
      if (host.journal !== taken.journal || this.count !== taken.generation || host.health.needsRebuild || host.journal.failed) return;
      await host.journal.flushed();
      const cutting = performance.now();
      await this.cutJournal(taken.journalBytes);
      const cutMs = performance.now() - cutting;
      this.count++;
      this.snapshotLsn = taken.lsn;
      this.host.observer?.phase('sqljs', 'checkpoint', (performance.now() - started) / 1000);
      this.log('info', 'checkpoint written', {
        lsn: taken.lsn,
        bytes: taken.image.length,
        ms: Math.round(performance.now() - started),
        exportMs: Math.round(taken.exportMs),
        cutMs: Math.round(cutMs),
      });
    });
  }

  /** Makes `image` snapshot.db, durably, under the manifest's protocol (pending, rename, current). */
  private async install(image: Uint8Array, lsn: number): Promise<void> {
    const next = await describe(image, lsn);
    const snapshot = this.files.snapshot;
    const temporary = `${snapshot}.tmp`;
    const started = performance.now();
    try {
      await writeFileDurable(temporary, image, this.faults);
      await this.writeManifest(false, next);
      await naming('rename', temporary, () => rename(temporary, snapshot));
    } catch (err) {
      await rm(temporary, { force: true }).catch(() => {});
      throw err;
    }
    this.onDisk = next;
    await syncDir(this.files.dir);
    this.host.archiver?.snapshotInstalled(image, lsn);
    this.host.observer?.phase('sqljs', 'snapshot', (performance.now() - started) / 1000);
    await this.writeManifest(false);
  }

  /**
   * Replaces the journal with its records after the first `from` bytes (those the new snapshot
   * holds): written to journal.log.tmp, fsynced, renamed over journal.log. In the queue, with
   * nothing waiting to be written. Until the rename the old journal stands, complete; after it, the
   * new file takes every append, and only once the directory is fsynced, so a crash cannot bring
   * back a journal without them.
   */
  private async cutJournal(from: number): Promise<void> {
    const host = this.host;
    const path = this.files.journal;
    const temporary = `${path}.tmp`;
    const old = host.journal;
    let next: Journal | null = null;
    try {
      const tail = await readRange(path, from, old.bytes - from);
      await writeFileDurable(temporary, tail, this.faults);
      // Opened before the rename, so that once journal.log is the new file a journal is ready for it.
      next = await Journal.open(path, tail.length, old.durableLsn, host.journalOptions(), temporary);
      await naming('rename', temporary, () => rename(temporary, path));
    } catch (err) {
      await next?.close().catch(() => {});
      await rm(temporary, { force: true }).catch(() => {});
      throw err; // the journal is as it was; the background checkpoint is tried again later
    }
    host.journal = next;
    host.earlierFsyncs += old.fsyncs;
    await old.close().catch(() => {});
    try {
      await syncDir(this.files.dir, this.faults);
    } catch (err) {
      // After a crash journal.log could be the old file again, without what is appended from now
      // on: take no write until the disk answers and memory is rebuilt from what it holds.
      host.health.enter(err as Error);
      throw err;
    }
  }
}

/** `length` bytes of the file at `path` from `position` (all there: the journal's durable part). */
async function readRange(path: string, position: number, length: number): Promise<Buffer> {
  return naming('read', path, async () => {
    const fh = await open(path, 'r');
    try {
      const data = Buffer.allocUnsafe(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await fh.read(data, read, length - read, position + read);
        if (bytesRead === 0) throw new Error(`${path} ended ${length - read} bytes early`);
        read += bytesRead;
      }
      return data;
    } finally {
      await fh.close();
    }
  });
}
