/**
 * Every response carries X-Request-Id: the caller's own when it sent a sane one (so a partner
 * can follow one id through both systems' logs), a fresh one otherwise.
 */
import type { Middleware } from 'koa';
import { newId } from '../ids.ts';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    const offered = ctx.get('X-Request-Id');
    const requestId = ACCEPTABLE.test(offered) ? offered : newId('req');
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    await next();
  };
}
