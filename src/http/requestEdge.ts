/**
 * What the edge gives a handler of what only the transport knows, on the request's context: a
 * signal for the client going away, the multipart upload, and who and where for the audit log. The Koa context stays behind a
 * symbol, so a handler (typed by RequestContext) sees what it needs and not the framework.
 */
import type { Context } from 'koa';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import type { AuditOrigin } from '../domain/audit/chain.ts';
import { multipartUpload } from './bodyParsers.ts';

const KOA = Symbol('koa');

/** A request context as the edge builds it: the Koa context behind the symbol. */
export type WithKoa<T> = T & { [KOA]: Context };

/** Links a request's context to its Koa context. */
export function attachKoa<T extends object>(ctx: T, koa: Context): WithKoa<T> {
  (ctx as WithKoa<T>)[KOA] = koa;
  return ctx as WithKoa<T>;
}

/** The Koa context of a request context the edge built (or one made from it with Object.create). */
export function koaOf(ctx: object): Context {
  return (ctx as WithKoa<object>)[KOA];
}

/** Aborts when the response closes before it finished: the client went away. */
function clientGone(koa: Context): AbortSignal {
  const disconnected = new AbortController();
  const res = koa.res;
  res.once('close', () => {
    if (!res.writableFinished) disconnected.abort();
  });
  return disconnected.signal;
}

/**
 * Getters for the per-operation prototype of request contexts. Each is worked out on first use only:
 * most handlers use neither, and a listener per request costs (issue 17's profile).
 */
export const requestEdgeProperties: PropertyDescriptorMap = {
  signal: {
    get(this: object): AbortSignal {
      const koa = koaOf(this);
      return (koa.state.clientGone ??= clientGone(koa)) as AbortSignal;
    },
  },
  upload: {
    get(this: object) {
      return multipartUpload(koaOf(this));
    },
  },
  apiVersion: {
    get(this: object): string {
      // Settled before the handler runs (src/http/versions.ts apiVersionOf).
      return koaOf(this).state.apiVersion as string;
    },
  },
  origin: {
    get(this: object): AuditOrigin {
      const koa = koaOf(this);
      return (koa.state.origin ??= requestOrigin(koa)) as AuditOrigin;
    },
  },
};

/** The longest user agent an audit entry keeps (the contract's bound). */
const USER_AGENT_MAX = 1000;

/** Who and where a request comes from, for the audit log: its API key (named by the audit use case), address, user agent and id. */
function requestOrigin(koa: Context): AuditOrigin {
  const principal = koa.state.principal as ApiKeyPrincipal | undefined;
  const userAgent = koa.get('user-agent');
  return {
    actor: principal ? { type: 'apiKey', id: principal.keyId, name: null } : { type: 'system', id: null, name: null },
    clientAddress: koa.request.ip || null,
    userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
    requestId: (koa.state.requestId as string | undefined) ?? null,
  };
}
