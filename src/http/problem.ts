/**
 * The edge's view of a failure: an HTTP status, a title and the headers it needs. The edge's own
 * refusals (routing, credentials, bodies, rate limits) are made here; every AppError from the
 * layers below is mapped here, by its kind, and nowhere else.
 */
import { AppError, type ErrorFacts, type ErrorKind, type FieldIssue } from '../errors.ts';

export type ValidationIssue = FieldIssue;
export type ProblemExtras = ErrorFacts;

export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly extras: ProblemExtras;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, title: string, detail: string, extras: ProblemExtras = {}, headers: Record<string, string> = {}) {
    super(detail);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = code;
    this.title = title;
    this.detail = detail;
    this.extras = extras;
    this.headers = headers;
  }
}

export function isApiProblem(value: unknown): value is ApiProblem {
  return value instanceof ApiProblem;
}

/** The status and title of each kind of AppError. */
const STATUS_OF_KIND: Record<ErrorKind, { status: number; title: string }> = {
  invalid: { status: 400, title: 'The request is not valid' },
  unauthenticated: { status: 401, title: 'Missing or invalid credentials' },
  forbidden: { status: 403, title: 'The API key lacks the needed role' },
  not_found: { status: 404, title: 'Resource not found' },
  conflict: { status: 409, title: 'Conflict with the current state' },
  too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported content type' },
  refused: { status: 422, title: 'The request breaks a business rule' },
  rate_limited: { status: 429, title: 'Too many requests' },
  upstream_failed: { status: 502, title: 'An upstream partner failed' },
  unavailable: { status: 503, title: 'Service unavailable' },
};

/** The HTTP status of an AppError's kind: the one mapping, shared by the API's problems and the dashboard's error pages. */
export function statusOfKind(kind: ErrorKind): number {
  return STATUS_OF_KIND[kind].status;
}

/** Titles more precise than their kind's, for codes a caller meets often. */
const TITLE_OF_CODE: Record<string, string> = {
  scope_missing: 'The API key lacks the needed scope',
  scope_escalation: 'A key cannot grant more than its creator holds',
  bank_partner_unavailable: 'The bank partner is unavailable',
  verification_attempts_exceeded: 'Too many failed verifications',
  storage_unavailable: 'Storage unavailable',
  database_unavailable: 'Database unavailable',
  bank_token_failures_exceeded: 'Too many failed bank token checks',
  bank_partner_refusals_exceeded: 'Too many tokens refused by the bank partner',
};

/** The problem an AppError is at the HTTP edge. */
export function problemOf(err: AppError): ApiProblem {
  const { status, title } = STATUS_OF_KIND[err.kind];
  const headers: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.retryAfterSeconds);
  if (err.kind === 'unauthenticated') headers['WWW-Authenticate'] = 'Bearer realm="mortgage-origination"';
  return new ApiProblem(status, err.code, TITLE_OF_CODE[err.code] ?? title, err.detail, err.facts, headers);
}

export const problems = {
  validation: (detail: string, errors: ValidationIssue[]) =>
    new ApiProblem(400, 'validation_failed', 'The request is not valid', detail, { errors }),
  malformedJson: (detail: string) => new ApiProblem(400, 'malformed_json', 'The request body is not valid JSON', detail),
  badRequest: (code: string, detail: string, errors?: ValidationIssue[]) =>
    new ApiProblem(400, code, 'The request is not valid', detail, errors ? { errors } : {}),
  unauthorized: (detail: string) =>
    new ApiProblem(401, 'unauthorized', 'Missing or invalid credentials', detail, {}, {
      'WWW-Authenticate': 'Bearer realm="mortgage-origination"',
    }),
  forbidden: (detail: string) => new ApiProblem(403, 'forbidden', 'The API key lacks the needed role', detail),
  notFound: (detail: string) => new ApiProblem(404, 'not_found', 'Resource not found', detail),
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    new ApiProblem(405, 'method_not_allowed', 'Method not allowed', `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, {}, {
      Allow: allowed.join(', '),
    }),
  conflict: (code: string, detail: string, extras: ProblemExtras = {}) =>
    new ApiProblem(409, code, 'Conflict with the current state', detail, extras),
  payloadTooLarge: (detail: string) => new ApiProblem(413, 'payload_too_large', 'Request body too large', detail),
  unsupportedMediaType: (detail: string) => new ApiProblem(415, 'unsupported_media_type', 'Unsupported content type', detail),
  unprocessable: (code: string, detail: string, extras: ProblemExtras = {}) =>
    new ApiProblem(422, code, 'The request breaks a business rule', detail, extras),
  rateLimited: (detail: string, headers: Record<string, string>) =>
    new ApiProblem(429, 'rate_limited', 'Too many requests', detail, {}, headers),
  badGateway: (code: string, detail: string) => new ApiProblem(502, code, 'An upstream partner failed', detail),
  internal: () =>
    new ApiProblem(500, 'internal_error', 'Internal server error', 'Something went wrong on our side. Quote the requestId to support.'),
};

/** The problem+json body of a problem, as the Problem schema of the spec describes it. */
export function problemBody(problem: ApiProblem, requestId: string, path: string): Record<string, unknown> {
  return {
    type: `/problems/${problem.code.replaceAll('_', '-')}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    // `instance` must be a URI reference; a path with broken percent-encoding is not one.
    ...(isDecodable(path) ? { instance: path } : {}),
    code: problem.code,
    requestId,
    ...problem.extras,
  };
}

function isDecodable(path: string): boolean {
  try {
    decodeURI(path);
    return true;
  } catch {
    return false;
  }
}
