import type { SqlExecutor, SqlValue } from './store.ts';

/**
 * Keyset pagination over time-ordered ids: newest first, `WHERE id < :after ORDER BY id DESC`.
 * One more row than asked for is read to know whether a next page exists.
 */
export interface PageRequest {
  limit: number;
  /** The last id of the previous page, decoded from the caller's cursor. */
  afterId?: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** The id to continue after, or null on the last page. */
  lastId: string | null;
}

/**
 * The first rows of a list cut by LIMIT, and how many rows the whole list has: what a screen shows
 * when it lists the most pressing items and counts the rest.
 */
export interface Bounded<T> {
  items: T[];
  total: number;
}

/** The select-list item that counts every row the WHERE matched, LIMIT or not (a window over the whole result, on both engines). */
export const TOTAL_ROWS = 'COUNT(*) OVER () AS total_rows';

/** A bounded list from rows that select TOTAL_ROWS. */
export function toBounded<R extends { total_rows: number }, T>(rows: R[], toItem: (row: R) => T): Bounded<T> {
  return { items: rows.map(toItem), total: rows[0]?.total_rows ?? 0 };
}

export function toPage<T>(rows: T[], limit: number, idOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, lastId: rows.length > limit && last ? idOf(last) : null };
}

/** A condition that narrows a list when its value is given: `['status = ?', query.status]`. */
export type OptionalFilter = readonly [clause: string, value: SqlValue | undefined];

/** `select` (a SELECT with its WHERE) and its `params`, with `AND clause` for each filter whose value is given. */
export function narrowed(select: string, params: readonly SqlValue[], filters: readonly OptionalFilter[]): { sql: string; values: SqlValue[] } {
  let sql = select;
  const values = [...params];
  for (const [clause, value] of filters) {
    if (value === undefined) continue;
    sql += ` AND ${clause}`;
    values.push(value);
  }
  return { sql, values };
}

/**
 * A newest-first page of `select` (a SELECT with its WHERE and fixed `params`), narrowed by each
 * filter whose value is given, after the page's last id: the keyset tail every filtered list shares.
 */
export async function filteredPage<R extends object, T>(
  db: SqlExecutor,
  select: string,
  params: readonly SqlValue[],
  filters: readonly OptionalFilter[],
  page: PageRequest,
  toItem: (row: R) => T,
  idOf: (item: T) => string,
): Promise<Page<T>> {
  const { sql, values } = narrowed(select, params, [...filters, ['id < ?', page.afterId]]);
  const rows = await db.all<R>(`${sql} ORDER BY id DESC LIMIT ?`, [...values, page.limit + 1]);
  return toPage(rows.map(toItem), page.limit, idOf);
}
