/**
 * The two migration sets are paired step for step: the same versions (but for the engine-only
 * steps named below), and after each step the same tables with the same columns in the same order,
 * so that the repositories' SQL means the same on either engine. The sqlite set is applied to a
 * sql.js database; PostgreSQL's is read from its SQL text (no server needed: this runs in the
 * default project). test/postgres/schema.test.ts checks the schemas the two engines really build.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import initSqlJs, { type Database } from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, type Migration } from '../../../src/store/core/migrate.ts';

const SQLITE_DIR = fileURLToPath(new URL('../../../src/store/migrations/sqlite/', import.meta.url));
const POSTGRES_DIR = fileURLToPath(new URL('../../../src/store/migrations/postgres/', import.meta.url));

/**
 * Steps only PostgreSQL takes, with the tables they make. Each holds what the embedded engine
 * keeps outside its database, or needs no table for, because it runs as one process.
 */
const POSTGRES_ONLY_STEPS: Record<string, string[]> = {
  // Document bytes (sql.js keeps them as files in DATA_DIR) and rate-limit counters (sql.js counts
  // in its one process); on PostgreSQL every instance shares both.
  '007': ['document_chunks', 'rate_limit_counters'],
  // The sealing key's id, so an instance started with another SECRETS_KEY refuses to start; sql.js
  // has one process and its key file beside the data.
  '011': ['secrets_key'],
};
/** Steps only sql.js takes: none so far. */
const SQLITE_ONLY_STEPS: Record<string, string[]> = {};

type Schema = Record<string, string[]>;

let sqlite: Migration[];
let postgres: Migration[];
let db: Database;

beforeAll(async () => {
  sqlite = (await loadMigrations(SQLITE_DIR))!;
  postgres = (await loadMigrations(POSTGRES_DIR))!;
  const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
  const SQL = await initSqlJs({ locateFile: () => wasm });
  db = new SQL.Database();
});
afterAll(() => db?.close());

/** The tables and columns of the sql.js database as it stands. */
function sqliteSchema(): Schema {
  const schema: Schema = {};
  const tables = db.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")[0]?.values ?? [];
  for (const [name] of tables) {
    schema[String(name)] = (db.exec(`PRAGMA table_info(${String(name)})`)[0]?.values ?? []).map((column) => String(column[1]));
  }
  return schema;
}

/** SQL text without comments, cut into statements at top-level semicolons (quotes respected). */
function statements(sql: string): string[] {
  const found: string[] = [];
  let current = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
      current += '\n';
    } else if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      current += sql.slice(i, end + 1);
      i = end;
    } else if (c === ';') {
      found.push(current.trim());
      current = '';
    } else {
      current += c;
    }
  }
  if (current.trim()) found.push(current.trim());
  return found.filter(Boolean);
}

/** The top-level, comma-separated items of a parenthesised list's inside. */
function items(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of body) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else {
      current += c;
    }
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

const TABLE_CONSTRAINT = /^(PRIMARY\s+KEY|UNIQUE|CHECK|FOREIGN\s+KEY|CONSTRAINT|EXCLUDE)\b/i;

/** Applies one PostgreSQL migration's CREATE TABLE and ALTER TABLE ... ADD COLUMN statements to `schema` (constraints change no columns). */
function applyPostgresText(schema: Schema, migration: Migration): void {
  for (const statement of statements(migration.sql)) {
    const create = /^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\(([\s\S]*)\)\s*$/i.exec(statement);
    if (create) {
      schema[create[1]!] = items(create[2]!)
        .filter((item) => !TABLE_CONSTRAINT.test(item))
        .map((item) => /^"?(\w+)"?/.exec(item)![1]!);
      continue;
    }
    // A constraint added or dropped changes no table's columns.
    if (/^ALTER\s+TABLE\s+\w+\s+(ADD|DROP)\s+CONSTRAINT\s/i.test(statement)) continue;
    const addColumn = /^ALTER\s+TABLE\s+(\w+)\s+ADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)"?/i.exec(statement);
    if (addColumn) {
      expect(schema[addColumn[1]!], `${migration.file} alters a table no earlier step made`).toBeDefined();
      schema[addColumn[1]!]!.push(addColumn[2]!);
      continue;
    }
    const drop = /^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)\s*$/i.exec(statement);
    if (drop) {
      expect(schema[drop[1]!], `${migration.file} drops a table no earlier step made`).toBeDefined();
      delete schema[drop[1]!];
      continue;
    }
    // Anything else that could change tables or columns would escape this reading of the text
    // (dropping or adding a constraint changes neither: 016 widens a CHECK that way).
    expect(statement, `${migration.file}: a statement this test does not read`).not.toMatch(/^(ALTER\s+TABLE\s+\w+\s+(DROP(?!\s+CONSTRAINT)|RENAME)|DROP\s+TABLE|CREATE\s+(TEMP\w*\s+)?VIEW)/i);
  }
}

function without(schema: Schema, tables: string[]): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([table]) => !tables.includes(table)));
}

describe('migration parity', () => {
  it('the two sets have the same steps, under the same names, but for the engine-only steps listed', () => {
    const shared = (set: Migration[], only: Record<string, string[]>) => set.filter((m) => !(m.version in only)).map((m) => m.file);
    expect(shared(sqlite, SQLITE_ONLY_STEPS)).toEqual(shared(postgres, POSTGRES_ONLY_STEPS));
    expect(sqlite.length).toBeGreaterThan(5);
    // Every listed engine-only step exists on its engine and not on the other.
    for (const version of Object.keys(POSTGRES_ONLY_STEPS)) {
      expect(postgres.map((m) => m.version)).toContain(version);
      expect(sqlite.map((m) => m.version)).not.toContain(version);
    }
  });

  it('after every step both engines have the same tables with the same columns, in order', () => {
    const postgresSchema: Schema = {};
    const postgresOnlyTables = Object.values(POSTGRES_ONLY_STEPS).flat();
    let next = 0;
    for (const step of sqlite) {
      db.exec(step.sql);
      // PostgreSQL's steps up to this one, its engine-only steps among them.
      while (next < postgres.length && Number(postgres[next]!.version) <= Number(step.version)) applyPostgresText(postgresSchema, postgres[next++]!);
      expect(without(postgresSchema, postgresOnlyTables), `after ${step.file}`).toEqual(sqliteSchema());
    }
    while (next < postgres.length) applyPostgresText(postgresSchema, postgres[next++]!);
    expect(without(postgresSchema, postgresOnlyTables)).toEqual(sqliteSchema());
    expect(Object.keys(sqliteSchema()).length).toBeGreaterThan(15);
  });

  it('each engine-only step makes exactly the tables listed for it', () => {
    for (const [version, tables] of Object.entries(POSTGRES_ONLY_STEPS)) {
      const before: Schema = {};
      for (const m of postgres.filter((m) => Number(m.version) < Number(version))) applyPostgresText(before, m);
      const after: Schema = structuredClone(before);
      applyPostgresText(after, postgres.find((m) => m.version === version)!);
      expect(Object.keys(after).filter((table) => !(table in before)).sort(), `postgres ${version}`).toEqual([...tables].sort());
      expect(without(after, tables), `postgres ${version} changes no shared table`).toEqual(before);
    }
  });
});
