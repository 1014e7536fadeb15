/**
 * Continuous archiving of the embedded store (ARCHIVE_DIR): every journal batch made durable is
 * gathered into a segment, cut and shipped at least every `maxDelayMs / 2` while writes come in
 * (so an acknowledged write reaches the archive within `maxDelayMs` while the archive is healthy),
 * and every checkpoint's snapshot is shipped beside them. Each file is written as `.partial`,
 * fsynced, renamed and the directory fsynced (Litestream's and PostgreSQL's archive_command's rule:
 * a name is a whole file).
 *
 * Never on a request's path: the journal hands over the bytes it has just written (no copy, no
 * encoding), and the files are written by one writer chain of their own. A failing archive (full,
 * gone, read-only) leaves the service serving: segments wait in memory up to PENDING_LIMIT_BYTES
 * and the write is tried again; past that, they are dropped and the next shipment is a fresh
 * snapshot (asked of the engine), so the archive is whole again from there, and the hole is named
 * by any restore that would need it.
 *
 * A segment starts where the journal numbers its statements afresh (a checkpoint's cut, a journal
 * opened anew) or continues the one before it; a snapshot at LSN L is always followed by numbering
 * afresh at L + 1, so a replay can start at any snapshot (archivePlan.ts).
 */
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { naming, syncDir, writeFileDurable } from '../../core/files.ts';
import { encodeArchiveFile, type AckMark, type ArchiveHeader, type SegmentHeader } from './archiveFile.ts';
import { cutIntervalMs, RecentWrites } from './cutInterval.ts';
import { PARTIAL_SUFFIX, documentName, lastArchivedLsn, listArchive, retentionPlan, segmentName, snapshotName } from './archivePlan.ts';

/** Segments held in memory while the archive cannot be written; past this they are dropped for a fresh snapshot. */
const PENDING_LIMIT_BYTES = 64 * 1024 * 1024;
/** The most journal bytes one coalesced segment file holds. */
const COALESCE_LIMIT_BYTES = 16 * 1024 * 1024;
/** A failed write is tried again after this long, doubling up to RETRY_MAX_MS. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 30_000;
/** Retention runs after a snapshot is shipped, and at most this often. */
const RETENTION_EVERY_MS = 60 * 60 * 1000;

/** The engine's log, as the archiver uses it (not imported: the engine's types import this module). */
type ArchiveLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface ArchiveSettings {
  dir: string;
  maxDelayMs: number;
  retentionMs: number;
}

/** What the archive reports (/readyz, metrics, the log). */
export interface ArchiveStatus {
  state: 'ok' | 'failing' | 'refused';
  /** The last LSN whose file is in the archive (-1: none yet). */
  archivedLsn: number;
  /** When a file was last written (ms since the epoch; null: never, since start). */
  lastSuccessMs: number | null;
  /** Journal bytes made durable but not yet archived, and how long the oldest of them has waited. */
  lagBytes: number;
  lagSeconds: number;
  /** Why the archive is failing or refused (null when ok). */
  problem: string | null;
}

interface PendingFile {
  name: string;
  header: ArchiveHeader;
  /** The bytes, or a reading of them when written (a document: null when it was deleted since). */
  body: Uint8Array | readonly Buffer[] | (() => Promise<Buffer | null>);
  toLsn: number;
  bytes: number;
  oldestAckMs: number;
}

/** What the archiver asks of the engine: the snapshot it starts from, and a fresh one after a hole. */
export interface ArchiveHost {
  requestSnapshot(): void;
}

export class Archiver {
  private readonly settings: ArchiveSettings;
  /** How long the last file writes took: the cut interval leaves room for them (cutInterval.ts). */
  private readonly recentWrites = new RecentWrites();
  private readonly log: ArchiveLog;
  private readonly now: () => number;
  private host: ArchiveHost | null = null;
  /** Frames since the last cut. */
  private frames: Buffer[] = [];
  private framesBytes = 0;
  private fromLsn = -1;
  private toLsn = -1;
  private acks: AckMark[] = [];
  private startsNumbering = false;
  /** The journal numbered afresh after this LSN, and no frame has come since. */
  private restartedAfter: number | null = null;
  private cutTimer: NodeJS.Timeout | null = null;
  /** Files waiting to be written, in order. */
  private queue: PendingFile[] = [];
  private queueBytes = 0;
  private writing: Promise<void> | null = null;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Frames are dropped until a snapshot restarts the archive (after a hole, or before the first base). */
  private awaitingBase = true;
  private lastRetentionMs = 0;
  private hasSnapshot = false;
  private closed = false;
  private status: ArchiveStatus = { state: 'ok', archivedLsn: -1, lastSuccessMs: null, lagBytes: 0, lagSeconds: 0, problem: null };

