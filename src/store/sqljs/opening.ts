/**
 * The checks at open that refuse a data directory rather than serve it wrong: a snapshot the
 * manifest does not vouch for, or a directory that has held data but lost its snapshot.
 */
import { join } from 'node:path';
import { StoreCorruptionError } from '../core/errors.ts';
import { exists, type EngineFiles } from './dataDir.ts';
import { MANIFEST_FILE, describe, describeSnapshot, sameSnapshot, type Manifest, type SnapshotDescriptor } from './manifest.ts';

export const RECOVERY_HINT = 'see README "Recovering a data directory"';

/**
 * Checks snapshot.db against the manifest; returns what it holds (null: no snapshot, a new or
 * never checkpointed directory). Refuses a missing, empty or changed snapshot with a message
 * naming the file and what was expected.
 */
export async function verifySnapshot(files: EngineFiles, image: Buffer | null, manifest: Manifest | null, keyFileInDir: string | null): Promise<SnapshotDescriptor | null> {
  const expected = [manifest?.snapshot, manifest?.pending].filter((d): d is SnapshotDescriptor => !!d);
  if (manifest) {
    if (image === null) {
      if (expected.length === 0) return null;
      throw new StoreCorruptionError(
        `${files.snapshot} is missing, but ${files.manifest} records a snapshot (${describeSnapshot(expected[0]!)}). ` +
          `The service will not start empty: restore snapshot.db from a backup; ${RECOVERY_HINT}`,
      );
    }
    const found = await describe(image, 0);
    const match = expected.find((d) => sameSnapshot(d, found));
    if (!match) {
      const want = expected.length ? describeSnapshot(expected[0]!) : 'no snapshot at all';
      throw new StoreCorruptionError(
        `${files.snapshot} does not match ${files.manifest}: expected ${want}; found ${found.bytes} bytes` +
          (found.bytes === 0 ? ' (an empty file)' : `, sha256 ${found.sha256}`) +
          `. The file was changed or damaged; refusing to start rather than serve it. Restore it from a backup; ${RECOVERY_HINT}`,
      );
    }
    return match;
  }
  // No manifest: a directory made before manifests existed, or a new one.
  if (image !== null) {
    if (image.length === 0) {
      throw new StoreCorruptionError(`${files.snapshot} is empty (0 bytes); refusing to start with an empty database. Restore it from a backup; ${RECOVERY_HINT}`);
    }
    return await describe(image, 0);
  }
  const evidence = [keyFileInDir, join(files.dir, 'documents')].filter((p): p is string => p !== null);
  for (const path of evidence) {
    if (await exists(path)) {
      throw new StoreCorruptionError(
        `${files.dir} has held data (${path} exists) but has neither ${MANIFEST_FILE} nor snapshot.db; refusing to start empty. ` +
          `Restore them from a backup; ${RECOVERY_HINT}`,
      );
    }
  }
  return null;
}
