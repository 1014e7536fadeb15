/**
 * Applies the PostgreSQL migrations (src/store/migrations/postgres/) under a session-level advisory
 * lock, so that instances starting together take turns and each step runs once.
 */
import type pg from 'pg';
import { applyMigrations, loadMigrations } from '../core/migrate.ts';

/** Any constant shared by every instance of the service: the key of the migration advisory lock. */
const MIGRATION_LOCK_KEY = 727_274_13;

export async function applyMigrationsLocked(
  connect: () => Promise<pg.PoolClient>,
  migrationsDir: string,
  log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void,
): Promise<void> {
  const migrations = await loadMigrations(migrationsDir);
  if (migrations === null) {
    log('warn', 'migrations directory not found', { migrationsDir });
    return;
  }
  const client = await connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)');
      const applied = await applyMigrations(
        {
          appliedVersions: async () => new Set((await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version)),
          apply: async (m) => {
            await client.query('BEGIN');
            try {
              await client.query(m.sql);
              await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [m.version, new Date().toISOString()]);
              await client.query('COMMIT');
            } catch (err) {
              await client.query('ROLLBACK');
              throw err;
            }
          },
        },
        migrations,
        (msg, fields) => log('warn', msg, fields),
      );
      if (applied.length > 0) log('info', 'migrations applied', { versions: applied });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}
