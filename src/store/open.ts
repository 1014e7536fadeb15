/**
 * Opens the store the configuration names: PostgreSQL when DATABASE_URL is set (several instances
 * may share it), else the embedded sql.js engine in DATA_DIR (one process). The service, the admin
 * command line, tests and benchmarks all open it here.
 */
import { mkdir } from 'node:fs/promises';
import { loadKeyring, type SecretsKeyOptions } from './core/sealing.ts';
import { openSqlJsStore } from './sqljs/sqljsStore.ts';
import { openPgStore } from './postgres/pgStore.ts';
import type { Store } from './store.ts';

type EngineLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What both engines offer beyond Store: a checkpoint (a no-op on PostgreSQL) and a write counter. */
export type OpenedStore = Store & {
  checkpoint(): Promise<void>;
  stats(): { lsn: number };
  /** True when other processes may use the same database at once (PostgreSQL). */
  readonly sharedByInstances?: boolean;
};

export interface OpenStoreOptions {
  dataDir: string;
  database: { url: string | null; poolMax: number; exportWorkers?: number; pooler?: 'transaction' | null; sessionUrl?: string | null; replicaUrls?: string[]; readYourWritesMs?: number; replicaMaxLagMs?: number };
  /** The key that seals secrets at rest (SECRETS_KEY…); on PostgreSQL every instance needs the same one. */
  secrets?: SecretsKeyOptions;
  /** sql.js only: how often a store degraded by a failed disk write tries again. */
  storageProbeIntervalMs?: number;
  onLog?: (level: EngineLogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** sql.js only: continuous archiving to `dir` (ARCHIVE_DIR…); null or absent: off. */
  archive?: { dir: string | null; maxDelayMs: number; retentionDays: number };
}

export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  if (options.database.url !== null) {
    // Without SECRETS_KEY the key file lives in DATA_DIR (one instance; several need SECRETS_KEY, see docs/operators/postgresql.md).
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    const { keyring, keyFile } = await loadKeyring(options.dataDir, options.secrets ?? {});
    if (options.archive?.dir) options.onLog?.('warn', 'ARCHIVE_DIR is ignored on PostgreSQL: archive its WAL instead (docs/operators/backups.md)', { archiveDir: options.archive.dir });
    return openPgStore({
      url: options.database.url,
      poolMax: options.database.poolMax,
      ...(options.database.exportWorkers === undefined ? {} : { exportWorkers: options.database.exportWorkers }),
      pooler: options.database.pooler ?? null,
      sessionUrl: options.database.sessionUrl ?? null,
      replicas: { urls: options.database.replicaUrls ?? [], readYourWritesMs: options.database.readYourWritesMs ?? 2000, maxLagMs: options.database.replicaMaxLagMs ?? 5000 },
      sealer: keyring,
      sealerOrigin: keyFile === null ? 'SECRETS_KEY' : `the key file ${keyFile}, as SECRETS_KEY is unset`,
      keyFile,
      ...(options.onLog ? { onLog: options.onLog } : {}),
    });
  }
  return openSqlJsStore({
    dataDir: options.dataDir,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.storageProbeIntervalMs !== undefined ? { storageProbeIntervalMs: options.storageProbeIntervalMs } : {}),
    ...(options.onLog ? { onLog: options.onLog } : {}),
    ...(options.archive?.dir
      ? { archive: { dir: options.archive.dir, maxDelayMs: options.archive.maxDelayMs, retentionMs: options.archive.retentionDays * 24 * 60 * 60 * 1000 } }
      : {}),
  });
}
