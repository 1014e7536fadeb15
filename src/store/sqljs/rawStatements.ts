/**
 * The engine's statements without sql.js's per-value glue: prepared, bound and stepped through the
 * SQLite C functions sql.js exports. Two uses:
 * - long reads (`values()`: exports), each row's values read straight out of the WebAssembly memory;
 * - every write statement and BEGIN/COMMIT/ROLLBACK (`run()`), text bound from one scratch buffer.
 *
 * Why: sql.js's Statement.get() makes a JavaScript-to-WebAssembly call for every column's type
 * and value, and decodes every text value with a TextDecoder call on a new subarray of the heap.
 * Over an export of 1,000,000 sixteen-column rows that glue was a fifth of the server's time and
 * about 1 KiB of garbage a row. Here a text value is one `utf8Slice` of a Buffer over the heap.
 * On the way in, sql.js encodes each text parameter character by character in JavaScript into a
 * block it mallocs and frees, and Database.run() compiles BEGIN and COMMIT again each time: for a
 * quote (21 parameters, nine of them text) that was about 2 µs of its store work. Here a text
 * parameter is one Buffer.write into the scratch buffer (SQLite copies it before the bind returns),
 * and BEGIN and COMMIT are prepared once.
 *
 * The values are sql.js's, exactly: numbers (INTEGER and REAL, as sqlite3_column_double gives
 * them), strings decoded as sql.js's TextDecoder decodes them (a leading byte order mark dropped,
 * invalid UTF-8 replaced by U+FFFD; Buffer's decoder does the same, which a test checks), a copy
 * of each BLOB, and null. Parameters are bound as sql.js binds them: Buffer's UTF-8 encoder and
 * Emscripten's agree on every well-formed string, and a string with a lone surrogate (where they
 * differ) takes Emscripten's, as do strings too long for the scratch buffer.
 *
 * It needs two things sql.js does not document: the memory (caught through Emscripten's
 * `instantiateWasm` hook, see `instantiateCapturingMemory`) and the database handle
 * (`Database.db`). Without either, `openRawStatements` gives null and the engine keeps to
 * sql.js's Statement and Database.run().
 */
import { readFile } from 'node:fs/promises';
import type { Database, SqlJsStatic } from 'sql.js';
import type { SqlValue } from '../store.ts';

