/**
 * The store engines' "cannot serve now" failures (a degraded sql.js disk, an unreachable
 * PostgreSQL) as the AppError a caller is answered with: a 503 problem from the API, the 503 page
 * from the dashboard.
 */
import { fail, type AppError } from '../errors.ts';
import { DatabaseUnavailableError, StorageUnavailableError } from '../store/core/errors.ts';

/** The AppError for a store failure that only time heals, or null for any other error. */
export function storeUnavailability(err: unknown): AppError | null {
  // The disk refused a write: the store is degraded and heals by itself (reads still answer).
  if (err instanceof StorageUnavailableError) {
    return fail.unavailable(
      'storage_unavailable',
      'The service cannot store changes right now (its disk refused a write); nothing was changed. Reads still work. Retry after the Retry-After delay.',
      err.retryAfterSeconds,
    );
  }
  // PostgreSQL cannot be reached: the caller may simply retry.
  if (err instanceof DatabaseUnavailableError) {
    return fail.unavailable(
      'database_unavailable',
      'The service cannot reach its database right now. Retry after the Retry-After delay (a POST with the same Idempotency-Key, so that it takes effect at most once).',
      err.retryAfterSeconds,
    );
  }
  return null;
}
