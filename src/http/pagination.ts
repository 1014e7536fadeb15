/**
 * Opaque list cursors. A cursor carries the last id of the page it ends, base64url-encoded so
 * callers treat it as a token rather than build one; a tampered cursor is a 400, not a 500.
 */
import { isId, type IdPrefix } from '../ids.ts';
import type { Page } from '../store/pagination.ts';
import { problems } from './problem.ts';

function encodeCursor(lastId: string | null): string | null {
  return lastId === null ? null : Buffer.from(JSON.stringify({ after: lastId })).toString('base64url');
}

/** A list page as the API answers it: `{ data, nextCursor }`. */
export function listBody<T>(page: Page<T>): { data: T[]; nextCursor: string | null } {
  return { data: page.items, nextCursor: encodeCursor(page.lastId) };
}

/**
 * The id a cursor continues after. `after` is the id prefix of the list's records, or a check for
 * lists keyed by something else (export formats by name); anything else is a 400.
 */
export function decodeCursor(cursor: string | undefined, after: IdPrefix | ((key: string) => boolean)): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof decoded.after === 'string' && (typeof after === 'string' ? isId(after, decoded.after) : after(decoded.after))) {
      return decoded.after;
    }
  } catch {
    // fall through to the refusal below
  }
  throw problems.badRequest('invalid_cursor', 'The cursor is not one this list returned; start again without it.', [
    { pointer: '#/query/cursor', message: 'is not a valid cursor' },
  ]);
}
