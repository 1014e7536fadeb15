/**
 * Memory made from what is durable: at open, the snapshot plus the journal's records after it (a
 * torn tail is set aside, never destroyed); while running, the same again after a failed write
 * (rebuildFromDisk), so that a transaction that was never acknowledged is never shown.
 */
import { readFile, truncate } from 'node:fs/promises';
import { StoreCorruptionError } from '../core/errors.ts';
import { naming, syncDir, type FaultInjector } from '../core/files.ts';
import type { Checkpoints } from './checkpoints.ts';
import type { Connection } from './connection.ts';
import type { EngineFiles, EngineLog } from './dataDir.ts';
import type { DegradedMode } from './degradedMode.ts';
import { Journal, recoverJournal, type JournalOptions } from './journal.ts';
import { parseJournal, type JournalRecord } from './journalRecords.ts';
import { describe, sameSnapshot, type Manifest } from './manifest.ts';
import { RECOVERY_HINT } from './opening.ts';
import type { Memo } from './rowMemo.ts';

/** What recovery needs of the engine; it sets the journal and the LSN. */
export interface RecoveryHost {
  readonly connection: Connection;
  readonly checkpoints: Checkpoints;
  readonly health: DegradedMode;
  readonly memo: Memo;
  readonly files: EngineFiles;
  readonly faults: FaultInjector | undefined;
  readonly log: EngineLog;
  journal: Journal;
  lsn: number;
  earlierFsyncs: number;
  journalOptions(): JournalOptions;
}

/** At open, before the store is shared: replays the journal over the snapshot, then checkpoints if it replayed anything. */
export async function recover(host: RecoveryHost, manifest: Manifest | null): Promise<void> {
  const { files, checkpoints } = host;
  const snapshotLsn = host.connection.init();
  host.lsn = snapshotLsn;
  if (checkpoints.onDisk) {
    checkpoints.snapshotLsn = snapshotLsn;
    if (checkpoints.onDisk.lsn !== snapshotLsn) checkpoints.onDisk = { ...checkpoints.onDisk, lsn: snapshotLsn };
  }

  const recovered = await recoverJournal(files.journal, host.faults);
  if (!recovered.existed && manifest && !manifest.clean) {
    throw new StoreCorruptionError(
      `${files.journal} is missing, and ${files.manifest} says the service did not stop cleanly: the writes acknowledged after ` +
        `the snapshot (lsn ${snapshotLsn}) would be lost. Restore journal.log (or the whole data directory) from a backup; ` +
        RECOVERY_HINT,
    );
  }
  if (recovered.tornBytes > 0) {
    host.log('error', 'torn journal tail set aside: the last record was cut short (a crash during a write) and was not replayed', {
      bytes: recovered.tornBytes,
      journal: files.journal,
      keptIn: recovered.setAsidePath,
    });
  }
  const replayed = replayAll(host, recovered.records, snapshotLsn);
  host.journal = await Journal.open(files.journal, recovered.goodBytes, host.lsn, host.journalOptions());
  if (!recovered.existed) await syncDir(files.dir);
  // From here until a clean stop, a missing journal would lose acknowledged writes.
  await checkpoints.writeManifest(false);
  host.log('info', 'store opened', { snapshotLsn, replayed, skipped: recovered.records.length - replayed, lsn: host.lsn });
  if (recovered.records.length > 0) await checkpoints.write();
}

/**
 * Replaces memory with what is durable: the snapshot plus the journal's whole records. A failed
 * append may have left part of a record in the journal, and its transactions are in memory but
 * were never acknowledged: both go. Runs inside the queue.
 */
export async function rebuildFromDisk(host: RecoveryHost): Promise<void> {
  const { files, checkpoints } = host;
  await checkpoints.snapshotting;
  const durableBytes = host.journal.bytes;
  host.earlierFsyncs += host.journal.fsyncs;
  const before = host.lsn;
  await host.journal.close().catch(() => {});
  await naming('truncate', files.journal, () => truncate(files.journal, durableBytes));
  const onDisk = checkpoints.onDisk;
  const image = onDisk ? await readFile(files.snapshot) : null;
  if (image && onDisk && !sameSnapshot(await describe(image, onDisk.lsn), onDisk)) {
    throw new StoreCorruptionError(`${files.snapshot} changed on disk while the service was running`);
  }
  const records = parseJournal(await readFile(files.journal), files.journal).records;
  host.memo.clear();
  host.connection.replace(image);
  const snapshotLsn = host.connection.init();
  host.lsn = snapshotLsn;
  replayAll(host, records, snapshotLsn);
  host.journal = await Journal.open(files.journal, durableBytes, host.lsn, host.journalOptions());
  host.health.needsRebuild = false;
  host.log('warn', 'memory rebuilt from disk after a failed write; the unacknowledged transactions were dropped', {
    lsn: host.lsn,
    dropped: before - host.lsn,
  });
}

/** Replays the records after the snapshot; returns how many were applied. */
function replayAll(host: RecoveryHost, records: JournalRecord[], snapshotLsn: number): number {
  let replayed = 0;
  for (const record of records) {
    if (record.lsn <= snapshotLsn && host.lsn === snapshotLsn) continue; // already in the snapshot
    if (record.lsn !== host.lsn + 1) {
      throw new StoreCorruptionError(
        `${host.files.journal}: record lsn ${record.lsn} does not follow lsn ${host.lsn} (snapshot at ${snapshotLsn}); snapshot and journal do not match`,
      );
    }
    replay(host.connection, record);
    host.lsn = record.lsn;
    replayed++;
  }
  return replayed;
}

/** Applies one journal record as its own transaction (at open, in a rebuild, and in a restore from the archive). */
export function replay(connection: Connection, record: JournalRecord): void {
  connection.control('BEGIN');
  try {
    for (const op of record.ops) {
      if (op.kind === 'exec') connection.exec(op.sql);
      else connection.execute(op.sql, op.params, 'run');
    }
    connection.control('COMMIT');
  } catch (err) {
    connection.rollback();
    throw new StoreCorruptionError(`journal replay failed at lsn ${record.lsn}: ${(err as Error).message}`, { cause: err });
  }
}
