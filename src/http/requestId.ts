/**
 * Every response carries X-Request-Id: the caller's own when it sent a sane one (so a partner
 * can follow one id through both systems' logs), a fresh one otherwise.
 */
import type { Middleware } from 'koa';
import { newId } from '../ids.ts';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    // Node's own header objects, not Koa's getters and setters: the same values, at a fraction of a light request's cost.
    const offered = ctx.req.headers['x-request-id'] ?? '';
    const requestId = typeof offered === 'string' && ACCEPTABLE.test(offered) ? offered : newId('req');
    ctx.state.requestId = requestId;
    ctx.res.setHeader('X-Request-Id', requestId);
    await next();
  };
}
