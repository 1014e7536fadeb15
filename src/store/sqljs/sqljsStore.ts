/**
 * The durable embedded engine: sql.js (SQLite compiled to WebAssembly, in memory) made
 * durable by a write-ahead journal and periodic snapshots.
 *
 * - Every committed write transaction is one journal record (its write statements and bound
 *   parameters), fsynced before the transaction resolves; concurrent commits share fsyncs
 *   (engine.ts, journal.ts, journalRecords.ts).
 * - A checkpoint exports the whole database to `snapshot.db` (atomically, via rename) and
 *   empties the journal (checkpoints.ts). `manifest.json` records the snapshot's LSN, size and
 *   SHA-256 (manifest.ts): a changed, missing or empty snapshot refuses to open instead of being
 *   served or replaced by an empty one (opening.ts).
 * - At open: load and verify the snapshot, replay the journal (a torn tail is set aside, never
 *   destroyed; recovery.ts), checkpoint, apply migrations, seal any secret not sealed under the
 *   current key (keyRotation.ts).
 * - A failed write to disk (a full disk) degrades the store instead of stopping it
 *   (degradedMode.ts): writes refused, reads served, back to normal by itself.
 * - Everything (transactions, reads, checkpoints) runs through one FIFO queue (writeQueue.ts).
 * - The data directory is 0700 and every file in it 0600 (dataDir.ts, lock.ts).
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from 'sql.js';
import { StorageWriteError, StoreCorruptionError } from '../core/errors.ts';
import { SECRETS_KEY_FILE, loadKeyring } from '../core/sealing.ts';
import { loadSqlJs } from './connection.ts';
import { engineFiles, prepareDataDir, readOptional, removeLeftovers } from './dataDir.ts';
import { PROBE_FILE } from './degradedMode.ts';
import { Archiver } from './archive/archiver.ts';
import { SqlJsEngine } from './engine.ts';
import { finishInterruptedRotation } from './keyRotation.ts';
import { acquireLock } from './lock.ts';
import { MANIFEST_FILE, readManifest } from './manifest.ts';
import { RECOVERY_HINT, verifySnapshot } from './opening.ts';
import type { SqlJsStore, SqlJsStoreOptions } from './types.ts';

export { lockHolderPid } from './lock.ts';
export type { FaultInjector } from '../core/files.ts';
export type { SqlJsStore, SqlJsStoreExtra, SqlJsStoreOptions } from './types.ts';

const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/sqlite/', import.meta.url));

/** Opens (creating if needed) the data directory and returns the durable store. */
export async function openSqlJsStore(options: SqlJsStoreOptions): Promise<SqlJsStore> {
  const share = options.checkpointJournalShare;
  if (share !== undefined && !(Number.isFinite(share) && share >= 0)) throw new RangeError(`checkpointJournalShare must be a finite number >= 0, not ${share}`);
  const dir = resolve(options.dataDir);
  await prepareDataDir(dir, options.onLog);
  const lock = await acquireLock(dir, (pid) => options.onLog?.('warn', 'taking over stale lock', { dataDir: dir, stalePid: pid }));
  const files = engineFiles(dir);
  let db: Database | undefined;
  let engine: SqlJsEngine | undefined;
  try {
    const { SQL, patched } = await loadSqlJs();
    if (!patched.fileGrowth || !patched.exportBuffer || !patched.databaseFile) {
      options.onLog?.('warn', 'this sql.js version was not recognised: a large database is copied in memory more often, and checkpoints hold requests longer (sqlJsLoader.ts)', { dataDir: dir, ...patched });
    }
    await removeLeftovers(files, PROBE_FILE);
    const manifest = await readManifest(dir);
    const image = await readOptional(files.snapshot);
    const secrets = options.secrets ?? {};
    const keyFile = resolve(secrets.keyFile ?? join(dir, SECRETS_KEY_FILE));
    const keyFileInDir = secrets.key ? null : keyFile.startsWith(dir + '/') ? keyFile : null;
    const onDisk = await verifySnapshot(files, image, manifest, keyFileInDir);
    if (image && !manifest) options.onLog?.('warn', `no ${MANIFEST_FILE} yet: adopting snapshot.db as it is`, { dataDir: dir, bytes: image.length });
    try {
      db = image ? new SQL.Database(image) : new SQL.Database();
      engine = new SqlJsEngine(SQL, db, onDisk, files, lock, options);
      if (options.archive) {
        engine.archiver = new Archiver(options.archive, engine.log);
        await engine.archiver.open();
      }
      await engine.recover(manifest);
      // Before the migrations write anything: the archive's base is the store as it opened.
      await engine.archiver?.start(engine, engine.lsn, () => readOptional(files.snapshot));
    } catch (err) {
      if (image && !(err instanceof StoreCorruptionError) && !(err instanceof StorageWriteError) && /not a database|malformed/i.test((err as Error).message)) {
        throw new StoreCorruptionError(`${files.snapshot} is not a valid SQLite database; ${RECOVERY_HINT}`, { cause: err });
      }
      throw err;
    }
    // The key file comes after the manifest: a key file in DATA_DIR proves the directory was initialised.
    const loaded = await loadKeyring(dir, secrets, options.faults);
    engine.keyring = loaded.keyring;
    engine.keySource = { keyFile: loaded.keyFile };
    await engine.migrate(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
    if (loaded.nextKey && loaded.keyFile) {
      await finishInterruptedRotation(engine, loaded.keyFile, loaded.nextKey);
      options.onLog?.('warn', 'finished an interrupted secrets key rotation', { dataDir: dir, keyId: engine.keyring.primaryKeyId });
    } else {
      await engine.sealSecrets();
    }
    return engine;
  } catch (err) {
    if (engine) await engine.dispose();
    else {
      db?.close();
      lock.release();
    }
    throw err;
  }
}
