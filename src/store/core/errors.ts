/**
 * Errors raised by the store engines, and portable helpers to classify SQL errors.
 *
 * The helpers check both the SQLite message (sql.js) and the SQLSTATE code PostgreSQL
 * drivers put on `err.code`, so repositories never depend on one engine's wording.
 */

/** The store is closed, closing, or failed (a journal write could not be made durable). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The store cannot serve now but will by itself: callers are told to retry after
 * `retryAfterSeconds`. Each kind below says what failed; the HTTP edge maps each to its 503.
 */
abstract class StoreUnavailableForNowError extends StoreUnavailableError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * A write to the data directory failed (a full disk, an I/O error): the store is degraded. Writes
 * are refused until a write succeeds again; reads keep answering from memory. The HTTP edge maps
 * it to 503 `storage_unavailable`.
 */
export class StorageUnavailableError extends StoreUnavailableForNowError {}

/**
 * PostgreSQL: the database cannot be reached, or it ended the connection (the server is down or
 * restarting, out of connections, the network failed). The instance stays up and `GET /readyz`
 * says not ready meanwhile; the HTTP edge maps it to 503 `database_unavailable`, since the caller
 * can do nothing but try again later.
 */
export class DatabaseUnavailableError extends StoreUnavailableForNowError {}

/** A file operation in the data directory failed; the message names the file and the reason. */
export class StorageWriteError extends Error {
  readonly path: string;
  readonly code: string | undefined;
  constructor(operation: string, path: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const reason = code === 'ENOSPC' ? 'no space left on device' : code === 'EDQUOT' ? 'disk quota exceeded' : (cause as Error | undefined)?.message ?? String(cause);
    super(`could not ${operation} ${path}: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`, { cause });
    this.name = 'StorageWriteError';
    this.path = path;
    this.code = code;
  }
}

/** The journal or snapshot on disk is damaged or inconsistent; the store refuses to open. */
export class StoreCorruptionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreCorruptionError';
  }
}

/**
 * The operator asked to rotate a sealing key that this store cannot rotate itself: it comes from
 * SECRETS_KEY (the environment), or several instances share it (PostgreSQL). The message says how.
 */
export class SecretsKeyFromEnvironmentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyFromEnvironmentError';
  }
}

/**
 * PostgreSQL: this instance's keyring cannot open secrets sealed in the shared database (another
 * instance runs with another SECRETS_KEY); the store refuses to open. The message names the fix.
 */
export class SecretsKeyMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyMismatchError';
  }
}

/** Another live process holds the data directory's LOCK file. */
export class DataDirLockedError extends Error {
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(`another process${pid > 0 ? ` (pid ${pid})` : ''} holds the data directory ${dataDir}`);
    this.name = 'DataDirLockedError';
    this.pid = pid;
  }
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  return '';
}

function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** Socket errors of a connection to the database server. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs that say the server or the session is gone, not that the statement was wrong. */
const CONNECTION_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping, or the session was terminated
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '53300', // too_many_connections
]);

/**
 * True when a PostgreSQL driver error means the connection to the database failed (class 08, a
 * shutdown, no connection slots, a socket error, node-postgres's own "Connection terminated"),
 * as opposed to an error of the statement itself.
 */
export function isConnectionFailure(err: unknown): boolean {
  const code = codeOf(err);
  if (typeof code === 'string' && (code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || CONNECTION_ERRNOS.has(code))) return true;
  return /^Connection terminated|^connection timeout|Client has encountered a connection error/i.test(messageOf(err));
}

/** True when `err` is a unique / primary-key constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  if (codeOf(err) === '23505') return true;
  const msg = messageOf(err);
  return msg.includes('UNIQUE constraint failed') || msg.includes('duplicate key value violates unique constraint');
}

/** True when `err` is a foreign-key constraint violation (SQLite or PostgreSQL). */
export function isForeignKeyViolation(err: unknown): boolean {
  if (codeOf(err) === '23503') return true;
  const msg = messageOf(err);
  return msg.includes('FOREIGN KEY constraint failed') || msg.includes('violates foreign key constraint');
}
