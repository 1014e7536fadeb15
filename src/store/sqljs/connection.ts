/**
 * The engine's one sql.js database and what makes its statements cheap: the prepared-statement
 * cache, each statement's column names, and the raw statements (rawStatements.ts). The engine
 * calls it for every statement, so nothing here may add a closure or an await per statement.
 */
import { createRequire } from 'node:module';
import type { BindParams, Database, SqlJsStatic, Statement } from 'sql.js';
import { SCHEMA_MIGRATIONS_DDL } from '../core/migrate.ts';
import type { Row, SqlParams, SqlValue } from '../store.ts';
import { STATEMENT_CACHE_SIZE, instantiateCapturingMemory, openRawStatements, type RawStatements } from './rawStatements.ts';
import { imageArray, loadSqlJsModule, nextFileCapacity, withExportRoom, type LoadedSqlJs } from './sqlJsLoader.ts';

export type Mode = 'run' | 'get' | 'all' | 'values';

const META_DDL = 'CREATE TABLE IF NOT EXISTS _engine_meta (id INTEGER PRIMARY KEY CHECK (id = 1), last_lsn INTEGER NOT NULL)';

/** sql.js, loaded once, with which of sqlJsLoader.ts's changes it took. */
interface LoadedModule {
  SQL: SqlJsStatic;
  patched: LoadedSqlJs['patched'];
}

let sqlJs: Promise<LoadedModule> | undefined;
/** A Database's file in sql.js's memory (sqlJsLoader.ts, change 3); null until loaded. */
let databaseFileOf: LoadedSqlJs['databaseFile'] | null = null;
/** sql.js's WebAssembly memory, for the raw statements (see rawStatements.ts); null until caught. */
let sqlJsMemory: Parameters<typeof openRawStatements>[2] = null;
export function loadSqlJs(): Promise<LoadedModule> {
  if (!sqlJs) {
    const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
    const { initSqlJs, patched, databaseFile } = loadSqlJsModule();
    databaseFileOf = databaseFile;
    sqlJs = initSqlJs({ locateFile: () => wasm, ...instantiateCapturingMemory(wasm, (memory) => (sqlJsMemory = memory)) } as Parameters<typeof initSqlJs>[0]).then((SQL) => ({ SQL, patched }));
    sqlJs.catch(() => (sqlJs = undefined));
  }
  return sqlJs;
}

/** Normalises a parameter list: booleans become 0/1; anything replay could not reproduce is refused. */
export function bindable(params: SqlParams | undefined): SqlValue[] {
  if (!params) return [];
  return params.map((v: unknown, i) => {
    if (v === null || typeof v === 'string' || typeof v === 'number' || v instanceof Uint8Array) return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    throw new TypeError(`SQL parameter ${i + 1} has unsupported type ${v === undefined ? 'undefined' : typeof v}`);
  });
}

/** Statements read through tx.get/tx.all that need no journal record. */
export function isPureRead(sql: string): boolean {
  const head = sql.trimStart().slice(0, 6).toUpperCase();
  return head === 'SELECT' || (head.startsWith('WITH') && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql));
}

export const TX_CONTROL = /^\s*(BEGIN|COMMIT|END)\b|^\s*ROLLBACK\s*(TRANSACTION\s*)?;?\s*$/i;

/** A row as getAsObject() builds it, from the statement's column names and one row's values. */
function rowOf(names: string[], values: readonly unknown[]): Row {
  const row: Row = {};
  for (let i = 0; i < names.length; i++) row[names[i]!] = values[i] as SqlValue;
  return row;
}

export class Connection {
  private db: Database;
  private readonly SQL: SqlJsStatic;
  private readonly statements = new Map<string, Statement>();
  /** values(), run() and transaction control through SQLite's C functions (rawStatements.ts), made per database; null where sql.js does not allow it. */
  private raw: RawStatements | null | undefined;
  private readonly rawStatementsAllowed: boolean;
  /** Each cached statement's result column names: a call into SQLite and a string per column, once. */
  private names = new WeakMap<Statement, string[]>();

  constructor(SQL: SqlJsStatic, db: Database, rawStatementsAllowed: boolean) {
    this.SQL = SQL;
    this.db = db;
    this.rawStatementsAllowed = rawStatementsAllowed;
  }

  /** Prepares a freshly loaded database and returns the LSN its snapshot holds. */
  init(): number {
    this.makeFileRoom();
    this.configure(); // replay must reproduce ON DELETE CASCADE etc.
    this.db.run(META_DDL);
    this.db.run('INSERT OR IGNORE INTO _engine_meta (id, last_lsn) VALUES (1, 0)');
    this.db.run(SCHEMA_MIGRATIONS_DDL);
    return Number(this.db.exec('SELECT last_lsn FROM _engine_meta')[0]!.values[0]![0]);
  }

  /** Drops this database for one loaded from `image` (empty when null), as a rebuild from disk does; call init() next. */
  replace(image: Uint8Array | null): void {
    this.forgetStatements();
    this.db.close();
    this.db = image ? new this.SQL.Database(image) : new this.SQL.Database();
  }

  /**
   * Gives a database loaded from an image the room its file's next growth would: sql.js loads the
   * file into storage of exactly its size, so the first write that extends it, after every start,
   * copied the whole database while every request waited (2.3 s, and RSS +590 MiB, at 756 MiB in
   * npm run bench -- export). Done here, before the store serves, the copy delays the start instead;
   * the room beyond the file is never written, address space rather than memory.
   */
  private makeFileRoom(): void {
    const file = databaseFileOf?.(this.db) ?? null;
    if (file === null || file.length === 0) return;
    databaseFileOf!(this.db, nextFileCapacity(file.length, file.length + 1));
  }

