/** The embedded store's public face: its options, its figures, and what it offers beyond Store. */
import type { FaultInjector } from '../core/files.ts';
import type { BackupHmacKey } from './backupKeys.ts';
import type { SecretsKeyOptions } from '../core/sealing.ts';
import type { SqlExecutor, Store } from '../store.ts';
import type { ArchiveSettings, ArchiveStatus } from './archive/archiver.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface SqlJsStoreOptions {
  dataDir: string;
  /** Directory of `NNN_name.sql` migrations; default `src/store/migrations/sqlite`. */
  migrationsDir?: string;
  /** Journal size that calls for a background checkpoint however small the database; default 64 MiB. */
  checkpointBytes?: number;
  /**
   * Journal bytes per byte of the last snapshot that call for a background checkpoint, where that
   * is more than checkpointBytes; default 0.25 (see checkpointThreshold). 0 keeps to checkpointBytes.
   */
  checkpointJournalShare?: number;
  onLog?: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** The key that seals secrets at rest; default: the key file DATA_DIR/secrets.key, created on first start. */
  secrets?: SecretsKeyOptions;
  /** How often a degraded store tries a write again (default 1000 ms); also sets the Retry-After of its refusals. */
  storageProbeIntervalMs?: number;
  /** Continuous archiving of every journal batch and snapshot to another directory (ARCHIVE_DIR); off when absent. */
  archive?: ArchiveSettings;
  /** Tests only: a fault-injecting file layer (e.g. a simulated full disk). */
  faults?: FaultInjector;
  /**
   * Tests only: false runs every statement through sql.js's Statement and Database.run(), the path
   * the engine takes when sql.js no longer offers what rawStatements.ts needs, so that path stays tested.
   */
  rawStatements?: boolean;
}

export interface StoreStats {
  /** Bytes durably in the journal since the last checkpoint. */
  journalBytes: number;
  /** LSN of the last committed write transaction. */
  lsn: number;
  /** LSN of the last write transaction known durable. */
  durableLsn: number;
  /** Durable journal writes since open (each an fsync; group commit makes them far fewer than commits). */
  fsyncs: number;
  checkpoints: number;
}

/** `ok`, or `degraded` (a write to disk failed: writes refused, reads served), or `closed`. */
export type StorageState = 'ok' | 'degraded' | 'closed';

export interface SqlJsStoreExtra {
  /** Writes a snapshot and empties the journal (queued like a transaction). */
  checkpoint(): Promise<void>;
  stats(): StoreStats;
  storageState(): StorageState;
  /** The database's size in memory, in bytes (its pages); 0 once closed. */
  databaseBytes(): number;
  /**
   * Seals every secret under a new key. With a key file: writes the new key beside it, re-seals,
   * then replaces the file. With SECRETS_KEY from the environment this is refused (change the
   * environment instead: see docs/operators/storage-and-recovery.md#secrets-at-rest).
   */
  rotateSecretsKey(): Promise<{ keyId: string; previousKeyId: string; resealed: number; keyFile: string }>;
  /**
   * The database image at one LSN for a backup, and what `alsoRead` read of the same state
   * (engine.ts: taken in the queue, resolved once durable).
   */
  backupImage<T>(alsoRead: (db: SqlExecutor) => Promise<T>): Promise<{ image: Uint8Array; lsn: number; read: T }>;
  /** The key a backup's HMAC is made with (derived from the sealing key: derivedKeys.ts). */
  backupHmacKey(): BackupHmacKey;
  /** The key file in use (null when the key comes from SECRETS_KEY). */
  readonly keySource: { keyFile: string | null };
  /** The continuous archive's state, lag and last success; null when ARCHIVE_DIR is not set. */
  archiveStatus(): ArchiveStatus | null;
  /** Where the sealing key comes from, its id, and how many sealed values there are. */
  secretsStatus(): Promise<{ keyId: string; source: 'environment' | 'file'; keyFile: string | null; sealedValues: number }>;
}

export type SqlJsStore = Store & SqlJsStoreExtra;
