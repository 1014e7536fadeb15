/**
 * Both engines' schemas have the same tables and the same columns (in the same order), so the
 * repositories' SQL means the same on each. Engine-internal tables are named here, with why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openSqlJsStore, type SqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { openPgStore, type PgStore } from '../../src/store/postgres/pgStore.ts';
import { newSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';

/** sql.js only: the engine's own bookkeeping (the LSN in the snapshot). */
const SQLJS_ONLY = ['_engine_meta'];
/**
 * PostgreSQL only: what sql.js keeps on disk (document bytes, the sealing key beside the data in
 * its key file) or in its one process (rate-limit counters).
 */
const POSTGRES_ONLY = ['document_chunks', 'rate_limit_counters', 'secrets_key'];
/** PostgreSQL only: the migrations that make those tables (007_shared_instance_state.sql, 011_secrets_key.sql). */
const POSTGRES_ONLY_MIGRATIONS = ['007', '011'];

let dir: string;
let sqljs: SqlJsStore;
let database: TempDatabase;
let pg: PgStore;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mos-schema-'));
  sqljs = await openSqlJsStore({ dataDir: dir });
  database = await testDatabase();
  pg = await openPgStore({ url: database.url, poolMax: 2, sealer: new SecretKeyring(newSecretsKey(), []) });
});
afterAll(async () => {
  await sqljs?.close();
  await pg?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function sqliteSchema(): Promise<Record<string, string[]>> {
  return sqljs.read(async (db) => {
    const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const schema: Record<string, string[]> = {};
    for (const { name } of tables) {
      if (SQLJS_ONLY.includes(name)) continue;
      schema[name] = (await db.all<{ name: string }>(`PRAGMA table_info(${name})`)).map((c) => c.name);
    }
    return schema;
  });
}

async function postgresSchema(): Promise<Record<string, string[]>> {
  return pg.read(async (db) => {
    const columns = await db.all<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
        ORDER BY c.table_name, c.ordinal_position`,
    );
    const schema: Record<string, string[]> = {};
    for (const { table_name: table, column_name: column } of columns) {
      if (POSTGRES_ONLY.includes(table)) continue;
      (schema[table] ??= []).push(column);
    }
    return schema;
  });
}

describe('schemas', () => {
  it('sql.js and PostgreSQL have the same tables with the same columns', async () => {
    const [lite, postgres] = await Promise.all([sqliteSchema(), postgresSchema()]);
    expect(Object.keys(lite).length).toBeGreaterThan(15);
    expect(postgres).toEqual(lite);
  });

  it('PostgreSQL records the same migration versions as sql.js, plus its own', async () => {
    const lite = await sqljs.read((db) => db.all<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version'));
    const postgres = await pg.read((db) => db.all<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version'));
    const versions = postgres.map((r) => r.version);
    // Its own may sit between shared ones (007, then 009 on both engines): compared without them.
    expect(versions).toEqual(expect.arrayContaining(POSTGRES_ONLY_MIGRATIONS));
    expect(versions.filter((v) => !POSTGRES_ONLY_MIGRATIONS.includes(v))).toEqual(lite.map((r) => r.version));
  });
});
