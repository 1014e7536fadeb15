/**
 * The time bounds callers give (the export's and the events feed's `createdFrom`/`createdTo`, a
 * recovery's `since`): a date or a date-time with an offset, read as ISO 8601 UTC, or a 400.
 */
import { parseInstant } from '../domain/exports/dateRange.ts';
import { fail } from '../errors.ts';

/** The moment `value` names, as ISO 8601 UTC; a 400 pointing at `pointer` when it names none (`2026-02-30`). */
export function instantOrRefuse(value: string, pointer: string): string {
  const instant = parseInstant(value);
  if (instant === null) {
    throw fail.validation(`${pointer} is not a valid date or date-time`, [
      { pointer, message: 'is not a valid date (2026-11-21) or date-time with an offset (2026-11-21T09:30:00Z)' },
    ]);
  }
  return instant;
}

/** The query's `createdFrom` (inclusive) and `createdTo` (exclusive), each optional; 400 `invalid_date_range` unless from is before to. */
export function createdRangeOrRefuse(query: { createdFrom?: string | undefined; createdTo?: string | undefined }): {
  createdFrom: string | undefined;
  createdTo: string | undefined;
} {
  const createdFrom = query.createdFrom === undefined ? undefined : instantOrRefuse(query.createdFrom, '#/query/createdFrom');
  const createdTo = query.createdTo === undefined ? undefined : instantOrRefuse(query.createdTo, '#/query/createdTo');
  if (createdFrom !== undefined && createdTo !== undefined && createdFrom >= createdTo) {
    throw fail.invalid('invalid_date_range', `createdFrom (${createdFrom}) must be before createdTo (${createdTo}).`, [
      { pointer: '#/query/createdTo', message: 'must be after createdFrom' },
    ]);
  }
  return { createdFrom, createdTo };
}
