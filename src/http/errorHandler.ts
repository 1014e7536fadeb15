/**
 * The HTTP edge's last line: turns every failure into an RFC 9457 problem+json response and
 * writes one access-log line per request. Nothing internal (stack, SQL, paths) reaches a client.
 */
import type { Middleware } from 'koa';
import type { Logger } from '../log.ts';
import { isAppError } from '../errors.ts';
import { closeAfterResponse } from './lingeringClose.ts';
import { ApiProblem, isApiProblem, problemBody, problemOf, problems } from './problem.ts';
import { storeUnavailability } from './storeUnavailability.ts';

/** Errors thrown by the body parser (co-body / raw-body / formidable) carry a status and a type. */
interface HttpError extends Error {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  httpCode?: number;
  code?: string | number;
}

/** Maps known parser failures to the problem a caller can act on; anything else is internal. */
function toProblem(err: unknown): ApiProblem {
  if (isApiProblem(err)) return err;
  if (isAppError(err)) return problemOf(err);
  const unavailable = storeUnavailability(err);
  if (unavailable) return problemOf(unavailable);
  // A path such as /v1/applications/%ZZ cannot be decoded to match a route.
  if (err instanceof URIError) return problems.badRequest('malformed_path', 'The request path has an invalid percent-encoding.');
  const e = err as HttpError;
  // zlib and brotli errors: a body whose Content-Encoding (gzip, deflate, br) does not decode.
  if (typeof e?.code === 'string' && (e.code.startsWith('Z_') || e.code.startsWith('ERR__ERROR'))) {
    return problems.badRequest('invalid_content_encoding', 'The request body could not be decoded with its Content-Encoding.');
  }
  const status = e?.status ?? e?.statusCode ?? e?.httpCode;
  if (e?.type === 'entity.parse.failed' || (status === 400 && e instanceof SyntaxError)) {
    return problems.malformedJson('The request body is not valid JSON.');
  }
  if (e?.type === 'entity.too.large' || status === 413) {
    return problems.payloadTooLarge(e.message && e.expose !== false ? e.message : 'The request body is too large.');
  }
  if (e?.type === 'charset.unsupported' || e?.type === 'encoding.unsupported' || status === 415) {
    return problems.unsupportedMediaType(e.message || 'Unsupported content encoding.');
  }
  if (e?.type === 'request.aborted') {
    return problems.badRequest('request_aborted', 'The client closed the connection before the body arrived.');
  }
  if (typeof status === 'number' && status >= 400 && status < 500 && e.expose) {
    return problems.badRequest('bad_request', e.message);
  }
  return problems.internal();
}

export function errorHandler(log: Logger): Middleware {
  // The access log line is built only when it is written (LOG_LEVEL=info or lower).
  const accessLog = log.isLevelEnabled('info');
  return async (ctx, next) => {
    const started = accessLog ? performance.now() : 0;
    try {
      await next();
    } catch (err) {
      const problem = toProblem(err);
      ctx.state.problemCode = problem.code;
      if (problem.status >= 500) {
        log.error({ err, requestId: ctx.state.requestId, traceId: ctx.state.traceId, method: ctx.method, path: ctx.path }, 'request failed');
      }
      ctx.status = problem.status;
      if (problem.status === 413) closeAfterResponse(ctx); // answer first, then drain a bounded amount and close
      for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
      // Koa re-types an object body as application/json; a string body keeps the type set first.
      ctx.type = 'application/problem+json';
      ctx.body = JSON.stringify(problemBody(problem, ctx.state.requestId, ctx.path));
    } finally {
      if (accessLog) {
        log.info(
          {
            requestId: ctx.state.requestId,
            clientRequestId: ctx.state.clientRequestId,
            traceId: ctx.state.traceId,
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
            accountId: ctx.state.principal?.accountId,
            keyId: ctx.state.principal?.keyId,
          },
          'request',
        );
      }
    }
  };
}
