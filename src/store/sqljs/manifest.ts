/**
 * `DATA_DIR/manifest.json`: what the data directory must hold. Written atomically (temporary file,
 * fsync, rename) whenever it changes, it records:
 *
 * - `snapshot`: the snapshot `snapshot.db` must be (its LSN, size and SHA-256), or null before the
 *   first checkpoint. A directory with a manifest never opens empty: a missing, empty or changed
 *   snapshot refuses to start with a message naming the file and what was expected.
 * - `pending`: during a checkpoint, the snapshot about to be renamed into place. A crash between
 *   the rename and the next manifest write leaves a snapshot that matches `pending`: it is adopted.
 * - `clean`: true only after a clean stop (journal emptied by the final checkpoint). A missing
 *   `journal.log` is harmless then; after an unclean stop it would lose acknowledged writes, so the
 *   store refuses to start.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreCorruptionError } from '../core/errors.ts';
import { replaceFileDurable, sha256, type FaultInjector } from '../core/files.ts';

export const MANIFEST_FILE = 'manifest.json';
const FORMAT = 1;

export interface SnapshotDescriptor {
  /** The last LSN the snapshot contains. */
  lsn: number;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: number;
  snapshot: SnapshotDescriptor | null;
  pending: SnapshotDescriptor | null;
  clean: boolean;
}

function isDescriptor(value: unknown): value is SnapshotDescriptor {
  const d = value as SnapshotDescriptor;
  return (
    typeof d === 'object' && d !== null && Number.isSafeInteger(d.lsn) && d.lsn >= 0 &&
    Number.isSafeInteger(d.bytes) && d.bytes >= 0 && typeof d.sha256 === 'string' && /^[0-9a-f]{64}$/.test(d.sha256)
  );
}

/** The manifest of `dir`, or null when there is none (a new directory, or one made before manifests). */
export async function readManifest(dir: string): Promise<Manifest | null> {
  const path = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let raw: Partial<Manifest>;
  try {
    raw = JSON.parse(text) as Partial<Manifest>;
  } catch {
    throw new StoreCorruptionError(`${path} is damaged (not valid JSON); restore it from a backup (see README "Recovering a data directory")`);
  }
  const valid =
    raw && raw.format === FORMAT && typeof raw.clean === 'boolean' &&
    (raw.snapshot === null || isDescriptor(raw.snapshot)) && (raw.pending === null || raw.pending === undefined || isDescriptor(raw.pending));
  if (!valid) throw new StoreCorruptionError(`${path} is damaged (unexpected content); restore it from a backup (see README "Recovering a data directory")`);
  return { format: FORMAT, snapshot: raw.snapshot ?? null, pending: raw.pending ?? null, clean: raw.clean! };
}

export async function writeManifest(dir: string, manifest: Omit<Manifest, 'format'>, faults?: FaultInjector): Promise<void> {
  const body = JSON.stringify({ format: FORMAT, ...manifest, writtenAt: new Date().toISOString() }, null, 2) + '\n';
  await replaceFileDurable(join(dir, MANIFEST_FILE), Buffer.from(body, 'utf8'), dir, faults);
}

export function describeSnapshot(d: SnapshotDescriptor): string {
  return `lsn ${d.lsn}, ${d.bytes} bytes, sha256 ${d.sha256}`;
}

export async function describe(image: Uint8Array, lsn: number): Promise<SnapshotDescriptor> {
  return { lsn, bytes: image.length, sha256: await sha256(image) };
}

export function sameSnapshot(a: SnapshotDescriptor, b: SnapshotDescriptor): boolean {
  return a.sha256 === b.sha256 && a.bytes === b.bytes;
}
