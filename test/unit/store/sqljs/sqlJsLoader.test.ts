import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { SqlJsStatic } from 'sql.js';
import { describe, expect, it } from 'vitest';
import { loadSqlJsModule, nextFileCapacity, patchDatabaseFile, patchExportBuffer, patchFileGrowth, withExportRoom, type SqlJsHooks } from '../../../../src/store/sqljs/sqlJsLoader.ts';

const require = createRequire(import.meta.url);
const WASM = require.resolve('sql.js/dist/sql-wasm.wasm');
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

describe('sql.js file growth', () => {
  it("recognises the installed sql.js's growth expression exactly once", () => {
    // Fails when an upgrade of sql.js changes the text: the service would still run, copying more.
    const source = readFileSync(require.resolve('sql.js/dist/sql-wasm.js'), 'utf8');
    const patched = patchFileGrowth(source, '__grow');
    expect(patched).not.toBeNull();
    expect(patched).toMatch(/(\w+)=__grow\((\w+),\1\)/);
    expect(patched).not.toContain('1.125');
  });

  it("recognises the installed sql.js's export allocation exactly once", () => {
    const source = readFileSync(require.resolve('sql.js/dist/sql-wasm.js'), 'utf8');
    const patched = patchExportBuffer(source, '__room');
    expect(patched).not.toBeNull();
    expect(patched).toMatch(/(\w+)=__room\((\w+)\[0\]\.values\[0\]\[0\]\*\2\[1\]\.values\[0\]\[0\]\)/);
    expect(patchExportBuffer('var a = new Uint8Array(3);', '__room')).toBeNull();
  });

  it('leaves a text alone unless the expression occurs exactly once', () => {
    const once = 'g=Math.max(g,m*(m<1048576?2:1.125)>>>0);';
    expect(patchFileGrowth(once, 'f')).toBe('g=f(m,g);');
    expect(patchFileGrowth('var a = 1;', 'f')).toBeNull();
    expect(patchFileGrowth(once + once, 'f')).toBeNull();
  });

  it('doubles a file’s storage, by at most 1 GiB a step, and always fits what is needed', () => {
    expect(nextFileCapacity(4 * MiB, 4 * MiB + 4096)).toBe(8 * MiB);
    expect(nextFileCapacity(600 * MiB, 600 * MiB + 1)).toBe(1200 * MiB);
    expect(nextFileCapacity(3 * GiB, 3 * GiB + 1)).toBe(4 * GiB);
    expect(nextFileCapacity(1 * MiB, 5 * MiB)).toBe(5 * MiB);
    expect(nextFileCapacity(0, 4096)).toBe(4096);
  });

  it('grows a database that SQLite appends to geometrically, and keeps every row', async () => {
    const steps: Array<[number, number]> = [];
    const { initSqlJs, patched } = loadSqlJsModule({
      fileCapacity(capacity, needed) {
        const next = nextFileCapacity(capacity, needed);
        steps.push([capacity, next]);
        return next;
      },
      exportBuffer: (bytes) => new Uint8Array(bytes),
      databaseFile: null,
    });
    expect(patched.fileGrowth).toBe(true);
    const SQL: SqlJsStatic = await initSqlJs({ locateFile: () => WASM });
    const db = new SQL.Database();
    try {
      db.run('CREATE TABLE quotes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const body = 'x'.repeat(1000);
      // About 16 MiB written one commit at a time, as the service appends.
      for (let i = 0; i < 16_000; i++) db.run('INSERT INTO quotes (body) VALUES (?)', [body]);
      expect(db.exec('SELECT count(*), sum(length(body)) FROM quotes')[0]!.values[0]).toEqual([16_000, 16_000_000]);
      const fileSteps = steps.filter(([capacity]) => capacity >= MiB);
      // sql.js's own rule (1/8 past 1 MiB) takes about 24 steps from 1 to 16 MiB; doubling takes 4 or 5.
      expect(fileSteps.length).toBeGreaterThan(0);
      expect(fileSteps.length).toBeLessThanOrEqual(6);
      for (const [capacity, next] of fileSteps) expect(next).toBeGreaterThanOrEqual(2 * capacity);
    } finally {
      db.close();
    }
  });
});

describe('an export into a room made ready beforehand', () => {
  it('writes the image into the room when it is large enough, and into a new array when not', async () => {
    const { initSqlJs, patched } = loadSqlJsModule();
    expect(patched).toEqual({ fileGrowth: true, exportBuffer: true, databaseFile: true });
    const SQL: SqlJsStatic = await initSqlJs({ locateFile: () => WASM });
    const db = new SQL.Database();
    try {
      db.run('CREATE TABLE applications (id TEXT PRIMARY KEY, amount INTEGER NOT NULL)');
      for (let i = 0; i < 2_000; i++) db.run('INSERT INTO applications VALUES (?, ?)', [`app_${i}`, 100_000 + i]);
      const plain = db.export();
      const room = new Uint8Array(plain.length + 65_536);
      const intoRoom = withExportRoom(room, () => db.export());
      expect(intoRoom.buffer).toBe(room.buffer);
      expect(Buffer.from(intoRoom).equals(Buffer.from(plain))).toBe(true);
      const tooSmall = new Uint8Array(plain.length - 4096);
      const elsewhere = withExportRoom(tooSmall, () => db.export());
      expect(elsewhere.buffer).not.toBe(tooSmall.buffer);
      expect(Buffer.from(elsewhere).equals(Buffer.from(plain))).toBe(true);
      // A room serves one export: the next, given none, does not write over the image in it.
      const next = db.export();
      expect(next.buffer).not.toBe(room.buffer);
      // The image reopens as the same database.
      const reopened = new SQL.Database(intoRoom);
      expect(reopened.exec('SELECT count(*), sum(amount) FROM applications')[0]!.values[0]).toEqual([2_000, 2_000 * 100_000 + (1_999 * 2_000) / 2]);
      reopened.close();
    } finally {
      db.close();
    }
  });
});

describe("a database's file in sql.js's memory", () => {
  it("recognises the installed sql.js's export opening exactly once, across the text's line breaks", () => {
    // Fails when an upgrade of sql.js changes the text: checkpoints would then copy through export() again.
    const source = readFileSync(require.resolve('sql.js/dist/sql-wasm.js'), 'utf8');
    const patched = patchDatabaseFile(source, '__file');
    expect(patched).not.toBeNull();
    expect(patched).toMatch(/__file=function\(db,room\)\{var node=\w+\(db\.filename\)\.node;if\(room>node\.\w+\.length\)\{.*?\}return node\.\w+\.subarray\(0,node\.\w+\)\};\w+\.prototype\.\w+=function\(\)\{if\(!this\.db\)throw Error\("Database closed"\)/);
    expect(patchDatabaseFile('var a = 1;', '__file')).toBeNull();
  });

  it('makes room in a loaded database\'s storage when asked: writes that extend the file within it copy nothing, and every row is kept', async () => {
    const steps: number[] = [];
    const hooks: SqlJsHooks = {
      fileCapacity(capacity, needed) {
        steps.push(capacity);
        return nextFileCapacity(capacity, needed);
      },
      exportBuffer: (bytes) => new Uint8Array(bytes),
      databaseFile: null,
    };
    const { initSqlJs, databaseFile } = loadSqlJsModule(hooks);
    const SQL: SqlJsStatic = await initSqlJs({ locateFile: () => WASM });
    const seed = new SQL.Database();
    seed.run('CREATE TABLE quotes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    for (let i = 0; i < 2_000; i++) seed.run('INSERT INTO quotes (body) VALUES (?)', ['x'.repeat(1000)]);
    const image = seed.export();
    seed.close();
    const db = new SQL.Database(image);
    try {
      db.run('PRAGMA journal_mode = MEMORY');
      db.run('PRAGMA locking_mode = EXCLUSIVE');
      steps.length = 0;
      const size = databaseFile(db)!.length;
      expect(databaseFile(db, 2 * size)!.length).toBe(size); // the file is the same; its storage has room
      for (let i = 0; i < 1_000; i++) db.run('INSERT INTO quotes (body) VALUES (?)', ['y'.repeat(1000)]);
      expect(databaseFile(db)!.length).toBeGreaterThan(size);
      expect(databaseFile(db)!.length).toBeLessThan(2 * size);
      expect(steps).toEqual([]); // no write grew (and copied) the file
      expect(db.exec('SELECT count(*), sum(length(body)) FROM quotes')[0]!.values[0]).toEqual([3_000, 3_000_000]);
      expect(db.exec('PRAGMA integrity_check')[0]!.values).toEqual([['ok']]);
    } finally {
      db.close();
    }
  });

  it('is the database between transactions: it reopens with every row, as export() would give it', async () => {
    const { initSqlJs, databaseFile } = loadSqlJsModule();
    const SQL: SqlJsStatic = await initSqlJs({ locateFile: () => WASM });
    const db = new SQL.Database();
    try {
      // The engine's own settings (connection.ts): the rollback journal in memory, the lock kept.
      db.run('PRAGMA journal_mode = MEMORY');
      db.run('PRAGMA locking_mode = EXCLUSIVE');
      db.run('CREATE TABLE applications (id TEXT PRIMARY KEY, amount INTEGER NOT NULL)');
      for (let i = 0; i < 3_000; i++) db.run('INSERT INTO applications VALUES (?, ?)', [`app_${i}`, 100_000 + i]);
      db.run('DELETE FROM applications WHERE amount % 3 = 0');
      db.run('BEGIN');
      db.run("UPDATE applications SET amount = amount + 1 WHERE id = 'app_1'");
      db.run('ROLLBACK');
      const file = databaseFile(db)!.slice();
      const exported = db.export();
      expect(file.length).toBe(exported.length);
      const reopened = new SQL.Database(file);
      try {
        expect(reopened.exec('PRAGMA integrity_check')[0]!.values).toEqual([['ok']]);
        expect(reopened.exec('SELECT count(*), sum(amount), max(id) FROM applications')[0]!.values[0]).toEqual(db.exec('SELECT count(*), sum(amount), max(id) FROM applications')[0]!.values[0]);
        expect(reopened.exec("SELECT amount FROM applications WHERE id = 'app_1'")[0]!.values).toEqual([[100_001]]);
      } finally {
        reopened.close();
      }
      // Byte for byte what the backup API copies, but for the change counter (offsets 24-27, and its copy at 92-95).
      const differing = [...file.keys()].filter((i) => file[i] !== exported[i]);
      expect(differing.every((i) => (i >= 24 && i < 28) || (i >= 92 && i < 96))).toBe(true);
    } finally {
      db.close();
    }
  });
});
