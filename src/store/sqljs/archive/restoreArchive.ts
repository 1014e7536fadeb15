/**
 * A restore from the continuous archive into a new data directory: the newest snapshot at or
 * before the point asked for, the archived journal replayed over it up to that point, and the
 * documents the restored database names. Every file it uses is verified before anything is
 * written; a gap in the archive is named, and nothing past it is restored.
 *
 * The result is a checkpointed data directory (snapshot.db, a manifest that vouches for it and
 * says it stopped cleanly, documents/): the service opens it as any other. Like a backup, the
 * archive holds neither key file: put them in before the first start (docs/operators/backups.md).
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DIR_MODE, syncDir, writeFileDurable } from '../../core/files.ts';
import { Connection, loadSqlJs } from '../connection.ts';
import { engineFiles, exists } from '../dataDir.ts';
import { parseJournal, type JournalRecord } from '../journalRecords.ts';
import { describe, writeManifest } from '../manifest.ts';
import { replay } from '../recovery.ts';
import { ArchiveFileError, DOCUMENT_ID, decodeArchiveFile, type ArchiveFile } from './archiveFile.ts';
import { ArchiveGapError, documentName, listArchive, lsnByNames, restorePlan } from './archivePlan.ts';

/** Why an archive cannot be restored as asked: nothing was written. */
export class ArchiveRestoreError extends Error {}

export interface ArchiveTarget {
  /** Restore up to and including this LSN. */
  lsn?: number;
  /** Restore every write acknowledged at or before this moment (ms since the epoch), and none after. */
  atMs?: number;
}

export interface ArchiveRestored {
  dataDir: string;
  lsn: number;
  snapshotLsn: number;
  segments: number;
  documents: number;
  /** Documents the restored database names whose file the archive does not hold (deleted before it was copied). */
  missingDocuments: string[];
}

async function readVerified(dir: string, name: string): Promise<ArchiveFile> {
  try {
    return decodeArchiveFile(await readFile(join(dir, name)));
  } catch (err) {
    if (err instanceof ArchiveFileError) throw new ArchiveRestoreError(`${join(dir, name)} is not a usable archive file: ${err.message}. Nothing was restored.`);
    throw err;
  }
}

/** The LSN that a restore to `atMs` ends at: the last write acknowledged by then. */
async function lsnAt(dir: string, listing: ReturnType<typeof listArchive>, atMs: number): Promise<number> {
  let { lsn, straddling } = lsnByNames(listing, atMs);
  if (straddling) {
    const file = await readVerified(dir, straddling.name);
    if (file.header.kind !== 'segment') throw new ArchiveRestoreError(`${straddling.name} does not hold a segment`);
    for (const [ackLsn, ackMs] of file.header.acks) if (ackMs <= atMs) lsn = Math.max(lsn, ackLsn);
  }
  if (lsn < 0) throw new ArchiveRestoreError(`the archive holds nothing acknowledged at or before ${new Date(atMs).toISOString()}`);
  return lsn;
}