/** The part of a WebAssembly.Memory used here (this project compiles without the DOM's WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

interface WasmApi {
  instantiate(bytes: Uint8Array, imports: unknown): Promise<{ instance: WasmInstance }>;
  Memory: abstract new (...args: never[]) => WasmMemory;
}

/** SQLite's C functions as sql.js exports them (pointers and codes are numbers). */
interface SqliteC {
  _sqlite3_prepare_v2(db: number, sql: number, bytes: number, statementOut: number, tailOut: number): number;
  _sqlite3_bind_text(statement: number, index: number, text: number, bytes: number, destructor: number): number;
  _sqlite3_bind_blob(statement: number, index: number, blob: number, bytes: number, destructor: number): number;
  _sqlite3_bind_int(statement: number, index: number, value: number): number;
  _sqlite3_bind_double(statement: number, index: number, value: number): number;
  _sqlite3_step(statement: number): number;
  _sqlite3_reset(statement: number): number;
  _sqlite3_clear_bindings(statement: number): number;
  _sqlite3_finalize(statement: number): number;
  _sqlite3_column_count(statement: number): number;
  _sqlite3_column_type(statement: number, column: number): number;
  _sqlite3_column_double(statement: number, column: number): number;
  _sqlite3_column_text(statement: number, column: number): number;
  _sqlite3_column_blob(statement: number, column: number): number;
  _sqlite3_column_bytes(statement: number, column: number): number;
  _sqlite3_errmsg(db: number): number;
  _sqlite3_changes(db: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  stringToNewUTF8(text: string): number;
  lengthBytesUTF8(text: string): number;
  UTF8ToString(pointer: number): string;
}

const SQLITE_OK = 0;
const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
const SQLITE_INTEGER = 1;
const SQLITE_FLOAT = 2;
const SQLITE_TEXT = 3;
const SQLITE_BLOB = 4;
/** Tells SQLite to copy a bound value before the call returns (so it is freed at once). */
const SQLITE_TRANSIENT = -1;

/**
 * Decodes bytes of a Buffer as UTF-8. Buffer's own utf8Slice where there is one (every Node
 * release has it, undocumented): toString('utf8', start, end) checks its arguments and looks the
 * encoding up on every call, which cost a third as much as the decoding itself.
 */
const utf8Slice: (buffer: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as { utf8Slice?: unknown }).utf8Slice === 'function'
    ? (buffer, start, end) => (buffer as unknown as { utf8Slice(start: number, end: number): string }).utf8Slice(start, end)
    : (buffer, start, end) => buffer.toString('utf8', start, end);

/**
 * Statements kept prepared per SQL text, least recently used dropped first, here and in the
 * engine's cache of sql.js statements: preparing costs more than running a typical indexed query,
 * and every write statement of the service now comes through here.
 */
export const STATEMENT_CACHE_SIZE = 256;
/** Text parameters up to a third of this many UTF-16 units (3 bytes of UTF-8 each at most) are bound from the scratch buffer. */
const SCRATCH_BYTES = 16 * 1024;

/**
 * Options for initSqlJs that instantiate sql.js's WebAssembly as it would, and hand its memory
 * to `onMemory` (Emscripten's documented `instantiateWasm` hook).
 */
export function instantiateCapturingMemory(wasmPath: string, onMemory: (memory: WasmMemory) => void) {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  return {
    instantiateWasm(imports: unknown, receiveInstance: (instance: WasmInstance) => void): object {
      void readFile(wasmPath)
        .then((bytes) => wasm.instantiate(bytes, imports))
        .then(({ instance }) => {
          const memory = Object.values(instance.exports).find((value) => value instanceof wasm.Memory);
          if (memory) onMemory(memory as WasmMemory);
          receiveInstance(instance);
        });
      return {};
    },
  };
}

export interface RawStatements {
  /** Every row of the first statement of `sql`, `params` bound, as arrays of values in the SELECT's order. */
  values(sql: string, params: readonly SqlValue[]): SqlValue[][];
  /** Runs the first statement of `sql` to its end, `params` bound; returns sqlite3_changes(). */
  run(sql: string, params: readonly SqlValue[]): number;
  /** Finalizes every statement it prepared and frees its buffer: before the database is exported, replaced or closed. Not used again after. */
  forget(): void;
}

/** The raw statements for `db`, or null when this sql.js does not let them be made (the engine then uses sql.js's Statement and Database.run()). */
export function openRawStatements(SQL: SqlJsStatic, db: Database, memory: WasmMemory | null): RawStatements | null {
  const c = SQL as unknown as SqliteC;
  const handle = (db as unknown as { db?: unknown }).db;
  const needed = [
    '_sqlite3_prepare_v2', '_sqlite3_bind_text', '_sqlite3_bind_blob', '_sqlite3_bind_int', '_sqlite3_bind_double', '_sqlite3_step',
    '_sqlite3_reset', '_sqlite3_clear_bindings', '_sqlite3_finalize', '_sqlite3_column_count', '_sqlite3_column_type',
    '_sqlite3_column_double', '_sqlite3_column_text', '_sqlite3_column_blob', '_sqlite3_column_bytes', '_sqlite3_errmsg', '_sqlite3_changes',
    '_malloc', '_free', 'stringToNewUTF8', 'lengthBytesUTF8', 'UTF8ToString',
  ] as const;
  if (memory === null || typeof handle !== 'number' || handle === 0 || needed.some((name) => typeof c[name] !== 'function')) return null;
  return new SqliteRawStatements(c, handle, memory);
}

class SqliteRawStatements implements RawStatements {
  private readonly c: SqliteC;
  private readonly db: number;
  private readonly memory: WasmMemory;
  /** A Buffer over the memory; made again when the memory has grown (see currentHeap). */
  private heap: Buffer;
  private readonly statements = new Map<string, number>();
  /** Where text parameters are written for SQLite to copy (SQLITE_TRANSIENT): one at a time. */
  private readonly scratch: number;

  constructor(c: SqliteC, db: number, memory: WasmMemory) {
    this.c = c;
    this.db = db;
    this.memory = memory;
    this.scratch = c._malloc(SCRATCH_BYTES);
    this.heap = Buffer.from(memory.buffer); // after the malloc, which may have grown the memory
  }

  values(sql: string, params: readonly SqlValue[]): SqlValue[][] {
    const c = this.c;
    const statement = this.prepared(sql);
    try {
      this.bind(statement, params);
      const rows: SqlValue[][] = [];
      const columns = c._sqlite3_column_count(statement);
      for (;;) {
        const step = c._sqlite3_step(statement);
        if (step === SQLITE_DONE) return rows;
        if (step !== SQLITE_ROW) throw this.error();
        const row: SqlValue[] = new Array(columns);
        for (let i = 0; i < columns; i++) row[i] = this.column(statement, i);
        rows.push(row);
      }
    } finally {
      c._sqlite3_clear_bindings(statement);
      c._sqlite3_reset(statement);
    }
  }

