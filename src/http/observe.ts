/**
 * Metrics and a span for each request of the API (/v1) and the dashboard (/dashboard), outermost
 * but for the request id: the span is named by the operationId once the contract has routed the
 * request (its parent is the caller's `traceparent`, when it sent one), and the request's duration
 * is counted by operationId, method and status class, never by path or account. Requests refused
 * with 429 are counted by the problem's code. Not installed when metrics and tracing are both off.
 */
import type { Middleware, Context } from 'koa';
import type { AppContext } from '../context.ts';
import { statusClass } from '../observability/metrics.ts';
import { incomingTraceContext, inSpan, ROOT_CONTEXT, SpanKind, SpanStatusCode } from '../observability/tracing.ts';
import { isApiPath } from './framework/koaFastPath.ts';

const isDashboardPath = (path: string) => path === '/dashboard' || path.startsWith('/dashboard/');

export function observeRequests(app: Pick<AppContext, 'metrics' | 'tracer'>): Middleware | null {
  const { metrics, tracer } = app;
  if (metrics === null && tracer === null) return null;

  const record = (koa: Context, api: boolean, started: number): void => {
    if (metrics === null) return;
    const status = koa.res.statusCode;
    const statusLabel = statusClass(status);
    if (api) {
      const operation = (koa.state.operationId as string | undefined) ?? 'unrouted';
      metrics.httpRequestDuration.observe({ operation, method: koa.method, status_class: statusLabel }, (performance.now() - started) / 1000);
    } else {
      metrics.dashboardRequests.inc({ method: koa.method, status_class: statusLabel });
    }
    if (status === 429) metrics.rateLimitRefusals.inc({ kind: (koa.state.problemCode as string | undefined) ?? 'unknown' });
  };

  return async (koa, next) => {
    const api = isApiPath(koa.path);
    if (!api && !isDashboardPath(koa.path)) return next();
    const started = performance.now();
    if (tracer === null) {
      return next().then(
        () => record(koa, api, started),
        (err: unknown) => {
          record(koa, api, started);
          throw err;
        },
      );
    }
    const parent = koa.req.headers.traceparent === undefined ? ROOT_CONTEXT : incomingTraceContext(koa.req.headers);
    const name = api ? `${koa.method} /v1` : `${koa.method} /dashboard`;
    return inSpan(tracer, name, { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': koa.method, 'mos.request_id': koa.state.requestId as string } }, async (span) => {
      koa.state.traceId = span!.spanContext().traceId;
      try {
        await next();
      } finally {
        const operation = koa.state.operationId as string | undefined;
        if (operation) {
          span!.updateName(operation);
          span!.setAttribute('mos.operation_id', operation);
        }
        span!.setAttribute('http.response.status_code', koa.res.statusCode);
        if (koa.res.statusCode >= 500) span!.setStatus({ code: SpanStatusCode.ERROR });
        record(koa, api, started);
      }
    });
  };
}