export async function restoreFromArchive(archiveDir: string, dataDir: string, target: ArchiveTarget = {}): Promise<ArchiveRestored> {
  if (await exists(dataDir)) {
    const present = await readdir(dataDir);
    if (present.length > 0) throw new ArchiveRestoreError(`${dataDir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}); restore into an empty or new directory`);
  }
  const names = await readdir(archiveDir).catch((err: NodeJS.ErrnoException) => {
    throw new ArchiveRestoreError(`cannot read the archive ${archiveDir}: ${err.code ?? err.message}`);
  });
  const listing = listArchive(names);
  const toLsn = target.atMs !== undefined ? await lsnAt(archiveDir, listing, target.atMs) : target.lsn;
  let plan;
  try {
    plan = restorePlan(listing, toLsn);
  } catch (err) {
    if (err instanceof ArchiveGapError) throw new ArchiveRestoreError(`${archiveDir}: ${err.message}. Nothing was restored.`);
    throw err;
  }

  // Verify everything first.
  const snapshot = await readVerified(archiveDir, plan.snapshot.name);
  if (snapshot.header.kind !== 'snapshot' || snapshot.header.lsn !== plan.snapshot.lsn) throw new ArchiveRestoreError(`${plan.snapshot.name}: its header does not match its name`);
  const bodies: Buffer[] = [];
  for (const [i, segment] of plan.segments.entries()) {
    const file = await readVerified(archiveDir, segment.name);
    const h = file.header;
    if (h.kind !== 'segment' || h.fromLsn !== segment.fromLsn || h.toLsn !== segment.toLsn) throw new ArchiveRestoreError(`${segment.name}: its header does not match its name`);
    if (i === 0 && !h.startsNumbering) throw new ArchiveRestoreError(`${segment.name} does not start a replay after the snapshot at lsn ${plan.snapshot.lsn} (the archive was written by another store?)`);
    bodies.push(file.body);
  }
  const journal = Buffer.concat(bodies);
  let records: JournalRecord[];
  try {
    const parsed = parseJournal(journal, 'the archived journal');
    if (parsed.goodBytes !== journal.length) throw new Error(`${journal.length - parsed.goodBytes} bytes after the last whole record`);
    records = parsed.records.filter((r) => r.lsn <= plan.toLsn);
  } catch (err) {
    throw new ArchiveRestoreError(`the archived journal after lsn ${plan.snapshot.lsn} cannot be read: ${(err as Error).message}. Nothing was restored.`);
  }

  // Replay in memory, then check the result before writing it.
  const { SQL } = await loadSqlJs();
  const image = snapshot.body.length > 0 ? snapshot.body : null;
  const connection = new Connection(SQL, image ? new SQL.Database(image) : new SQL.Database(), true);
  try {
    let lsn = connection.init();
    if (lsn !== plan.snapshot.lsn) throw new ArchiveRestoreError(`${plan.snapshot.name} holds lsn ${lsn}, not the ${plan.snapshot.lsn} its name says`);
    for (const record of records) {
      if (record.lsn !== lsn + 1) throw new ArchiveRestoreError(`the archived journal jumps from lsn ${lsn} to ${record.lsn}`);
      replay(connection, record);
      lsn = record.lsn;
    }
    if (lsn !== plan.toLsn) throw new ArchiveRestoreError(`the archived journal ends at lsn ${lsn}, before lsn ${plan.toLsn}`);
    const integrity = connection.execute('PRAGMA integrity_check', [], 'values') as unknown[][];
    if (integrity[0]?.[0] !== 'ok') throw new ArchiveRestoreError(`the restored database fails PRAGMA integrity_check: ${String(integrity[0]?.[0])}`);
    const documentIds = connection.existingTables().has('documents')
      ? (connection.execute('SELECT id FROM documents', [], 'values') as unknown[][]).map((row) => String(row[0]))
      : [];
    const restoredImage = connection.export(lsn);

    await mkdir(dataDir, { recursive: true, mode: DIR_MODE });
    const missingDocuments: string[] = [];
    let documents = 0;
    if (documentIds.length > 0) await mkdir(join(dataDir, 'documents'), { mode: DIR_MODE });
    for (const id of documentIds) {
      const name = documentName(id);
      if (!DOCUMENT_ID.test(id) || !names.includes(name)) {
        missingDocuments.push(id);
        continue;
      }
      const file = await readVerified(archiveDir, name);
      if (file.header.kind !== 'document' || file.header.id !== id) throw new ArchiveRestoreError(`${name}: its header does not match its name`);
      await writeFileDurable(join(dataDir, 'documents', id), file.body);
      documents++;
    }
    if (documentIds.length > 0) await syncDir(join(dataDir, 'documents'));
    await writeFileDurable(engineFiles(dataDir).snapshot, restoredImage);
    await writeManifest(dataDir, { snapshot: await describe(restoredImage, lsn), pending: null, clean: true });
    return { dataDir, lsn, snapshotLsn: plan.snapshot.lsn, segments: plan.segments.length, documents, missingDocuments };
  } finally {
    connection.close();
  }
}
