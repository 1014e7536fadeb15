/**
 * Loads sql.js with three changes to how it handles its in-memory files, all for a database that
 * has grown large.
 *
 * 1. How a file's storage grows. The database is a file in Emscripten's MEMFS, one contiguous
 *    Uint8Array. When SQLite writes past its end, MEMFS allocates a new array and copies the whole
 *    file into it, growing by only 1/8 each time past 1 MiB. A database that grows by appends
 *    (every insert) is then copied in full every eighth of its size, inside a COMMIT, holding every
 *    request: about 8 copies of the final size in all, each into fresh memory whose first touch
 *    costs more than the copy (5 ms per MiB on the 2-core machines; 2.5 s for one copy at 500 MB).
 *    In the soak's profile at 540 MB it was 7 % of the service's time, the largest share that grew
 *    with the database. Growing by the file's size (doubling, up to 1 GiB a step) copies at most
 *    about the final size in all. The capacity beyond the file's end is never written, so it costs
 *    address space, not memory.
 * 2. Where an export is written. Database.export() copies the database into a new array, inside the
 *    write queue; touching that fresh memory was most of the copy's time (2.6 s at 550 MB). With
 *    `withExportRoom` the caller hands it memory it has already touched, outside the queue
 *    (exportRoom.ts).
 * 3. What an export copies. Database.export() copies the database page by page through SQLite's
 *    backup API, each page read out of the file into SQLite's memory and written back out: 160-260
 *    ms for 320 MB on the 2-core machines, holding the queue. Between transactions the file in
 *    MEMFS already is the database, byte for byte (SQLite's rollback journal is in memory and every
 *    commit writes its pages to the file), so `databaseFile` hands the file's bytes over for a
 *    plain copy (40 ms for 300 MiB into touched memory). It reaches the file the way export()
 *    itself does, through MEMFS's path lookup.
 *
 * How: sql.js's distributed module is compiled here from its own text, each expression replaced by
 * a call to a hook. Where an expression is not found (another sql.js version) it is left as it is
 * and `patched` says so: correctness does not depend on either, and
 * test/unit/store/sqljs/sqlJsLoader.test.ts fails for the installed version.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import type initSqlJsType from 'sql.js';

type InitSqlJs = typeof initSqlJsType;

/** Past this, a file's storage grows by this much at most per step (doubling below it). */
const GROWTH_STEP_CAP = 1024 * 1024 * 1024;

/** The storage a file whose storage holds `capacity` bytes grows to when `needed` bytes must fit. */
export function nextFileCapacity(capacity: number, needed: number): number {
  return Math.max(needed, capacity + Math.min(capacity, GROWTH_STEP_CAP));
}

/** MEMFS's `newCapacity = Math.max(newCapacity, prev * (prev < 1 MiB ? 2 : 1.125) >>> 0)`, as minified in sql.js 1.16. */
const GROWTH_EXPRESSION = /(\w+)=Math\.max\(\1,(\w+)\*\(\2<1048576\?2:1\.125\)>>>0\)/g;
/** export()'s `binaryDb = new Uint8Array(page_count * page_size)`, as minified in sql.js 1.16. */
const EXPORT_ALLOCATION = /(\w+)=new Uint8Array\((\w+)\[0\]\.values\[0\]\[0\]\*\2\[1\]\.values\[0\]\[0\]\)/g;

/** `source` with `pattern`'s one occurrence replaced; null unless it occurs exactly once. */
function replaceOnce(source: string, pattern: RegExp, replacement: (...groups: string[]) => string): string | null {
  if (source.match(pattern)?.length !== 1) return null;
  return source.replace(pattern, (_all: string, ...groups: string[]) => replacement(...groups));
}

/** The module's text with its growth expression calling `fileCapacityName`; null unless it occurs exactly once. */
export function patchFileGrowth(source: string, fileCapacityName: string): string | null {
  return replaceOnce(source, GROWTH_EXPRESSION, (needed, capacity) => `${needed}=${fileCapacityName}(${capacity},${needed})`);
}

/** `pattern` allowing whitespace after each punctuation mark: the minified text breaks its lines between any two tokens. */
function loose(pattern: string): string {
  return pattern.replace(/(\\[(){}.+[\]]|[;,=])/g, '$1\\s*');
}

/**
 * export()'s opening, as minified in sql.js 1.16: the name of MEMFS's path lookup, and of a file
 * node's storage array and used length (export's own write to its file sets both).
 */
const EXPORT_OPENING = new RegExp(
  loose(
    String.raw`(\w+\.prototype\.\w+=function\(\)\{if\(!this\.db\)throw Error\("Database closed"\);var (\w+)=this\.filename\+"_export";` +
      String.raw`\w+\(\2,\[\]\);var \w+=0,\w+=0;try\{var (\w+)=(\w+)\(\2\)\.node,\w+=null,\w+=\3\.\w+\.write;` +
      String.raw`\3\.\w+=Object\.create\(\3\.\w+\);\3\.\w+\.write=function\((\w+),(\w+),(\w+),(\w+),(\w+)\)\{if\(\w+===null\)return \w+\(\5,\6,\7,\8,\9\);` +
      String.raw`\3\.(\w+)\.set\(\6\.subarray\(\7,\7\+\8\),\9\);\3\.(\w+)=Math\.max\(\3\.\11,\9\+\8\))`,
  ),
  'g',
);

