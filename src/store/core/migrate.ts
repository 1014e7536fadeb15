/**
 * Schema migrations: plain `NNN_name.sql` files applied in numeric order, each once, tracked
 * in `schema_migrations(version, applied_at)` where version is the numeric prefix ("001").
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Migration {
  version: string;
  file: string;
  sql: string;
}

export const SCHEMA_MIGRATIONS_DDL =
  'CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)';

const FILE_PATTERN = /^(\d+)_[A-Za-z0-9_.-]+\.sql$/;

/** The migration files of `dir` in order; null when the directory does not exist. */
export async function loadMigrations(dir: string): Promise<Migration[] | null> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const found: { num: number; version: string; file: string }[] = [];
  for (const file of names) {
    if (!file.endsWith('.sql')) continue;
    const m = FILE_PATTERN.exec(file);
    if (!m) throw new Error(`migration file ${join(dir, file)} is not named NNN_name.sql`);
    found.push({ num: Number(m[1]), version: m[1]!, file });
  }
  found.sort((a, b) => a.num - b.num);
  for (let i = 1; i < found.length; i++) {
    if (found[i]!.num === found[i - 1]!.num) {
      throw new Error(`migrations ${found[i - 1]!.file} and ${found[i]!.file} share version ${found[i]!.version}`);
    }
  }
  return Promise.all(
    found.map(async ({ version, file }) => ({ version, file, sql: await readFile(join(dir, file), 'utf8') })),
  );
}

export interface MigrationTarget {
  appliedVersions(): Promise<Set<string>>;
  /** Runs the file's SQL and records the version, in one journalled write transaction. */
  apply(migration: Migration): Promise<void>;
}

/** Applies every migration of `dir` not yet applied; returns the versions applied now. */
export async function applyMigrations(
  target: MigrationTarget,
  migrations: Migration[],
  warn: (msg: string, fields: Record<string, unknown>) => void,
): Promise<string[]> {
  const applied = await target.appliedVersions();
  const known = new Set(migrations.map((m) => m.version));
  const unknown = [...applied].filter((v) => !known.has(v));
  if (unknown.length > 0) warn('database has migrations that no file describes', { versions: unknown });
  const done: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    try {
      await target.apply(migration);
    } catch (err) {
      throw new Error(`migration ${migration.file} failed: ${(err as Error).message}`, { cause: err });
    }
    done.push(migration.version);
  }
  return done;
}
