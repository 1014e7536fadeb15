/**
 * `backup` and `restore` of the embedded store (docs/operators/backups.md). `backup` runs inside
 * the server when one holds the data directory (through the admin socket: the copy is taken while
 * it serves), or opens the store itself when none does. `restore` never touches a store: it
 * verifies the file and writes a new data directory, which the service then opens as any other.
 */
import { isAbsolute } from 'node:path';
import { AdminCommandError, type AdminCommand } from './command.ts';

/** Loaded when a backup command runs: every other command of the command line starts without it. */
const backups = () => import('../services/backups.ts');

/** `restore --from-archive`: the point asked for, checked, then the archive's restore (store/sqljs/archive/restoreArchive.ts). */
async function restoreArchive(dir: string, dataDir: string, toLsn: string | undefined, toTime: string | undefined): Promise<Record<string, unknown>> {
  if (toLsn !== undefined && toTime !== undefined) throw new AdminCommandError('give --to-lsn or --to-time, not both');
  const target: { lsn?: number; atMs?: number } = {};
  if (toLsn !== undefined) {
    if (!/^\d{1,15}$/.test(toLsn)) throw new AdminCommandError(`--to-lsn must be a whole number, got "${toLsn}"`);
    target.lsn = Number(toLsn);
  }
  if (toTime !== undefined) {
    // An offset is required: a local time would restore to a different moment on another machine.
    const atMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(toTime) ? Date.parse(toTime) : NaN;
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

export const backupCommands: Record<string, AdminCommand> = {
  backup: {
    description:
      'Write a consistent copy of the embedded store (database at one LSN, documents) to a new file, with its checksum, while the service runs; ' +
      '--include-key also puts the sealing key and the bank secret in it. On PostgreSQL, use pg_dump (docs/operators/backups.md).',
    flags: {
      to: { required: true, description: 'the backup file to create (it must not exist)' },
      'include-key': { description: 'include the key files (alone or =true; default false: keep them apart, see docs/operators/backups.md)' },
    },
    paths: ['to'],
    timeoutMs: 30 * 60_000,
    async run(ctx, flags) {
      const { BackupInvalidError, KeyNotInFileError, embeddedStore, takeBackup } = await backups();
      const store = embeddedStore(ctx);
      if (!store) {
        throw new AdminCommandError(
          'backup copies the embedded store; this service runs on PostgreSQL (DATABASE_URL): back it up with pg_dump, or a base backup with WAL archiving, as docs/operators/backups.md shows',
        );
      }
      const includeKey = flags['include-key'] ?? 'false';
      if (includeKey !== 'true' && includeKey !== 'false') throw new AdminCommandError(`--include-key must be true or false, got "${includeKey}"`);
      if (!isAbsolute(flags.to!)) throw new AdminCommandError(`--to must be an absolute path, got "${flags.to}"`);
      try {
        return { ...(await takeBackup(ctx, store, flags.to!, includeKey === 'true')) };
      } catch (err) {
        if (err instanceof BackupInvalidError || err instanceof KeyNotInFileError) throw new AdminCommandError(err.message);
        throw err;
      }
    },
  },
  restore: {
    description:
      'Verify a backup file (--from), or an archive (--from-archive) up to a point, then restore it into an empty (or new) data directory; start the service on that directory afterwards.',
    flags: {
      from: { description: 'the backup file' },
      'from-archive': { description: 'the archive directory (ARCHIVE_DIR of the store to bring back)' },
      'data-dir': { required: true, description: 'the directory to restore into (empty or new)' },
      'to-lsn': { description: 'with --from-archive: restore up to and including this LSN (default: the last archived write)' },
      'to-time': { description: 'with --from-archive: restore every write acknowledged at or before this moment (ISO 8601 with its offset, e.g. 2026-12-07T10:15:00Z)' },
    },
    paths: ['from', 'from-archive', 'data-dir'],
    offline: true,
    async run(_ctx, flags) {
      if ((flags.from === undefined) === (flags['from-archive'] === undefined)) throw new AdminCommandError('give one of --from FILE (a backup) or --from-archive DIR (an archive)');
      if (flags['from-archive'] !== undefined) return { ...(await restoreArchive(flags['from-archive'], flags['data-dir']!, flags['to-lsn'], flags['to-time'])) };
      if (flags['to-lsn'] !== undefined || flags['to-time'] !== undefined) throw new AdminCommandError('--to-lsn and --to-time go with --from-archive; a backup restores to its own LSN');
      const { BackupInvalidError, restoreFromBackup } = await backups();
      try {
        return { ...(await restoreFromBackup(flags.from!, flags['data-dir']!)) };
      } catch (err) {
        if (err instanceof BackupInvalidError) throw new AdminCommandError(err.message);
        throw err;
      }
    },
  },
};
