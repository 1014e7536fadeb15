/**
 * `backup` and `restore` of the embedded store (docs/operators/backups.md). `backup` runs inside
 * the server when one holds the data directory (through the admin socket: the copy is taken while
 * it serves), or opens the store itself when none does. `restore` never touches a store: it
 * verifies the file and writes a new data directory, which the service then opens as any other.
 */
import { isAbsolute } from 'node:path';
import { loadConfig } from '../config.ts';
import type { BackupCheckOptions } from '../services/backups.ts';
import { restoreArchive } from './archiveRestore.ts';
import { AdminCommandError, type AdminCommand, type Flags } from './command.ts';

/** Loaded when a backup command runs: every other command of the command line starts without it. */
const backups = () => import('../services/backups.ts');

const CHECK_FLAGS = {
  'key-file': { description: 'the sealing key file to check the HMAC with (default SECRETS_KEY, else SECRETS_KEY_FILE or DATA_DIR/secrets.key when it exists)' },
  'accept-unauthenticated': {
    description: 'with a key loaded, take a file whose HMAC it cannot check (one of the first format, or made with another key); a wrong HMAC is refused regardless',
  },
};

function checkOptions(flags: Flags): BackupCheckOptions {
  const accept = flags['accept-unauthenticated'] ?? 'false';
  if (accept !== 'true' && accept !== 'false') throw new AdminCommandError(`--accept-unauthenticated must be true or false, got "${accept}"`);
  // An offline command has no context: the keys come from the same settings the service reads.
  const config = loadConfig();
  return { dataDir: config.dataDir, secrets: config.secrets, keyFile: flags['key-file'] ?? null, acceptUnauthenticated: accept === 'true' };
}

async function refusing(run: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const { BackupInvalidError } = await backups();
  try {
    return await run();
  } catch (err) {
    if (err instanceof BackupInvalidError) throw new AdminCommandError(err.message);
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
  'backup verify': {
    description:
      'Check a backup file completely without writing anything: its form, checksum and HMAC, every entry, that its database opens and passes ' +
      'SQLite\'s integrity check, at the LSN it says. Exits 2 naming what is wrong.',
    flags: {
      file: { required: true, description: 'the backup file (or give it as the last word: backup verify FILE)' },
      ...CHECK_FLAGS,
    },
    argument: 'file',
    paths: ['file', 'key-file'],
    offline: true,
    async run(_ctx, flags) {
      const { verifyBackup } = await backups();
      return refusing(async () => ({ ...(await verifyBackup(flags.file!, checkOptions(flags))) }));
    },
  },
  restore: {
    description:
      'Check a backup file completely (as backup verify) and restore it, or restore an archive (--from-archive) up to a point; into an empty (or new) data directory. Start the service on that directory afterwards.',
    flags: {
      from: { description: 'the backup file' },
      'from-archive': { description: 'the archive directory (ARCHIVE_DIR of the store to bring back)' },
      'data-dir': { required: true, description: 'the directory to restore into (empty or new)' },
      'to-lsn': { description: 'with --from-archive: restore up to and including this LSN (default: the last archived write)' },
      'to-time': { description: 'with --from-archive: restore every write acknowledged at or before this moment (ISO 8601 with its offset, e.g. 2026-12-07T10:15:00Z)' },
      ...CHECK_FLAGS,
    },
    paths: ['from', 'from-archive', 'data-dir', 'key-file'],
    offline: true,
    async run(_ctx, flags) {
      if ((flags.from === undefined) === (flags['from-archive'] === undefined)) throw new AdminCommandError('give one of --from FILE (a backup) or --from-archive DIR (an archive)');
      if (flags['from-archive'] !== undefined) return restoreArchive(flags['from-archive'], flags['data-dir']!, flags['to-lsn'], flags['to-time']);
      if (flags['to-lsn'] !== undefined || flags['to-time'] !== undefined) throw new AdminCommandError('--to-lsn and --to-time go with --from-archive; a backup restores to its own LSN');
      const { restoreFromBackup } = await backups();
      return refusing(async () => ({ ...(await restoreFromBackup(flags.from!, flags['data-dir']!, checkOptions(flags))) }));
    },
  },
};
