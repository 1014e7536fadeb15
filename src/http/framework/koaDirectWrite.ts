/**
 * Patch of Koa: a JSON result written to the socket by the contract instead of by Koa's respond().
 *
 * Replaces: for a JSON body only, what `ctx.body = value` (the body setter of koa/lib/response.js:
 * Content-Type, Content-Length) and `respond(ctx)` (koa/lib/application.js: JSON.stringify and
 * res.end) would do. It sets Koa's documented `ctx.respond = false`, which makes respond() return
 * at once and lets koaFastPath.ts skip handleRequest for the request.
 *
 * Why: Koa's setters and respond() were a tenth of a light request's CPU (issue 17's profile of
 * GET /v1/account; the commit "Edge: /v1 past Koa's per-request machinery when the contract has
 * written the response itself"). The access log still sees the status.
 *
 * Checked against: koa 3.3.0 (pinned exactly in package.json). test/unit/http/framework/
 * koaDirectWrite.test.ts sends the same result both ways and fails when Koa's status, headers or
 * bytes differ from what is written here.
 */
import type { Context } from 'koa';

/**
 * True when a body of this status may be written here, as Koa's respond() would write it: not for
 * HEAD, a status without a body (204, 205, 304), or a response already ended or whose socket is gone
 * (Koa's own path handles those).
 */
export function writesDirectly(koa: Context, status: number): boolean {
  const res = koa.res;
  return koa.method !== 'HEAD' && status !== 204 && status !== 205 && status !== 304 && !res.writableEnded && !res.headersSent && res.socket?.writable !== false;
}

/**
 * Writes a JSON response whose body is ready: the bytes, headers and status Koa would send (the headers
 * set before, then the result's, Content-Type, Content-Length).
 */
export function writeDirectly(koa: Context, status: number, headers: Record<string, string> | undefined, body: string): void {
  const res = koa.res;
  koa.respond = false;
  res.statusCode = status;
  if (headers) for (const name in headers) res.setHeader(name, headers[name]!);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
