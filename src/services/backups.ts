/**
 * Online backups of the embedded store, and their restore (docs/operators/backups.md). A backup is
 * taken while the service runs and accepts writes: the database image at one LSN is copied in
 * memory inside the store's queue (the only moment writes wait), then written to the file, with the
 * documents' files the image names and, only when the operator asks, the key files. On PostgreSQL
 * there is nothing to copy here: pg_dump or a base backup does it (the same page).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BANK_SECRET_FILE } from '../banks/secrets.ts';
import type { AppContext } from '../context.ts';
import { readDocumentFile } from '../store/documentFiles.ts';
import { allDocumentIds } from '../store/documents.ts';
import { readBackupFile, restoreBackup, writeBackupFile, type BackupSource } from '../store/sqljs/backupFile.ts';
import type { SqlJsStore } from '../store/sqljs/types.ts';

export { BackupInvalidError } from '../store/sqljs/backupFile.ts';

/** The embedded store of the context, or null on PostgreSQL (whose backups are pg_dump's). */
export function embeddedStore(ctx: AppContext): SqlJsStore | null {
  return 'backupImage' in ctx.store ? (ctx.store as SqlJsStore) : null;
}

async function readOptional(file: string): Promise<Buffer | null> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export interface BackupTaken {
  file: string;
  lsn: number;
  sha256: string;
  bytes: number;
  createdAt: string;
  includesKey: boolean;
  documents: number;
  /** Documents whose files were deleted between the copy and their reading (their rows are in the copy). */
  skippedDocuments: string[];
}

/**
 * Takes a backup of the embedded store to `to` (an absolute path that must not exist). With
 * `includeKey`, the key that seals secrets (its key file; refused when it comes from SECRETS_KEY)
 * and the bank secret file travel in it too.
 */
export async function takeBackup(ctx: AppContext, store: SqlJsStore, to: string, includeKey: boolean): Promise<BackupTaken> {
  const createdAt = ctx.clock.now().toISOString();
  const { image, lsn, read: documentIds } = await store.backupImage((db) => allDocumentIds(db));
  const sources: BackupSource[] = [{ kind: 'database', name: 'snapshot.db', read: async () => image }];
  for (const id of documentIds) sources.push({ kind: 'document', name: `documents/${id}`, read: () => readDocumentFile(ctx.config.dataDir, id) });
  if (includeKey) {
    const keyFile = store.keySource.keyFile;
    if (keyFile === null) throw new KeyNotInFileError();
    sources.push({ kind: 'key', name: 'secrets.key', read: () => readFile(keyFile) });
    if (ctx.config.bank.secret === null) sources.push({ kind: 'key', name: BANK_SECRET_FILE, read: () => readOptional(path.join(ctx.config.dataDir, BANK_SECRET_FILE)) });
  }
  const written = await writeBackupFile(to, { lsn, createdAt, includesKey: includeKey }, sources);
  const skippedDocuments = written.skipped.filter((name) => name.startsWith('documents/')).map((name) => name.slice('documents/'.length));
  if (skippedDocuments.length > 0) ctx.log.warn({ skippedDocuments }, 'backup: documents deleted while it was taken are not in it');
  // Not in the audit log: a backup copies the whole store, no one account's data, and the audit
  // log has a chain per account environment only. The operator's record is this line (and the shell's history).
  ctx.log.info({ file: to, lsn, sha256: written.sha256, includesKey: includeKey, documents: documentIds.length - skippedDocuments.length }, 'backup taken');
  return {
    file: to,
    lsn,
    sha256: written.sha256,
    bytes: written.bytes,
    createdAt,
    includesKey: includeKey,
    documents: documentIds.length - skippedDocuments.length,
    skippedDocuments,
  };
}

/** --include-key with the key in SECRETS_KEY: there is no key file to put in the backup. */
export class KeyNotInFileError extends Error {
  constructor() {
    super('the sealing key comes from SECRETS_KEY, not a key file: keep SECRETS_KEY with your backups yourself, and take the backup without --include-key');
    this.name = 'KeyNotInFileError';
  }
}

/** Verifies the backup at `from` (nothing is written when it fails), then restores it into `dataDir` (empty or new). */
export async function restoreFromBackup(from: string, dataDir: string): Promise<{ dataDir: string; lsn: number; sha256: string; includesKey: boolean; documents: number; createdAt: string }> {
  const backup = await readBackupFile(from);
  await restoreBackup(backup, dataDir);
  const { header } = backup;
  return {
    dataDir,
    lsn: header.lsn,
    sha256: backup.sha256,
    includesKey: header.includesKey,
    documents: header.entries.filter((e) => e.kind === 'document').length,
    createdAt: header.createdAt,
  };
}