  constructor(settings: ArchiveSettings, log: ArchiveLog, now: () => number = Date.now) {
    this.settings = settings;
    this.log = log;
    this.now = now;
  }

  /**
   * Before the store opens: what the archive holds. Frames and snapshots handed over from here are
   * kept until start() decides what the archive needs.
   */
  async open(): Promise<void> {
    try {
      await naming('create the archive directory', this.settings.dir, () => mkdir(this.settings.dir, { recursive: true, mode: 0o700 }));
      const names = await readdir(this.settings.dir);
      for (const name of names) if (name.endsWith(PARTIAL_SUFFIX)) await rm(join(this.settings.dir, name), { force: true });
      const listing = listArchive(names);
      this.status.archivedLsn = lastArchivedLsn(listing);
      this.hasSnapshot = listing.snapshots.length > 0;
    } catch (err) {
      // The service starts all the same; the archive is written from a fresh base once it can be.
      this.status.state = 'failing';
      this.status.problem = (err as Error).message;
      this.log('error', 'archive: the directory cannot be read; the service starts without it and tries again', { archiveDir: this.settings.dir, err: (err as Error).message });
    }
  }

  /**
   * Once the store is open at `lsn`, with `snapshot` (snapshot.db, or null before the first
   * checkpoint) holding exactly that LSN: refuses an archive that is ahead of this store (another
   * store's, or this one's before a restore to an earlier point), else ships the snapshot when the
   * archive needs a base to go on from here. Nothing is written before this.
   */
  async start(host: ArchiveHost, lsn: number, snapshot: () => Promise<Uint8Array | null>): Promise<void> {
    this.host = host;
    const archived = this.status.archivedLsn;
    if (archived > lsn) {
      this.refuse(`the archive holds writes up to lsn ${archived}, but this data directory is at lsn ${lsn}: it belongs to another store, or to this one before a restore. Give this store a new ARCHIVE_DIR`);
      return;
    }
    if (this.awaitingBase) {
      // Everything this store holds is archived already (a clean restart): go on where it ended.
      if (archived === lsn && this.hasSnapshot) this.awaitingBase = false;
      else this.snapshotInstalled((await snapshot()) ?? new Uint8Array(0), lsn);
    }
    this.kick();
  }

  get archiveStatus(): ArchiveStatus {
    const oldest = Math.min(this.acks[0]?.[1] ?? Infinity, ...this.queue.map((f) => f.oldestAckMs));
    return {
      ...this.status,
      lagBytes: this.framesBytes + this.queue.reduce((sum, f) => sum + (f.header.kind === 'segment' ? f.bytes : 0), 0),
      lagSeconds: Number.isFinite(oldest) ? Math.max(0, (this.now() - oldest) / 1000) : 0,
    };
  }

  /** The journal made `data` (the records `fromLsn`..`toLsn`) durable at `atMs`. */
  framesDurable(data: Buffer, fromLsn: number, toLsn: number, atMs: number): void {
    if (this.closed || this.status.state === 'refused' || this.awaitingBase) {
      this.restartedAfter = null;
      return;
    }
    if (this.frames.length > 0 && fromLsn !== this.toLsn + 1) this.cut(); // never happens: LSNs follow each other
    if (this.frames.length === 0) {
      this.fromLsn = fromLsn;
      this.startsNumbering = this.restartedAfter === fromLsn - 1;
      this.cutTimer = setTimeout(() => this.cut(), cutIntervalMs(this.settings.maxDelayMs, this.recentWrites.slowest));
      this.cutTimer.unref();
    }
    this.restartedAfter = null;
    this.frames.push(data);
    this.framesBytes += data.length;
    this.toLsn = toLsn;
    this.acks.push([toLsn, atMs]);
  }

