import { createRequire } from 'node:module';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateCapturingMemory, openRawReader, type RawReader } from '../../../src/store/engine/rawReads.ts';
import type { SqlValue } from '../../../src/store/store.ts';

let SQL: SqlJsStatic;
let memory: Parameters<typeof openRawReader>[2] = null;
let db: Database;
let raw: RawReader;

beforeAll(async () => {
  const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
  SQL = await initSqlJs({ locateFile: () => wasm, ...instantiateCapturingMemory(wasm, (caught) => (memory = caught)) } as Parameters<typeof initSqlJs>[0]);
  db = new SQL.Database();
  raw = openRawReader(SQL, db, memory)!;
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

describe('raw reads (values() past sql.js Statement.get())', () => {
  it('is available with the memory caught at instantiation, and refused without it', () => {
    expect(memory).not.toBeNull();
    expect(raw).not.toBeNull();
    expect(openRawReader(SQL, db, null)).toBeNull();
    expect(openRawReader(SQL, {} as Database, memory)).toBeNull();
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
    const message = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    expect(message(() => raw.values('SELEC 1', []))).toBe(message(() => viaSqlJs('SELEC 1')));
    expect(message(() => raw.values('SELECT * FROM missing', []))).toMatch(/no such table: missing/);
    expect(message(() => raw.values('SELECT ?', [1, 2]))).toBe(message(() => viaSqlJs('SELECT ?', [1, 2])));
    expect(message(() => raw.values('   ', []))).toBe('Nothing to prepare');
    expect(raw.values('SELECT 1', [])).toEqual([[1]]);
  });

  it('keeps statements prepared across calls and finalizes them all on forget(), so the database can be exported and closed', () => {
    for (let i = 0; i < 40; i++) expect(raw.values(`SELECT ${i}, ?`, [i])).toEqual([[i, i]]);
    raw.forget();
    expect(db.export().length).toBeGreaterThan(0);
    expect(raw.values('SELECT count(*) FROM odd', [])).toEqual(viaSqlJs('SELECT count(*) FROM odd'));
  });
});
