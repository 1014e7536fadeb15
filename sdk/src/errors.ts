/**
 * Errors the client throws. Every error answer of the API is an RFC 9457 problem with a stable
 * `code`; the client throws it as a `ProblemError` whose `code` is typed with the codes the
 * contract lists (and any string, since codes may be added: handle an unknown one by `status`).
 */
import type { components } from './generated/api.ts';
import type { KnownProblemCode } from './generated/problemCodes.ts';

export type Problem = components['schemas']['Problem'];

/** A listed code, or a code added after this SDK was built. */
export type ProblemCode = KnownProblemCode | (string & {});

export class ProblemError extends Error {
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The problem's stable code (`quote_not_found`, `rate_limited`…), or `http_<status>` when the answer was not a problem. */
  readonly code: ProblemCode;
  /** The whole problem body, with `errors[]` pointers for validation failures. */
  readonly problem: Problem | undefined;
  /** The request id to quote to support (the problem's, or the X-Request-Id header). */
  readonly requestId: string | undefined;
  readonly response: Response;

  constructor(response: Response, problem: Problem | undefined) {
    const code = problem?.code ?? `http_${response.status}`;
    super(problem ? `${problem.status} ${code}: ${problem.detail ?? problem.title}` : `HTTP ${response.status} without a problem body`);
    this.name = 'ProblemError';
    this.status = response.status;
    this.code = code;
    this.problem = problem;
    this.requestId = problem?.requestId ?? response.headers.get('x-request-id') ?? undefined;
    this.response = response;
  }
}

export function isProblemError(value: unknown, code?: ProblemCode): value is ProblemError {
  return value instanceof ProblemError && (code === undefined || value.code === code);
}

/** Reads a failed response as a ProblemError (without consuming the caller's copy of the body). */
export async function problemErrorOf(response: Response): Promise<ProblemError> {
  const type = response.headers.get('content-type') ?? '';
  let problem: Problem | undefined;
  if (/^application\/(problem\+)?json/i.test(type)) {
    try {
      const body = (await response.clone().json()) as Problem;
      if (body && typeof body === 'object' && typeof body.code === 'string') problem = body;
    } catch {
      // not JSON after all: a proxy's error page
    }
  }
  return new ProblemError(response, problem);
}