  /** The journal numbers its statements afresh from the record after `lsn`: what comes next starts a segment. */
  numberingRestarted(lsn: number): void {
    if (this.frames.length > 0) this.cut();
    this.restartedAfter = lsn;
  }

  /** A checkpoint installed `image` (the database at `lsn`) as snapshot.db. */
  snapshotInstalled(image: Uint8Array, lsn: number): void {
    if (this.closed || this.status.state === 'refused') return;
    if (this.frames.length > 0) this.cut();
    // A snapshot waiting to be written is superseded by a newer one: segments carry a replay across it.
    const superseded = this.queue.filter((f, i) => f.header.kind === 'snapshot' && (i > 0 || !this.writing));
    for (const f of superseded) this.drop(f);
    const atMs = this.now();
    this.enqueue({ name: snapshotName(lsn, atMs), header: { kind: 'snapshot', lsn, atMs }, body: image, toLsn: lsn, bytes: image.length, oldestAckMs: atMs });
    this.awaitingBase = false;
  }

  /**
   * A document's file was put in place (before the transaction that records it commits): it is
   * copied to the archive ahead of the segment that will hold its row.
   */
  documentStored(id: string, file: string): void {
    if (this.closed || this.status.state === 'refused' || this.awaitingBase) return;
    const atMs = this.now();
    this.enqueue({ name: documentName(id), header: { kind: 'document', id, atMs }, body: () => readFileIfPresent(file), toLsn: -1, bytes: 0, oldestAckMs: atMs });
  }

