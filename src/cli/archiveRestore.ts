/**
 * `restore --from-archive DIR [--to-lsn N | --to-time ISO]`: the point asked for, checked, then the
 * archive's restore (store/sqljs/archive/restoreArchive.ts); loaded only when it runs.
 */
import { AdminCommandError } from './command.ts';

/** An ISO 8601 time with its offset: a local time would restore to another moment on another machine. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

export async function restoreArchive(dir: string, dataDir: string, toLsn: string | undefined, toTime: string | undefined): Promise<Record<string, unknown>> {
  if (toLsn !== undefined && toTime !== undefined) throw new AdminCommandError('give --to-lsn or --to-time, not both');
  const target: { lsn?: number; atMs?: number } = {};
  if (toLsn !== undefined) {
    if (!/^\d{1,15}$/.test(toLsn)) throw new AdminCommandError(`--to-lsn must be a whole number, got "${toLsn}"`);
    target.lsn = Number(toLsn);
  }
  if (toTime !== undefined) {
    const atMs = ISO_WITH_OFFSET.test(toTime) ? Date.parse(toTime) : NaN;
    if (Number.isNaN(atMs)) throw new AdminCommandError(`--to-time must be an ISO 8601 time with its offset (2026-12-07T10:15:00Z), got "${toTime}"`);
    target.atMs = atMs;
  }
  const { ArchiveRestoreError, restoreFromArchive } = await import('../store/sqljs/archive/restoreArchive.ts');
  try {
    return { ...(await restoreFromArchive(dir, dataDir, target)) };
  } catch (err) {
    if (err instanceof ArchiveRestoreError) throw new AdminCommandError(err.message);
    throw err;
  }
}
