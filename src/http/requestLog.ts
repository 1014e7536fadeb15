/**
 * The edge's part of the request log: once a /v1 request whose key was recognised has been
 * answered, what the log keeps of it is handed to `record` (a buffer the app wires in; the
 * writing happens later, in batches, off every request's path). Requests refused before a key was
 * recognised (401, an unknown path) belong to no account and are not recorded; nor are bank
 * partners' requests (POST /v1/banks/verify), which are no account's.
 *
 * What is kept: no request body, no query string, no header but Idempotency-Key (and the caller's
 * sane X-Request-Id, as clientRequestId); for a 4xx or 5xx answer the problem body as sent
 * (problems never carry secrets: test/api/requestLogs.test.ts scans the stored rows).
 */
import type { Context, Middleware } from 'koa';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import type { RequestLogEntry } from '../store/requestLogs.ts';

const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,255}$/;

/** `now` is the app's clock (milliseconds), so that entries carry the time the rest of the service keeps. */
export function requestLogMiddleware(record: (entry: RequestLogEntry) => void, now: () => number): Middleware {
  const take = (koa: Context, arrivedAt: number, started: number): void => {
    const principal = koa.state.principal as ApiKeyPrincipal | undefined;
    const operationId = koa.state.operationId as string | undefined;
    if (!principal || !operationId) return;
    const status = koa.res.statusCode;
    const idempotencyKey = koa.req.headers['idempotency-key'];
    record({
      accountId: principal.accountId,
      requestId: koa.state.requestId as string,
      clientRequestId: (koa.state.clientRequestId as string | undefined) ?? null,
      keyId: principal.keyId,
      method: koa.method,
      operationId,
      // Whole here: the recorder bounds what it keeps (src/services/requestLogs.ts).
      path: koa.path,
      pathLength: koa.path.length,
      status,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
      clientAddress: koa.request.ip,
      idempotencyKey: typeof idempotencyKey === 'string' && IDEMPOTENCY_KEY.test(idempotencyKey) ? idempotencyKey : null,
      idempotentReplayed: koa.res.getHeader('Idempotent-Replayed') === 'true',
      problem: status >= 400 && typeof koa.body === 'string' ? koa.body : null,
      arrivedAt,
    });
  };
  // A promise's then rather than an async function around `next`: one frame and promise fewer on every request.
  return (koa, next) => {
    const arrivedAt = now();
    const started = performance.now();
    return next().then(
      () => take(koa, arrivedAt, started),
      (err: unknown) => {
        take(koa, arrivedAt, started);
        throw err;
      },
    );
  };
}
