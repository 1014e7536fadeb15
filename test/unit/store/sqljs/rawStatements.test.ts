import { createRequire } from 'node:module';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateCapturingMemory, openRawStatements, type RawStatements } from '../../../../src/store/sqljs/rawStatements.ts';
import type { SqlValue } from '../../../../src/store/store.ts';

let SQL: SqlJsStatic;
let memory: Parameters<typeof openRawStatements>[2] = null;
let db: Database;
let raw: RawStatements;

beforeAll(async () => {
  const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
  SQL = await initSqlJs({ locateFile: () => wasm, ...instantiateCapturingMemory(wasm, (caught) => (memory = caught)) } as Parameters<typeof initSqlJs>[0]);
  db = new SQL.Database();
  raw = openRawStatements(SQL, db, memory)!;
});
afterAll(() => {
  raw?.forget();
  db?.close();
});

/** What sql.js's own Statement.get() gives for the same statement and parameters. */
function viaSqlJs(sql: string, params: SqlValue[] = []): SqlValue[][] {
  const statement = db.prepare(sql);
  try {
    if (params.length > 0) statement.bind(params as never);
    const rows: SqlValue[][] = [];
    while (statement.step()) rows.push(statement.get() as SqlValue[]);
    return rows;
  } finally {
    statement.free();
  }
}

/** The message `fn` throws, or 'no error'. */
function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
}

describe('raw reads (values() past sql.js Statement.get())', () => {
  it('is available with the memory caught at instantiation, and refused without it', () => {
    expect(memory).not.toBeNull();
    expect(raw).not.toBeNull();
    expect(openRawStatements(SQL, db, null)).toBeNull();
    expect(openRawStatements(SQL, {} as Database, memory)).toBeNull();
  });

  it('gives exactly the values sql.js gives: numbers, text of every kind, blobs, nulls', () => {
    db.run('CREATE TABLE odd (n INTEGER, r REAL, t TEXT, b BLOB)');
    const rows: SqlValue[][] = [
      [0, 0.5, '', new Uint8Array([])],
      [-1, -1e300, 'plain ascii', new Uint8Array([0, 1, 2, 255])],
      [2 ** 31, 1 / 3, 'é 王 😀 – Ünïcödé', null],
      [Number.MAX_SAFE_INTEGER, null, '\uFEFFstarts with a byte order mark', new Uint8Array(3000).fill(7)],
      [-(2 ** 53), 2.5, 'a\u0000b nul inside', null],
      [null, null, null, null],
      [7, 7, '\uD800 lone surrogate, \uDC00 another', null],
      [8, 8, 'x'.repeat(100_000), null],
    ];
    for (const row of rows) db.run('INSERT INTO odd VALUES (?, ?, ?, ?)', row as never);
    db.run("INSERT INTO odd (n, t) VALUES (9, CAST(x'eda080ff41c3' AS TEXT))"); // invalid UTF-8 stored as text
    db.run("INSERT INTO odd (n, t) VALUES (10, CAST(x'efbbbfefbbbf41' AS TEXT))"); // two byte order marks
    const sql = 'SELECT n, r, t, b, typeof(t), length(b) FROM odd ORDER BY rowid';
    const expected = viaSqlJs(sql);
    expect(raw.values(sql, [])).toEqual(expected);
    expect(expected).toHaveLength(rows.length + 2);
    expect(raw.values('SELECT t FROM odd WHERE n = 4503599627370495 OR n = 9007199254740991', [])).toEqual([['\uFEFFstarts with a byte order mark'.slice(1)]]);
  });

  it('binds parameters as sql.js binds them', () => {
    const params: SqlValue[] = ['naïve 王', 42, -7, 2 ** 31, 0.1, -0, null, new Uint8Array([1, 2, 3]), '', 'nul\u0000inside'];
    const sql = `SELECT ${params.map(() => '?').join(', ')}, ${params.map((_, i) => `typeof(?${i + 1})`).join(', ')}`;
    expect(raw.values(sql, params)).toEqual(viaSqlJs(sql, params));
    expect(raw.values('SELECT t FROM odd WHERE n = ?', [-1])).toEqual([['plain ascii']]);
  });

  it('keeps reading correctly when the memory grows in the middle of a statement', () => {
    const before = memory!.buffer.byteLength;
    const sql = "SELECT 'before', 1 UNION ALL SELECT 'after ' || length(hex(zeroblob(?))), 2 UNION ALL SELECT 'é after', 3";
    const grow = before + 16 * 1024 * 1024; // hex() makes a text twice that long inside the memory
    expect(raw.values(sql, [grow])).toEqual([
      ['before', 1],
      [`after ${2 * grow}`, 2],
      ['é after', 3],
    ]);
    expect(memory!.buffer.byteLength).toBeGreaterThan(before);
    expect(raw.values('SELECT t FROM odd WHERE n = 0', [])).toEqual([['']]);
  });

  it('reports SQLite’s errors as sql.js does, and stays usable after them', () => {
    expect(message(() => raw.values('SELEC 1', []))).toBe(message(() => viaSqlJs('SELEC 1')));
    expect(message(() => raw.values('SELECT * FROM missing', []))).toMatch(/no such table: missing/);
    expect(message(() => raw.values('SELECT ?', [1, 2]))).toBe(message(() => viaSqlJs('SELECT ?', [1, 2])));
    expect(message(() => raw.values('   ', []))).toBe('Nothing to prepare');
    expect(raw.values('SELECT 1', [])).toEqual([[1]]);
  });

  it('keeps statements prepared across calls and finalizes them all on forget(), so the database can be exported and closed', () => {
    for (let i = 0; i < 40; i++) expect(raw.values(`SELECT ${i}, ?`, [i])).toEqual([[i, i]]);
    raw.run('BEGIN', []);
    raw.run('INSERT INTO odd (n, t) VALUES (?, ?)', [11, 'prepared']);
    raw.run('COMMIT', []);
    raw.forget();
    expect(db.export().length).toBeGreaterThan(0);
    raw = openRawStatements(SQL, db, memory)!;
    expect(raw.values('SELECT count(*) FROM odd', [])).toEqual(viaSqlJs('SELECT count(*) FROM odd'));
  });
});

