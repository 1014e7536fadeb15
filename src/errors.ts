/**
 * The one error type of the service, transport-neutral: use cases, background work and the admin
 * command line throw an AppError; only the HTTP edge (src/http/problem.ts) turns its kind into a
 * status and an RFC 9457 problem, and the command line turns it into a message.
 *
 * A business outcome (a pricing refusal, a referral) is a value, never an AppError read back by
 * its kind: callers that need to branch on an outcome get it as a value from the use case.
 */

/** What went wrong, in words every transport can map: the edge maps each to one HTTP status. */
export type ErrorKind =
  /** The request is malformed or breaks the contract's form (400). */
  | 'invalid'
  /** Credentials are missing or not valid (401). */
  | 'unauthenticated'
  /** Valid credentials without the needed role (403). */
  | 'forbidden'
  /** No such resource for this caller (404): never reveals another account's. */
  | 'not_found'
  /** The resource's current state does not allow it (409). */
  | 'conflict'
  /** The body is larger than allowed (413). */
  | 'too_large'
  /** The body's media type cannot be taken (415). */
  | 'unsupported_media_type'
  /** Well formed, but breaks a business rule (422). */
  | 'refused'
  /** Too many requests; retry later (429). */
  | 'rate_limited'
  /** A partner the service depends on failed (502). */
  | 'upstream_failed'
  /** The service cannot take this now, through no fault of the request (503). */
  | 'unavailable';

/** A field the error is about, as a JSON pointer into the request (`/amount`, `#/query/format`). */
export interface FieldIssue {
  pointer: string;
  message: string;
}

/** Machine-readable facts beside the detail (pointers, the current status, valid choices…). */
export interface ErrorFacts {
  errors?: FieldIssue[];
  currentStatus?: string;
  validFormats?: string[];
  [key: string]: unknown;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Stable, for programs: `quote_not_found`, `invalid_transition`… */
  readonly code: string;
  /** For people: what happened and what to do. */
  readonly detail: string;
  readonly facts: ErrorFacts;
  /** When a retry may succeed (rate limits, partner outages, storage trouble). */
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: ErrorKind, code: string, detail: string, facts: ErrorFacts = {}, retryAfterSeconds?: number) {
    super(detail);
    this.name = 'AppError';
    this.kind = kind;
    this.code = code;
    this.detail = detail;
    this.facts = facts;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

const withIssues = (errors: FieldIssue[] | undefined): ErrorFacts => (errors ? { errors } : {});

/** Throws 400 `validation_failed` for the issues found, the first named in the detail; nothing when there are none. */
export function throwIfIssues(issues: FieldIssue[]): void {
  if (issues.length > 0) throw fail.validation(`${issues[0]!.pointer} ${issues[0]!.message}`, issues);
}

/** Constructors for the errors use cases raise, by kind. */
export const fail = {
  /** A request field breaks the contract's form: 400 `validation_failed` with pointers. */
  validation: (detail: string, errors: FieldIssue[]) => new AppError('invalid', 'validation_failed', detail, { errors }),
  invalid: (code: string, detail: string, errors?: FieldIssue[], facts: ErrorFacts = {}) =>
    new AppError('invalid', code, detail, { ...withIssues(errors), ...facts }),
  unauthenticated: (detail: string) => new AppError('unauthenticated', 'unauthorized', detail),
  /** Valid credentials without the needed role: 403. */
  forbidden: (detail: string) => new AppError('forbidden', 'forbidden', detail),
  /** Valid credentials refused for a reason `code` names (a missing scope, an escalation): 403. */
  denied: (code: string, detail: string, facts: ErrorFacts = {}) => new AppError('forbidden', code, detail, facts),
  notFound: (detail: string, code = 'not_found') => new AppError('not_found', code, detail),
  conflict: (code: string, detail: string, facts: ErrorFacts = {}) => new AppError('conflict', code, detail, facts),
  refused: (code: string, detail: string, facts: ErrorFacts = {}) => new AppError('refused', code, detail, facts),
  unsupportedMediaType: (detail: string) => new AppError('unsupported_media_type', 'unsupported_media_type', detail),
  rateLimited: (code: string, detail: string, retryAfterSeconds: number) => new AppError('rate_limited', code, detail, {}, retryAfterSeconds),
  upstreamFailed: (code: string, detail: string, retryAfterSeconds?: number) =>
    new AppError('upstream_failed', code, detail, {}, retryAfterSeconds),
  unavailable: (code: string, detail: string, retryAfterSeconds: number) => new AppError('unavailable', code, detail, {}, retryAfterSeconds),
};
