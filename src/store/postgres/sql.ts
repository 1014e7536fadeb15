/**
 * What the PostgreSQL engine does to the portable SQL of the repositories before sending it, and
 * to the values it sends and receives, so that repositories see exactly what sql.js gives them:
 *
 * - `?` placeholders become `$1, $2, …` (never inside a quoted literal or identifier);
 * - int8 (`bigint` cents, `COUNT(*)`) arrives as a JS number, refused past 2^53 rather than rounded;
 * - timestamptz arrives as ISO 8601 UTC text with milliseconds and `Z` (`2026-11-21T18:30:00.000Z`);
 * - json/jsonb arrive as their text (repositories JSON.parse it themselves), numeric as its text;
 * - parameters: booleans become 0/1 (as sql.js binds them), Uint8Array a Buffer (bytea).
 */
import pg from 'pg';
import type { SqlParams } from '../store.ts';

const cache = new Map<string, string>();
const CACHE_LIMIT = 2_000;

/** Rewrites `?` placeholders to PostgreSQL's numbered ones. */
export function toPgPlaceholders(sql: string): string {
  const cached = cache.get(sql);
  if (cached !== undefined) return cached;
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote !== null) {
      out += c;
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      out += c;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  if (cache.size < CACHE_LIMIT) cache.set(sql, out);
  return out;
}

/** Parameters as the driver should send them. */
export function pgParams(params: SqlParams | undefined): unknown[] {
  if (!params) return [];
  return params.map((v: unknown, i) => {
    if (v === null || typeof v === 'string' || typeof v === 'number') return v;
    if (v instanceof Uint8Array) return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    if (typeof v === 'boolean') return v ? 1 : 0;
    throw new TypeError(`SQL parameter ${i + 1} has unsupported type ${v === undefined ? 'undefined' : typeof v}`);
  });
}

const { builtins } = pg.types;

/** int8 text → number, refusing anything a double cannot hold exactly. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint value ${text} is outside JavaScript's safe integer range`);
  return value;
}

const defaultTimestamptz = pg.types.getTypeParser(builtins.TIMESTAMPTZ) as (text: string) => Date;

/** What PostgreSQL prints for a timestamptz in a UTC session (the engine's connections are), with up to 6 fraction digits. */
const UTC_TIMESTAMPTZ = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00$/;

/**
 * timestamptz text → `YYYY-MM-DDTHH:mm:ss.sssZ`. The UTC form is rewritten as text (an export
 * reads millions: building a Date for each costs more than the rest of the row); any other form
 * (another session time zone, a year past 9999) goes through the driver's parser.
 */
function parseTimestamptz(text: string): string {
  const utc = UTC_TIMESTAMPTZ.exec(text);
  if (utc) return `${utc[1]}T${utc[2]}.${(utc[3] ?? '000').padEnd(3, '0').slice(0, 3)}Z`;
  const date = defaultTimestamptz(text);
  if (Number.isNaN(date.getTime())) throw new RangeError(`timestamptz value ${text} cannot be represented`);
  return date.toISOString();
}

const identity = (text: string): string => text;

/** The type parsers of every connection of the engine (per pool, never global). */
export const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    switch (oid) {
      case builtins.INT8:
        return parseInt8;
      case builtins.TIMESTAMPTZ:
        return parseTimestamptz;
      case builtins.JSON:
      case builtins.JSONB:
      case builtins.NUMERIC:
        return identity;
      default:
        return pg.types.getTypeParser(oid, format);
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
};
