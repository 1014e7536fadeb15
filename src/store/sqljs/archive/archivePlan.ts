/**
 * The archive directory's names, and the two decisions made from them alone (no file is read):
 * which files a restore to a point needs (restorePlan), and which files retention may delete
 * (retentionPlan). A name carries what these decisions need, so that a week of segments is planned
 * from a directory listing: `snapshot-<lsn>-<atMs>.mosarc`, `segment-<fromLsn>-<toLsn>-<lastAckMs>.mosarc`
 * (numbers zero-padded, so the names sort in LSN order).
 */

const ARCHIVE_SUFFIX = '.mosarc';
/** A file being written: renamed to its name once whole and fsynced, so a name is always a whole file. */
export const PARTIAL_SUFFIX = '.partial';

interface ArchivedSnapshot {
  name: string;
  lsn: number;
  atMs: number;
}

export interface ArchivedSegment {
  name: string;
  fromLsn: number;
  toLsn: number;
  lastAckMs: number;
}

export interface ArchiveListing {
  snapshots: ArchivedSnapshot[];
  segments: ArchivedSegment[];
}

const pad = (n: number) => String(n).padStart(16, '0');

export function snapshotName(lsn: number, atMs: number): string {
  return `snapshot-${pad(lsn)}-${pad(atMs)}${ARCHIVE_SUFFIX}`;
}

export function segmentName(fromLsn: number, toLsn: number, lastAckMs: number): string {
  return `segment-${pad(fromLsn)}-${pad(toLsn)}-${pad(lastAckMs)}${ARCHIVE_SUFFIX}`;
}

/** A document's file in the archive (not part of any LSN range: restore takes those the restored database names). */
export function documentName(id: string): string {
  return `document-${id}${ARCHIVE_SUFFIX}`;
}

const SNAPSHOT_NAME = /^snapshot-(\d{16})-(\d{16})\.mosarc$/;
const SEGMENT_NAME = /^segment-(\d{16})-(\d{16})-(\d{16})\.mosarc$/;

/** The archive files among `names`, in LSN order; other names (partial files, an operator's notes) are left out. */
export function listArchive(names: readonly string[]): ArchiveListing {
  const snapshots: ArchivedSnapshot[] = [];
  const segments: ArchivedSegment[] = [];
  for (const name of names) {
    const snapshot = SNAPSHOT_NAME.exec(name);
    if (snapshot) snapshots.push({ name, lsn: Number(snapshot[1]), atMs: Number(snapshot[2]) });
    const segment = SEGMENT_NAME.exec(name);
    if (segment && Number(segment[1]) <= Number(segment[2])) segments.push({ name, fromLsn: Number(segment[1]), toLsn: Number(segment[2]), lastAckMs: Number(segment[3]) });
  }
  snapshots.sort((a, b) => a.lsn - b.lsn || a.atMs - b.atMs);
  segments.sort((a, b) => a.fromLsn - b.fromLsn || a.toLsn - b.toLsn);
  return { snapshots, segments };
}

/** The newest LSN the archive holds (-1 when it holds nothing). */
export function lastArchivedLsn(listing: ArchiveListing): number {
  const lastSegment = listing.segments.at(-1)?.toLsn ?? -1;
  const lastSnapshot = listing.snapshots.at(-1)?.lsn ?? -1;
  return Math.max(lastSegment, lastSnapshot);
}

export interface RestorePlan {
  snapshot: ArchivedSnapshot;
  /** In order, from the snapshot's LSN + 1; the last one may run past `toLsn` (its later records are left out). */
  segments: ArchivedSegment[];
  toLsn: number;
}

/** Why the archive cannot restore to the point asked for, with what it could restore to instead. */
export class ArchiveGapError extends Error {}

/**
 * The snapshot and segments that restore to `toLsn` (default: the last archived LSN): the newest
 * snapshot at or before it, then every segment after that snapshot up to it, contiguous. A missing
 * LSN range is named, and nothing past it is restored.
 */
export function restorePlan(listing: ArchiveListing, toLsn?: number): RestorePlan {
  const last = lastArchivedLsn(listing);
  if (last < 0) throw new ArchiveGapError('the archive holds no snapshot and no segment');
  const target = toLsn ?? last;
  if (target > last) throw new ArchiveGapError(`the archive ends at lsn ${last}; it holds nothing up to lsn ${target}`);
  const snapshot = listing.snapshots.filter((s) => s.lsn <= target).at(-1);
  if (!snapshot) {
    const first = listing.snapshots[0];
    throw new ArchiveGapError(`the archive has no snapshot at or before lsn ${target}` + (first ? ` (its first is at lsn ${first.lsn})` : ' (it holds no snapshot)'));
  }
  const segments: ArchivedSegment[] = [];
  let next = snapshot.lsn + 1;
  while (next <= target) {
    const segment = listing.segments.find((s) => s.fromLsn === next);
    if (!segment) {
      const after = listing.segments.find((s) => s.fromLsn > next);
      const missing = after ? `lsn ${next} to ${after.fromLsn - 1}` : `lsn ${next} onwards`;
      throw new ArchiveGapError(
        `the archive has a gap: ${missing} is missing (a segment deleted or never written), so it cannot restore past lsn ${next - 1}. ` +
          `Restore to --to-lsn ${next - 1} or earlier, or to a point after the gap that a later snapshot covers`,
      );
    }
    segments.push(segment);
    next = segment.toLsn + 1;
  }
  return { snapshot, segments, toLsn: target };
}

/**
 * The LSN of the last write acknowledged at or before `atMs`, as far as the names tell: a snapshot
 * taken by then, or a segment whose last batch was acknowledged by then. Returns also the segment
 * whose batches straddle the moment (its header's marks settle it), or null.
 */
export function lsnByNames(listing: ArchiveListing, atMs: number): { lsn: number; straddling: ArchivedSegment | null } {
  let lsn = -1;
  for (const s of listing.snapshots) if (s.atMs <= atMs) lsn = Math.max(lsn, s.lsn);
  for (const s of listing.segments) if (s.lastAckMs <= atMs) lsn = Math.max(lsn, s.toLsn);
  const straddling = listing.segments.find((s) => s.fromLsn === lsn + 1 && s.lastAckMs > atMs) ?? null;
  return { lsn, straddling };
}

/**
 * The files retention may delete: everything older than the newest snapshot taken before the start
 * of the window (`nowMs - retentionMs`), which stays as the base the window's oldest moment
 * restores from. Without such a snapshot nothing is deleted, so a kept segment never loses its base.
 */
export function retentionPlan(listing: ArchiveListing, nowMs: number, retentionMs: number): string[] {
  const windowStart = nowMs - retentionMs;
  const base = listing.snapshots.filter((s) => s.atMs <= windowStart).at(-1);
  if (!base) return [];
  return [
    ...listing.snapshots.filter((s) => s.lsn < base.lsn || (s.lsn === base.lsn && s.atMs < base.atMs)).map((s) => s.name),
    ...listing.segments.filter((s) => s.toLsn <= base.lsn).map((s) => s.name),
  ];
}