/**
 * The module's text with `databaseFileName` set, where Database's methods are defined, to a
 * function giving a Database's file as it stands (a view of MEMFS's storage: copy it before
 * SQLite writes again), first giving its storage room for `room` bytes when asked (MEMFS's own
 * grow: a new array, the file copied in); null unless export()'s opening occurs exactly once.
 */
export function patchDatabaseFile(source: string, databaseFileName: string): string | null {
  return replaceOnce(
    source,
    EXPORT_OPENING,
    (opening, _file, _node, lookup, _s, _d, _o, _n, _p, storage, used) =>
      `${databaseFileName}=function(db,room){var node=${lookup}(db.filename).node;` +
      `if(room>node.${storage}.length){var grown=new Uint8Array(room);grown.set(node.${storage}.subarray(0,node.${used}));node.${storage}=grown}` +
      `return node.${storage}.subarray(0,node.${used})};${opening}`,
  );
}

/** The module's text with export()'s array taken from `exportBufferName`; null unless it occurs exactly once. */
export function patchExportBuffer(source: string, exportBufferName: string): string | null {
  return replaceOnce(source, EXPORT_ALLOCATION, (target, sizes) => `${target}=${exportBufferName}(${sizes}[0].values[0][0]*${sizes}[1].values[0][0])`);
}

let room: Uint8Array | null = null;

/**
 * Runs `exporting` (a synchronous Database.export()) with `exportRoom` as the memory the image is
 * written into, when it is large enough; the image returned is then a view of it. Each room must
 * serve one export only: the image lives in it.
 */
export function withExportRoom<T>(exportRoom: Uint8Array | null, exporting: () => T): T {
  room = exportRoom;
  try {
    return exporting();
  } finally {
    room = null;
  }
}

/** Where an image of `bytes` goes: the start of `exportRoom` when it is large enough, else a new array. */
export function imageArray(exportRoom: Uint8Array | null, bytes: number): Uint8Array {
  return exportRoom !== null && exportRoom.length >= bytes ? exportRoom.subarray(0, bytes) : new Uint8Array(bytes);
}

function exportBuffer(bytes: number): Uint8Array {
  const given = room;
  room = null;
  return imageArray(given, bytes);
}

export interface SqlJsHooks {
  fileCapacity(capacity: number, needed: number): number;
  exportBuffer(bytes: number): Uint8Array;
  /** Set by the patched module (patchDatabaseFile); stays null where its text was not recognised. */
  databaseFile: ((db: object, room?: number) => Uint8Array) | null;
}

export interface LoadedSqlJs {
  initSqlJs: InitSqlJs;
  /** Which hooks this version's text took (false: sql.js's own behaviour, the text was not recognised). */
  patched: { fileGrowth: boolean; exportBuffer: boolean; databaseFile: boolean };
  /**
   * A Database's file as it stands, once initSqlJs has resolved: a view of MEMFS's storage, valid
   * until SQLite writes again; its storage first made room for `room` bytes when given. Null where
   * the text was not recognised (export() is the way then).
   */
  databaseFile(db: object, room?: number): Uint8Array | null;
}

const HOOKS_PARAMETER = '__mosHooks';

/** sql.js's Node entry point with the hooks above (a test may give its own). */
export function loadSqlJsModule(hooks: SqlJsHooks = { fileCapacity: nextFileCapacity, exportBuffer, databaseFile: null }): LoadedSqlJs {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('sql.js/dist/sql-wasm.js');
  const source = readFileSync(entry, 'utf8');
  let text = source;
  const apply = (patch: (text: string, name: string) => string | null, name: string): boolean => {
    const changed = patch(text, `${HOOKS_PARAMETER}.${name}`);
    if (changed !== null) text = changed;
    return changed !== null;
  };
  // The export's opening first: the other two leave it as it is.
  const patched = { databaseFile: apply(patchDatabaseFile, 'databaseFile'), fileGrowth: apply(patchFileGrowth, 'fileCapacity'), exportBuffer: apply(patchExportBuffer, 'exportBuffer') };
  const databaseFile = (db: object, room?: number) => hooks.databaseFile?.(db, room) ?? null;
  if (text === source) return { initSqlJs: require(entry) as InitSqlJs, patched, databaseFile };
  // The CommonJS wrapper Node itself gives the file, plus the hooks.
  const compiled = vm.compileFunction(text, ['exports', 'require', 'module', '__filename', '__dirname', HOOKS_PARAMETER], { filename: entry });
  const module = { exports: {} as unknown };
  compiled.call(module.exports, module.exports, createRequire(entry), module, entry, path.dirname(entry), hooks);
  return { initSqlJs: module.exports as InitSqlJs, patched, databaseFile };
}