  /** Ships what is gathered and waits (bounded) for the writer: at a clean stop. */
  async close(waitMs = 5_000): Promise<void> {
    if (this.frames.length > 0) this.cut();
    const done = this.drain();
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
    this.closed = true;
    if (this.cutTimer) clearTimeout(this.cutTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** Resolves once every file handed over so far is written (or the archive failed). */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private cut(): void {
    if (this.cutTimer) clearTimeout(this.cutTimer);
    this.cutTimer = null;
    if (this.frames.length === 0) return;
    const header: ArchiveHeader = { kind: 'segment', fromLsn: this.fromLsn, toLsn: this.toLsn, startsNumbering: this.startsNumbering, acks: this.acks };
    const lastAck = this.acks.at(-1)![1];
    this.enqueue({ name: segmentName(this.fromLsn, this.toLsn, lastAck), header, body: this.frames, toLsn: this.toLsn, bytes: this.framesBytes, oldestAckMs: this.acks[0]![1] });
    this.frames = [];
    this.framesBytes = 0;
    this.acks = [];
  }

  private enqueue(file: PendingFile): void {
    this.queue.push(file);
    this.queueBytes += file.bytes;
    if (this.queueBytes > PENDING_LIMIT_BYTES && this.status.state === 'failing') {
      // Memory is not the archive: let go, and start again from a snapshot once it can be written.
      for (const f of [...this.queue]) if (!(this.writing && f === this.queue[0])) this.drop(f);
      this.awaitingBase = true;
      this.log('error', 'archive: unwritten segments dropped; the archive resumes from a fresh snapshot once it can be written', {
        archiveDir: this.settings.dir,
        limitBytes: PENDING_LIMIT_BYTES,
      });
      return;
    }
    this.kick();
  }

  /** Starts the writer when there is something to write, it is not running or waiting to retry, and start() has run. */
  private kick(): void {
    if (this.host && this.queue.length > 0 && !this.writing && !this.retryTimer && !this.closed) this.writing = this.writeLoop();
  }

  private drop(file: PendingFile): void {
    const i = this.queue.indexOf(file);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.queueBytes -= file.bytes;
    }
  }

  private async writeLoop(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.closed) {
        this.coalesceHead();
        const file = this.queue[0]!;
        try {
          await this.write(file);
        } catch (err) {
          this.failed(err as Error);
          return;
        }
        this.drop(file);
        this.succeeded(file);
      }
    } finally {
      this.writing = null;
    }
    if (this.lastRetentionMs + RETENTION_EVERY_MS <= this.now()) await this.applyRetention();
  }

  /**
   * Segments that queued up behind a slow write (a disk whose fsyncs take seconds under load) go
   * out as one file, as the journal's group commit does: one write and two fsyncs however many
   * there are, so a backlog shrinks instead of growing by a file per cut. Only a run that continues
   * one numbering (a replay could not start inside a merged file) and up to COALESCE_LIMIT_BYTES.
   */
  private coalesceHead(): void {
    const head = this.queue[0]!;
    if (head.header.kind !== 'segment' || !Array.isArray(head.body)) return;
    let end = 1;
    let bytes = head.bytes;
    for (; end < this.queue.length; end++) {
      const next = this.queue[end]!;
      const previous = this.queue[end - 1]!.header;
      if (next.header.kind !== 'segment' || next.header.startsNumbering || previous.kind !== 'segment' || next.header.fromLsn !== previous.toLsn + 1) break;
      if (bytes + next.bytes > COALESCE_LIMIT_BYTES) break;
      bytes += next.bytes;
    }
    if (end === 1) return;
    const run = this.queue.slice(0, end);
    const headers = run.map((f) => f.header as SegmentHeader);
    const acks = headers.flatMap((h) => h.acks);
    const merged: PendingFile = {
      name: segmentName(headers[0]!.fromLsn, headers.at(-1)!.toLsn, acks.at(-1)![1]),
      header: { kind: 'segment', fromLsn: headers[0]!.fromLsn, toLsn: headers.at(-1)!.toLsn, startsNumbering: headers[0]!.startsNumbering, acks },
      body: run.flatMap((f) => f.body as readonly Buffer[]),
      toLsn: headers.at(-1)!.toLsn,
      bytes,
      oldestAckMs: head.oldestAckMs,
    };
    this.queue.splice(0, end, merged);
  }

  private async write(file: PendingFile): Promise<void> {
    const dir = this.settings.dir;
    const body = typeof file.body === 'function' ? await file.body() : file.body instanceof Uint8Array ? file.body : Buffer.concat(file.body as Buffer[]);
    if (body === null) return; // a document deleted before it was copied: no restore point after its row needs it
    const partial = join(dir, file.name + PARTIAL_SUFFIX);
    try {
      const started = performance.now();
      await writeFileDurable(partial, encodeArchiveFile(file.header, body));
      await naming('rename', partial, () => rename(partial, join(dir, file.name)));
      await syncDir(dir);
      this.recentWrites.add(performance.now() - started);
    } catch (err) {
      await rm(partial, { force: true }).catch(() => {});
      throw err;
    }
  }

  private succeeded(file: PendingFile): void {
    const recovered = this.status.state === 'failing';
    this.status.archivedLsn = Math.max(this.status.archivedLsn, file.toLsn);
    this.status.lastSuccessMs = this.now();
    this.retryMs = RETRY_MIN_MS;
    if (recovered) {
      this.status.state = 'ok';
      this.status.problem = null;
      this.log('info', 'archive: writing again', { archiveDir: this.settings.dir, archivedLsn: this.status.archivedLsn });
    }
  }

  private failed(err: Error): void {
    const first = this.status.state !== 'failing';
    this.status.state = 'failing';
    this.status.problem = err.message;
    if (first) this.log('error', 'archive: a file could not be written; the service goes on serving and the archive catches up when it can', { archiveDir: this.settings.dir, err: err.message });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.awaitingBase && this.queue.length === 0) this.host?.requestSnapshot();
      else this.kick();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }

  private refuse(problem: string): void {
    this.status.state = 'refused';
    this.status.problem = problem;
    this.frames = [];
    this.framesBytes = 0;
    this.acks = [];
    this.queue = [];
    this.queueBytes = 0;
    this.log('error', `archive: refused: ${problem}`, { archiveDir: this.settings.dir });
  }

  private async applyRetention(): Promise<void> {
    this.lastRetentionMs = this.now();
    try {
      const doomed = retentionPlan(listArchive(await readdir(this.settings.dir)), this.now(), this.settings.retentionMs);
      for (const name of doomed) await rm(join(this.settings.dir, name), { force: true });
      if (doomed.length > 0) await syncDir(this.settings.dir);
    } catch (err) {
      this.log('warn', 'archive: retention could not delete old files; it tries again later', { archiveDir: this.settings.dir, err: (err as Error).message });
    }
  }
}

async function readFileIfPresent(file: string): Promise<Buffer | null> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
