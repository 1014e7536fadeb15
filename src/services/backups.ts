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
import { checkBackupContents } from '../store/sqljs/backupCheck.ts';
import { BackupInvalidError, readBackupFile, restoreBackup, writeBackupFile, type BackupSource, type VerifiedBackup } from '../store/sqljs/backupFile.ts';
import { backupCheckKeys } from '../store/sqljs/backupKeys.ts';
import type { SecretsKeyOptions } from '../store/core/sealing.ts';
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
  /** The id of the sealing key whose derived key made the file's HMAC. */
  hmacKeyId: string | null;
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
  const written = await writeBackupFile(to, { lsn, createdAt, includesKey: includeKey }, sources, store.backupHmacKey());
  const skippedDocuments = written.skipped.filter((name) => name.startsWith('documents/')).map((name) => name.slice('documents/'.length));
  if (skippedDocuments.length > 0) ctx.log.warn({ skippedDocuments }, 'backup: documents deleted while it was taken are not in it');
  // Not in the audit log: a backup copies the whole store, no one account's data, and the audit
  // log has a chain per account environment only. The operator's record is this line (and the shell's history).
  ctx.log.info({ file: to, lsn, sha256: written.sha256, hmacKeyId: written.hmacKeyId, includesKey: includeKey, documents: documentIds.length - skippedDocuments.length }, 'backup taken');
  return {
    file: to,
    lsn,
    sha256: written.sha256,
    hmacKeyId: written.hmacKeyId,
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

/** Where the keys that check a backup's HMAC come from, and whether a file they cannot check is taken. */
export interface BackupCheckOptions {
  dataDir: string;
  secrets: SecretsKeyOptions;
  /** The operator's kept key file (`--key-file`), used instead of the configured keys. */
  keyFile: string | null;
  /** `--accept-unauthenticated`: take a file whose HMAC the loaded keys cannot check. */
  acceptUnauthenticated: boolean;
}

export interface BackupChecked {
  file: string;
  format: number;
  lsn: number;
  sha256: string;
  createdAt: string;
  includesKey: boolean;
  documents: number;
  /** `verified`, or `not checked` with the reason. */
  hmac: string;
}

function refuse(from: string, why: string): never {
  throw new BackupInvalidError(`${from} is not a usable backup: ${why}. Nothing was restored.`);
}

/**
 * The rule for the HMAC: with a sealing key loaded, a backup must carry an HMAC made with a loaded
 * key, unless the operator accepts one that cannot be checked; a wrong HMAC is refused before this
 * (backupFile.ts). With no key loaded there is nothing to check it with, and the answer says so.
 */
function hmacVerdict(from: string, backup: VerifiedBackup, source: string | null, accept: boolean): string {
  if (backup.authentication === 'verified') return `verified (sealing key ${backup.hmacKeyId})`;
  if (source === null) return 'not checked: no sealing key loaded (give --key-file, or set SECRETS_KEY or SECRETS_KEY_FILE); the checksum shows the file is undamaged, not who wrote it';
  const why =
    backup.authentication === 'absent'
      ? `the file has none (${backup.layout === 1 ? 'a backup of the first format, written before backups had one' : 'written without a key'})`
      : `it was made with sealing key ${backup.hmacKeyId}, which is not loaded (keys from ${source})`;
  if (!accept) refuse(from, `its HMAC cannot be checked: ${why}. Give the key it was made with (--key-file), or, knowing where the file comes from, --accept-unauthenticated`);
  return `not checked (accepted with --accept-unauthenticated): ${why}`;
}

/** Reads and checks the backup at `from` completely (form, checksum, HMAC, entries, database, LSN) without writing anything. */
async function checkedBackup(from: string, options: BackupCheckOptions): Promise<{ backup: VerifiedBackup; summary: BackupChecked }> {
  let keys: Awaited<ReturnType<typeof backupCheckKeys>>;
  try {
    keys = await backupCheckKeys(options.dataDir, options.secrets, options.keyFile);
  } catch (err) {
    throw new BackupInvalidError(`cannot load the key to check the backup with: ${(err as Error).message}`);
  }
  const backup = await readBackupFile(from, keys?.keyring ?? null);
  const hmac = hmacVerdict(from, backup, keys?.source ?? null, options.acceptUnauthenticated);
  await checkBackupContents(from, backup);
  const { header } = backup;
  const summary: BackupChecked = {
    file: from,
    format: header.format,
    lsn: header.lsn,
    sha256: backup.sha256,
    createdAt: header.createdAt,
    includesKey: header.includesKey,
    documents: header.entries.filter((e) => e.kind === 'document').length,
    hmac,
  };
  return { backup, summary };
}

/** `backup verify`: the whole check of a restore, writing nothing. */
export async function verifyBackup(from: string, options: BackupCheckOptions): Promise<BackupChecked> {
  return (await checkedBackup(from, options)).summary;
}

/** Checks the backup at `from` completely (nothing is written when it fails), then restores it into `dataDir` (empty or new). */
export async function restoreFromBackup(from: string, dataDir: string, options: BackupCheckOptions): Promise<BackupChecked & { dataDir: string }> {
  const { backup, summary } = await checkedBackup(from, options);
  await restoreBackup(backup, dataDir);
  return { dataDir, ...summary };
}
