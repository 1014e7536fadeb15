/**
 * What a backup's entries must be beyond a whole, unchanged file (backupFile.ts checks that): a
 * database image that SQLite opens and finds sound, at the LSN the header says, naming every
 * document the backup holds, and key files that are keys. Run by `backup verify` and before every
 * restore, so that a restore never writes a data directory the service would refuse to open.
 */
import type { Database } from 'sql.js';
import { decodeSecretsKey } from '../core/sealing.ts';
import { BackupInvalidError, type VerifiedBackup } from './backupFile.ts';
import { loadSqlJs } from './connection.ts';

function single(db: Database, sql: string): unknown {
  return db.exec(sql)[0]?.values[0]?.[0];
}

/** Throws BackupInvalidError naming the first thing wrong with the backup read from `path`. */
export async function checkBackupContents(path: string, backup: VerifiedBackup): Promise<void> {
  const refuse: (why: string) => never = (why) => {
    throw new BackupInvalidError(`${path} is not a usable backup: ${why}. Nothing was restored.`);
  };
  const { SQL } = await loadSqlJs();
  let db: Database | null = null;
  try {
    try {
      db = new SQL.Database(backup.contents[0]!);
      const integrity = db.exec('PRAGMA integrity_check').flatMap((r) => r.values.map((v) => String(v[0])));
      if (integrity.join() !== 'ok') refuse(`its database fails SQLite's integrity check (${integrity.slice(0, 3).join('; ')})`);
    } catch (err) {
      if (err instanceof BackupInvalidError) throw err;
      refuse(`its database does not open as SQLite (${(err as Error).message})`);
    }
    let lsn: unknown;
    let documentIds: Set<string>;
    try {
      lsn = single(db, 'SELECT last_lsn FROM _engine_meta WHERE id = 1');
      documentIds = new Set((db.exec('SELECT id FROM documents')[0]?.values ?? []).map((v) => String(v[0])));
    } catch (err) {
      refuse(`its database is not one of this service (${(err as Error).message})`);
    }
    if (Number(lsn) !== backup.header.lsn) refuse(`its database holds LSN ${String(lsn)}, its header says ${backup.header.lsn}`);
    for (const entry of backup.header.entries) {
      if (entry.kind === 'document' && !documentIds.has(entry.name.slice('documents/'.length))) refuse(`it holds ${entry.name}, which its database does not name`);
    }
  } finally {
    db?.close();
  }
  backup.header.entries.forEach((entry, i) => {
    if (entry.name !== 'secrets.key') return;
    try {
      decodeSecretsKey(backup.contents[i]!.toString('utf8'), entry.name);
    } catch (err) {
      refuse(`its ${entry.name} is not a key (${(err as Error).message})`);
    }
  });
}