  /**
   * Connection settings. Durability is this engine's journal, not SQLite's, so SQLite's rollback
   * journal lives in memory and the one connection keeps its lock: otherwise every statement
   * re-checks lock and journal files in sql.js's emulated file system, a large share of a read.
   * secure_delete overwrites deleted content, so a snapshot keeps no copy of a replaced value.
   */
  private configure(): void {
    this.db.run('PRAGMA foreign_keys = ON');
    this.db.run('PRAGMA journal_mode = MEMORY');
    this.db.run('PRAGMA locking_mode = EXCLUSIVE');
    this.db.run('PRAGMA secure_delete = ON');
  }

  /**
   * The whole database, recording `lsn` as the last it holds: a copy of its file, which between
   * transactions is the database byte for byte (sqlJsLoader.ts, change 3), five times quicker than
   * export(). Where sql.js's text was not recognised, export(), which copies it through SQLite's
   * backup API on the open connection (sql.js 1.16), so prepared statements and settings stay.
   * The image is written into `room` when it is large enough (memory touched beforehand, outside
   * the queue: exportRoom.ts), and is then a view of it.
   */
  export(lsn: number, room: Uint8Array | null = null): Uint8Array {
    this.db.run('UPDATE _engine_meta SET last_lsn = ? WHERE id = 1', [lsn]);
    const file = databaseFileOf?.(this.db) ?? null;
    if (file === null) return withExportRoom(room, () => this.db.export());
    const image = imageArray(room, file.length);
    image.set(file);
    return image;
  }

  /** The database's size in bytes (its pages), as an export of it now would be. */
  bytes(): number {
    const [count, size] = this.db.exec('PRAGMA page_count; PRAGMA page_size').map((result) => Number(result.values[0]![0]));
    return count! * size!;
  }

  /** Multi-statement text (migrations, VACUUM), outside the statement cache. */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  existingTables(): Set<string> {
    const result = this.db.exec("SELECT name FROM sqlite_master WHERE type = 'table'");
    return new Set((result[0]?.values ?? []).map((v) => String(v[0])));
  }

  /** VACUUM, so that no free page keeps a value that was overwritten. */
  vacuum(): void {
    this.forgetStatements();
    this.db.exec('VACUUM');
  }

  close(): void {
    this.forgetStatements();
    this.db.close();
  }

  /** A prepared statement for this SQL, from the cache (least recently used evicted). */
  private prepared(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (stmt) {
      this.statements.delete(sql);
    } else {
      stmt = this.db.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const [oldest, evicted] = this.statements.entries().next().value!;
        this.statements.delete(oldest);
        evicted.free();
      }
    }
    this.statements.set(sql, stmt);
    return stmt;
  }

  /** Before the database is closed or replaced: the caches must forget its statements (and the raw reader belongs to it). */
  private forgetStatements(): void {
    for (const stmt of this.statements.values()) stmt.free();
    this.statements.clear();
    this.names = new WeakMap();
    this.raw?.forget();
    this.raw = undefined;
  }

  /** The statement's column names; asked again should a row not have as many values (a re-prepared statement). */
  private columnNames(stmt: Statement, count: number): string[] {
    let names = this.names.get(stmt);
    if (names === undefined || names.length !== count) {
      names = stmt.getColumnNames();
      this.names.set(stmt, names);
    }
    return names;
  }

  /** Runs one prepared statement (only the first statement of `sql`). */
  execute(sql: string, params: SqlValue[], mode: Mode): { changes: number } | Row | Row[] | SqlValue[][] | undefined {
    if (mode === 'values' || mode === 'run') {
      const raw = this.rawStatements();
      if (raw !== null) return mode === 'run' ? { changes: raw.run(sql, params) } : raw.values(sql, params);
    }
    const stmt = this.prepared(sql);
    try {
      if (params.length > 0) stmt.bind(params as BindParams);
      if (mode === 'get') {
        if (!stmt.step()) return undefined;
        // The row as getAsObject() builds it, without asking SQLite for every column's name again.
        const values = stmt.get();
        return rowOf(this.columnNames(stmt, values.length), values);
      }
      if (mode === 'values') {
        // stmt.get() is already a fresh array of the row's values: no object, no keyed stores.
        const values: SqlValue[][] = [];
        while (stmt.step()) values.push(stmt.get() as SqlValue[]);
        return values;
      }
      const rows: Row[] = [];
      if (mode === 'all') {
        // The column names once per statement: getAsObject() reads them again for every row,
        // which costs as much as reading the values (about 3× slower for a wide row).
        let names: string[] | undefined;
        while (stmt.step()) {
          const values = stmt.get();
          names ??= this.columnNames(stmt, values.length);
          rows.push(rowOf(names, values));
        }
      } else {
        while (stmt.step());
      }
      return mode === 'run' ? { changes: this.db.getRowsModified() } : rows;
    } finally {
      // Resetting releases the statement's hold on the database and its bindings.
      stmt.reset();
    }
  }

  /** This database's raw statements, made on first use (again after an export or a rebuild); null where sql.js does not allow them. */
  private rawStatements(): RawStatements | null {
    if (this.raw === undefined) this.raw = this.rawStatementsAllowed ? openRawStatements(this.SQL, this.db, sqlJsMemory) : null;
    return this.raw;
  }

  /** BEGIN, COMMIT or ROLLBACK: prepared once through the raw statements (Database.run() compiles it every time). */
  control(sql: 'BEGIN' | 'COMMIT' | 'ROLLBACK'): void {
    const raw = this.rawStatements();
    if (raw !== null) raw.run(sql, []);
    else this.db.run(sql);
  }

  rollback(): void {
    try {
      this.control('ROLLBACK');
    } catch {
      // no transaction active (SQLite may already have rolled it back)
    }
  }
}
