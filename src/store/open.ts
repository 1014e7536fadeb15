/**
 * Opens the store the configuration names: PostgreSQL when DATABASE_URL is set (several instances
 * may share it), else the embedded sql.js engine in DATA_DIR (one process). The service, the admin
 * command line, tests and benchmarks all open it here.
 */
import { openSqlJsStore } from './engine/sqljsStore.ts';
import { openPgStore } from './postgres/pgStore.ts';
import type { Store } from './store.ts';

export type EngineLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What both engines offer beyond Store: a checkpoint (a no-op on PostgreSQL) and a write counter. */
export type OpenedStore = Store & {
  checkpoint(): Promise<void>;
  stats(): { lsn: number };
};

export interface OpenStoreOptions {
  dataDir: string;
  database: { url: string | null; poolMax: number };
  onLog?: (level: EngineLogLevel, msg: string, fields: Record<string, unknown>) => void;
}

export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  if (options.database.url !== null) {
    return openPgStore({
      url: options.database.url,
      poolMax: options.database.poolMax,
      ...(options.onLog ? { onLog: options.onLog } : {}),
    });
  }
  return openSqlJsStore({ dataDir: options.dataDir, ...(options.onLog ? { onLog: options.onLog } : {}) });
}
