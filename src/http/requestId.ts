/**
 * Every response carries X-Request-Id: an id the service made for this request, always. A caller's
 * own X-Request-Id, when it is sane, is kept beside it as the request's clientRequestId (in the
 * request log, searchable, and in the access log line), so that a partner can still follow its own
 * id through both systems' logs; it is never the request's id, because a caller could otherwise
 * reuse another request's id and shadow that request's log entry.
 */
import type { Middleware } from 'koa';
import { newId } from '../ids.ts';

/** What a client's id may be to be kept: anything else (too long, spaces, markup) is dropped, not refused. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    const requestId = newId('req');
    ctx.state.requestId = requestId;
    // Node's own header objects, not Koa's getters and setters: the same values, at a fraction of a light request's cost.
    const offered = ctx.req.headers['x-request-id'];
    if (typeof offered === 'string' && CLIENT_REQUEST_ID.test(offered)) ctx.state.clientRequestId = offered;
    ctx.res.setHeader('X-Request-Id', requestId);
    await next();
  };
}
