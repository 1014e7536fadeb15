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

export function toPage<T>(rows: T[], limit: number, idOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, lastId: rows.length > limit && last ? idOf(last) : null };
}