  run(sql: string, params: readonly SqlValue[]): number {
    const c = this.c;
    const statement = this.prepared(sql);
    try {
      if (params.length > 0) this.bind(statement, params);
      for (;;) {
        const step = c._sqlite3_step(statement);
        if (step === SQLITE_DONE) return c._sqlite3_changes(this.db);
        if (step !== SQLITE_ROW) throw this.error();
      }
    } finally {
      if (params.length > 0) c._sqlite3_clear_bindings(statement);
      c._sqlite3_reset(statement);
    }
  }

  forget(): void {
    for (const statement of this.statements.values()) this.c._sqlite3_finalize(statement);
    this.statements.clear();
    this.c._free(this.scratch);
  }

  /** One column of the current row, as sql.js's Statement.get() gives it. */
  private column(statement: number, i: number): SqlValue {
    const c = this.c;
    switch (c._sqlite3_column_type(statement, i)) {
      case SQLITE_INTEGER:
      case SQLITE_FLOAT:
        return c._sqlite3_column_double(statement, i);
      case SQLITE_TEXT: {
        let start = c._sqlite3_column_text(statement, i);
        if (start === 0) return '';
        const end = start + c._sqlite3_column_bytes(statement, i);
        const heap = this.currentHeap();
        // sql.js decodes with a default TextDecoder, which drops a leading byte order mark.
        if (end - start >= 3 && heap[start] === 0xef && heap[start + 1] === 0xbb && heap[start + 2] === 0xbf) start += 3;
        return utf8Slice(heap, start, end);
      }
      case SQLITE_BLOB: {
        const start = c._sqlite3_column_blob(statement, i);
        const bytes = c._sqlite3_column_bytes(statement, i);
        return new Uint8Array(this.currentHeap().subarray(start, start + bytes));
      }
      default:
        return null;
    }
  }

  /**
   * The Buffer over the memory as it is now. Growing the memory detaches its ArrayBuffer, and a
   * view of a detached buffer has length 0: checked that way, as asking the memory for its buffer
   * is a call into the engine that cost as much as decoding a value.
   */
  private currentHeap(): Buffer {
    if (this.heap.length === 0) this.heap = Buffer.from(this.memory.buffer);
    return this.heap;
  }

  /** Binds as sql.js binds: text as UTF-8, 32-bit integers as int, other numbers as double, null, blobs. */
  private bind(statement: number, params: readonly SqlValue[]): void {
    const c = this.c;
    for (let i = 0; i < params.length; i++) {
      const value = params[i]!;
      const index = i + 1;
      let code: number;
      if (value === null) {
        code = c._sqlite3_bind_blob(statement, index, 0, 0, 0);
      } else if (typeof value === 'number') {
        code = value === (value | 0) ? c._sqlite3_bind_int(statement, index, value) : c._sqlite3_bind_double(statement, index, value);
      } else if (typeof value === 'string' && value.length * 3 <= SCRATCH_BYTES && value.isWellFormed()) {
        const length = this.currentHeap().write(value, this.scratch, 'utf8');
        code = c._sqlite3_bind_text(statement, index, this.scratch, length, SQLITE_TRANSIENT);
      } else if (typeof value === 'string') {
        const text = c.stringToNewUTF8(value);
        try {
          code = c._sqlite3_bind_text(statement, index, text, c.lengthBytesUTF8(value), SQLITE_TRANSIENT);
        } finally {
          c._free(text);
        }
      } else {
        const blob = c._malloc(Math.max(1, value.length));
        try {
          this.currentHeap().set(value, blob);
          code = c._sqlite3_bind_blob(statement, index, blob, value.length, SQLITE_TRANSIENT);
        } finally {
          c._free(blob);
        }
      }
      if (code !== SQLITE_OK) throw this.error();
    }
  }

  /** The prepared statement for `sql`, from the cache or prepared now. */
  private prepared(sql: string): number {
    const cached = this.statements.get(sql);
    if (cached !== undefined) {
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    const c = this.c;
    const text = c.stringToNewUTF8(sql);
    const out = c._malloc(4);
    let statement = 0;
    try {
      if (c._sqlite3_prepare_v2(this.db, text, -1, out, 0) !== SQLITE_OK) throw this.error();
      statement = this.currentHeap().readUInt32LE(out);
    } finally {
      c._free(out);
      c._free(text);
    }
    if (statement === 0) throw new Error('Nothing to prepare');
    if (this.statements.size >= STATEMENT_CACHE_SIZE) {
      const [oldest, evicted] = this.statements.entries().next().value!;
      this.statements.delete(oldest);
      c._sqlite3_finalize(evicted);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  /** SQLite's message for the last failure, as sql.js reports it. */
  private error(): Error {
    return new Error(this.c.UTF8ToString(this.c._sqlite3_errmsg(this.db)));
  }
}
