/**
 * Loads sql.js with one change to its in-memory file system: how a file's storage grows.
 *
 * Why: the database is a file in Emscripten's MEMFS, one contiguous Uint8Array. When SQLite
 * writes past its end, MEMFS allocates a new array and copies the whole file into it, growing by
 * only 1/8 each time past 1 MiB. A database that grows by appends (every insert) is then copied
 * in full every eighth of its size, inside a COMMIT, holding every request: about 8 copies of the
 * final size in all, each into fresh memory whose first touch costs more than the copy (5 ms per
 * MiB on the 2-core machines; 2.5 s for one copy at 500 MB). In the soak's profile at 540 MB it was
 * 7 % of the service's time, the largest share that grew with the database. Growing by the
 * file's size (doubling, up to 1 GiB a step) copies at most about the final size in all. The
 * capacity beyond the file's end is never written, so it costs address space, not memory.
 *
 * How: sql.js's distributed module is compiled here from its own text, with the growth expression
 * replaced by a call to `fileCapacity`. Where the text is not found (another sql.js version) the
 * module is loaded unchanged and `patched` says so: correctness does not depend on it, and
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

/** The module's text with its growth expression calling `fileCapacityName`; null unless it occurs exactly once. */
export function patchFileGrowth(source: string, fileCapacityName: string): string | null {
  const found = source.match(GROWTH_EXPRESSION);
  if (found?.length !== 1) return null;
  return source.replace(GROWTH_EXPRESSION, (_all, needed: string, capacity: string) => `${needed}=${fileCapacityName}(${capacity},${needed})`);
}

export interface LoadedSqlJs {
  initSqlJs: InitSqlJs;
  /** Whether the growth rule is `fileCapacity` (false: sql.js's own, this version's text was not recognised). */
  patched: boolean;
}

const CAPACITY_PARAMETER = '__fileCapacity';

/** sql.js's Node entry point, its file growth following `fileCapacity` (nextFileCapacity unless a test says otherwise). */
export function loadSqlJsModule(fileCapacity: (capacity: number, needed: number) => number = nextFileCapacity): LoadedSqlJs {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('sql.js/dist/sql-wasm.js');
  const source = readFileSync(entry, 'utf8');
  const patched = patchFileGrowth(source, CAPACITY_PARAMETER);
  if (patched === null) return { initSqlJs: require(entry) as InitSqlJs, patched: false };
  // The CommonJS wrapper Node itself gives the file, plus the growth rule.
  const compiled = vm.compileFunction(patched, ['exports', 'require', 'module', '__filename', '__dirname', CAPACITY_PARAMETER], { filename: entry });
  const module = { exports: {} as unknown };
  compiled.call(module.exports, module.exports, createRequire(entry), module, entry, path.dirname(entry), fileCapacity);
  return { initSqlJs: module.exports as InitSqlJs, patched: true };
}
