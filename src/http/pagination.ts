/**
 * Opaque list cursors. A cursor carries the last id of the page it ends, base64url-encoded so
 * callers treat it as a token rather than build one; a tampered cursor is a 400, not a 500.
 */
import { problems } from './problem.ts';

export function encodeCursor(lastId: string | null): string | null {
  return lastId === null ? null : Buffer.from(JSON.stringify({ after: lastId })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, idPattern: RegExp): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof decoded.after === 'string' && idPattern.test(decoded.after)) return decoded.after;
  } catch {
    // fall through to the refusal below
  }
  throw problems.badRequest('invalid_cursor', 'The cursor is not one this list returned; start again without it.', [
    { pointer: '#/query/cursor', message: 'is not a valid cursor' },
  ]);
}