describe('raw writes (run() past sql.js Statement.bind() and Database.run())', () => {
  /** Every value in the table as SQLite stores it: its type and its bytes. */
  const stored = (table: string) => viaSqlJs(`SELECT typeof(v), hex(v), length(CAST(v AS BLOB)) FROM ${table} ORDER BY rowid`);

  it('stores exactly the bytes sql.js stores, for text of every kind, numbers, blobs and nulls', () => {
    db.run('CREATE TABLE by_sqljs (v)');
    db.run('CREATE TABLE by_raw (v)');
    const scratchLimit = (16 * 1024) / 3;
    const values: SqlValue[] = [
      '', 'plain ascii', 'é 王 😀 – Ünïcödé', '\uFEFFbyte order mark', 'nul\u0000inside', 'qte_01JD0000000000000000000000',
      '\uD800 lone high surrogate then text', 'text then a lone low \uDC00', '\uDBFF\uDFFF paired',
      'é'.repeat(Math.floor(scratchLimit)), 'é'.repeat(Math.floor(scratchLimit) + 1), 'x'.repeat(100_000),
      0, -1, 2 ** 31, -(2 ** 31), 2 ** 53 - 1, 0.1, -0, 1e300, null, new Uint8Array([0, 255]), new Uint8Array([]),
    ];
    for (const value of values) {
      db.run('INSERT INTO by_sqljs (v) VALUES (?)', [value] as never);
      expect(raw.run('INSERT INTO by_raw (v) VALUES (?)', [value])).toBe(1);
    }
    expect(stored('by_raw')).toEqual(stored('by_sqljs'));
    expect(stored('by_raw')).toHaveLength(values.length);
  });

  it('binds text correctly after a blob in the same statement has grown the memory', () => {
    db.run('CREATE TABLE pairs (b BLOB, t TEXT)');
    const before = memory!.buffer.byteLength;
    const big = new Uint8Array(before + 8 * 1024 * 1024).fill(9); // its copy into the memory must grow it
    expect(raw.run('INSERT INTO pairs (b, t) VALUES (?, ?)', [big, 'é written after the growth'])).toBe(1);
    expect(memory!.buffer.byteLength).toBeGreaterThan(before);
    expect(viaSqlJs('SELECT length(b), t FROM pairs')).toEqual([[big.length, 'é written after the growth']]);
    db.run('DELETE FROM pairs');
  });

  it('reports how many rows a statement changed, and SQLite’s errors as sql.js does, staying usable after them', () => {
    db.run('CREATE TABLE keyed (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
    expect(raw.run('INSERT INTO keyed (id, n) VALUES (?, ?), (?, ?)', ['a', 1, 'b', 2])).toBe(2);
    expect(raw.run('UPDATE keyed SET n = n + 1', [])).toBe(2);
    const duplicate = message(() => raw.run('INSERT INTO keyed (id, n) VALUES (?, ?)', ['a', 3]));
    expect(duplicate).toBe(message(() => db.run('INSERT INTO keyed (id, n) VALUES (?, ?)', ['a', 3])));
    expect(duplicate).toMatch(/UNIQUE constraint failed: keyed.id/);
    expect(message(() => raw.run('INSERT INTO keyed (id, n) VALUES (?, NULL)', ['c']))).toMatch(/NOT NULL constraint failed/);
    expect(raw.run('INSERT INTO keyed (id, n) VALUES (?, ?)', ['c', 3])).toBe(1);
    expect(viaSqlJs('SELECT id, n FROM keyed ORDER BY id')).toEqual([['a', 2], ['b', 3], ['c', 3]]);
  });

  it('runs BEGIN, COMMIT and ROLLBACK: a rolled-back write is gone, a committed one stays', () => {
    db.run('CREATE TABLE ledger (entry TEXT)');
    raw.run('BEGIN', []);
    raw.run('INSERT INTO ledger (entry) VALUES (?)', ['rolled back']);
    raw.run('ROLLBACK', []);
    raw.run('BEGIN', []);
    raw.run('INSERT INTO ledger (entry) VALUES (?)', ['committed']);
    raw.run('COMMIT', []);
    expect(viaSqlJs('SELECT entry FROM ledger')).toEqual([['committed']]);
    expect(() => raw.run('COMMIT', [])).toThrow(/no transaction is active/);
  });
});
