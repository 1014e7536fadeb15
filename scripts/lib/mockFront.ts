/**
 * The front of the partners' mock: a small HTTP server before Prism, so that the mock answers as
 * the service does wherever the contract alone decides the answer. Prism stays the engine (named
 * examples, `Prefer`, request validation); the front adds what Prism does differently:
 *
 * - unknown paths: `404 not_found`; a known path with another method: `405 method_not_allowed`
 *   with `Allow` (Prism: its own error shapes; OPTIONS: a CORS preflight);
 * - no bearer token: `401 unauthorized` with `WWW-Authenticate`;
 * - bodies: a content type the operation does not take `415`, invalid JSON `400 malformed_json`
 *   (Prism hangs on it), too large `413`, too deep `400 body_too_deep`, a body where none is taken
 *   `400 body_not_allowed`;
 * - schema violations: `400 validation_failed` with `errors[]` pointers built from Prism's
 *   `sl-violations` (Prism answers with the operation's first 422 or 400 example instead);
 * - CORS: none, as the service (Prism adds `Access-Control-*` headers everywhere);
 * - the export: the `format` query chooses the content type (csv, ndjson, json) as the service does;
 * - a problem from Prism's examples carries this request's `instance` and `requestId` (the one in
 *   `X-Request-Id`), as the service's do;
 * - the documented test values (the spec's `x-test-values`, read through the same module as test
 *   mode's, src/contract/testValues.ts): a valid
 *   `POST /v1/banks/verify` for a test account number gets that number's documented answer (its
 *   named example, or its problem).
 *
 * The order of the checks is the service's: route, credentials, body, validation.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { testBankAccount, type TestBankAccount } from '../../src/contract/testValues.ts';
import { depthExceeds, MAX_JSON_DEPTH } from '../../src/http/requestBody.ts';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const REALM = 'Bearer realm="mortgage-origination"';

/** The Accept header that makes Prism answer an export `format` with the service's content type. */
const EXPORT_MEDIA: Record<string, string> = { json: 'application/json', ndjson: 'application/x-ndjson', csv: 'text/csv' };

export interface MockFrontOptions {
  /** The bundled spec, dereferenced. */
  spec: Json;
  /** Prism's base URL (`http://127.0.0.1:<port>`). */
  upstream: string;
  /** The largest JSON body (the service's JSON_BODY_LIMIT_BYTES default). */
  jsonBodyLimitBytes?: number;
  /** Served at /openapi.json, as the service serves its document. */
  publishedSpec?: string;
}

interface Route {
  template: string;
  regex: RegExp;
  item: Json;
}

interface Issue {
  pointer: string;
  message: string;
}

/** The documented test account a verify request's (parsed JSON) body names, if any. */
function testAccountOf(template: string, method: string, json: unknown): TestBankAccount | undefined {
  if (template !== '/v1/banks/verify' || method !== 'post') return undefined;
  const number = (json as Json | null | undefined)?.applicant?.accountNumber;
  return typeof number === 'string' ? testBankAccount(number) : undefined;
}

function routesOf(spec: Json): Route[] {
  return Object.entries<Json>(spec.paths ?? {}).map(([template, item]) => ({
    template,
    regex: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
    item,
  }));
}

// Always an id of the mock's own, as the service's: a caller's X-Request-Id is never echoed.
function requestIdOf(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  return 'req-' + [...randomBytes(26)].map((b) => alphabet[b % 32]).join('');
}

const TITLES: Record<number, string> = {
  400: 'The request is not valid',
  401: 'Missing or invalid credentials',
  404: 'Resource not found',
  405: 'Method not allowed',
  413: 'Request body too large',
  415: 'Unsupported content type',
  502: 'The bank partner is unavailable',
};

function sendProblem(
  res: http.ServerResponse,
  requestId: string,
  path: string,
  status: number,
  code: string,
  detail: string,
  extras: Json = {},
  headers: Record<string, string> = {},
): void {
  const title = code === 'malformed_json' ? 'The request body is not valid JSON' : (TITLES[status] ?? 'The request is not valid');
  const body = JSON.stringify({ type: `/problems/${code.replaceAll('_', '-')}`, title, status, detail, instance: path, code, requestId, ...extras });
  res.writeHead(status, { 'Content-Type': 'application/problem+json', 'X-Request-Id': requestId, ...headers });
  res.end(body);
}


/** Prism's `sl-violations` as the service's `errors[]`: JSON pointers into the body, `#/query/…`, `#/path/…`, `#/header/…`. */
function issuesFromViolations(header: string, operation: Json): Issue[] {
  let violations: Array<{ location?: string[]; severity?: string | number; code?: string | number; message?: string }>;
  try {
    violations = JSON.parse(header);
  } catch {
    return [];
  }
  const parameterName = (where: string, name: string) =>
    ((operation.parameters ?? []) as Json[]).find((p) => p.in === where && String(p.name).toLowerCase() === name.toLowerCase())?.name ?? name;
  const issues: Issue[] = [];
  for (const violation of violations) {
    if (violation.severity !== 'Error' && violation.severity !== 0) continue;
    const [, where = 'body', ...rest] = violation.location ?? [];
    const message = String(violation.message ?? 'is not valid');
    const named = /found '([^']+)'/.exec(message)?.[1] ?? /required property '([^']+)'/.exec(message)?.[1];
    const segments = [...rest, ...(named !== undefined && (violation.code === 'additionalProperties' || violation.code === 'required') ? [named] : [])];
    const short = message.replace(/^Request (body( property \S+)?|(query|path) parameter \S+|header \S+)\s*/i, '');
    let pointer: string;
    if (where === 'body') pointer = '/' + segments.join('/');
    else if (where === 'query' || where === 'path') pointer = `#/${where}/${[parameterName(where, segments[0] ?? ''), ...segments.slice(1)].join('/')}`;
    else pointer = `#/${where}/${segments.join('/')}`;
    const text = violation.code === 'additionalProperties' ? 'is not a known field' : violation.code === 'required' ? 'is required' : short;
    if (!issues.some((i) => i.pointer === pointer && i.message === text)) issues.push({ pointer, message: text });
  }
  return issues;
}

/**
 * Prism's answer as bytes. A problem example (`Prefer: code=429`, `Prefer: example=…`) gets this
 * request's `instance` and `requestId`, as the service's problems do: the example's own (another
 * path, a fixed id) would not match the request or its `X-Request-Id`.
 */
async function answerBody(answer: Response, path: string, requestId: string): Promise<Buffer> {
  const bytes = Buffer.from(await answer.arrayBuffer());
  if (!/^application\/problem\+json/i.test(answer.headers.get('content-type') ?? '')) return bytes;
  try {
    const problem = JSON.parse(bytes.toString('utf8')) as Json;
    if (problem === null || typeof problem !== 'object' || Array.isArray(problem)) return bytes;
    return Buffer.from(JSON.stringify({ ...problem, instance: path, requestId }));
  } catch {
    return bytes;
  }
}

async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return 'too_large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function createMockFront(options: MockFrontOptions): http.Server {
  const routes = routesOf(options.spec);
  const jsonLimit = options.jsonBodyLimitBytes ?? 1_048_576;
  const upstream = options.upstream.replace(/\/+$/, '');

  return http.createServer(async (req, res) => {
    const requestId = requestIdOf();
    const url = new URL(req.url ?? '/', 'http://mock.invalid');
    const path = url.pathname;
    const method = (req.method ?? 'GET').toLowerCase();
    const problem = (status: number, code: string, detail: string, extras?: Json, headers?: Record<string, string>) =>
      sendProblem(res, requestId, path, status, code, detail, extras, headers);
    try {
      if (path === '/openapi.json' && method === 'get' && options.publishedSpec) {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' });
        return void res.end(options.publishedSpec);
      }
      const route = routes.find((r) => r.regex.test(path));
      if (!route) return problem(404, 'not_found', `There is nothing at ${req.method} ${path}.`);
      const operation = (METHODS as readonly string[]).includes(method) ? (route.item[method] as Json | undefined) : undefined;
      if (!operation) {
        const allowed = METHODS.filter((m) => route.item[m]).map((m) => m.toUpperCase());
        return problem(405, 'method_not_allowed', `${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, {}, { Allow: allowed.join(', ') });
      }

      const security = (operation.security ?? options.spec.security ?? []) as Json[];
      const needsCredentials = security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0);
      if (needsCredentials && !/^Bearer [^\s]+$/i.test(String(req.headers.authorization ?? '').trim())) {
        return problem(401, 'unauthorized', 'Credentials are required: send Authorization: Bearer <token>.', {}, { 'WWW-Authenticate': REALM });
      }

      const declared = Object.keys((operation.requestBody?.content ?? {}) as Json);
      const mediaType = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      let body: Buffer | undefined;
      let json: unknown;
      if (hasBody) {
        const read = await readBody(req, mediaType === 'application/json' || declared.length === 0 ? jsonLimit : 64 * 1024 * 1024);
        if (read === 'too_large') return problem(413, 'payload_too_large', `The request body is larger than ${jsonLimit} bytes.`);
        body = read;
        if (declared.length === 0) {
          let empty = false;
          if (mediaType === 'application/json') {
            try {
              const parsed = JSON.parse(read.toString('utf8'));
              empty = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && Object.keys(parsed).length === 0;
            } catch {
              empty = false;
            }
          }
          if (!empty) return problem(400, 'body_not_allowed', `${req.method} ${path} takes no request body.`);
          body = undefined;
        } else if (!declared.includes(mediaType)) {
          return problem(415, 'unsupported_media_type', `Send the body as ${declared.join(' or ')}${mediaType ? `, not ${mediaType}` : ' with a Content-Type header'}.`);
        } else if (mediaType === 'application/json') {
          try {
            json = JSON.parse(read.toString('utf8'));
          } catch {
            return problem(400, 'malformed_json', 'The request body is not valid JSON.');
          }
          if (depthExceeds(json, MAX_JSON_DEPTH)) return problem(400, 'body_too_deep', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
        }
      }

      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined || ['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) continue;
        headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const testAccount = testAccountOf(route.template, method, json);
      // An explicit Prefer (example=…, code=…) is the caller's choice and wins over the test value.
      if (testAccount?.answer.example && headers.prefer === undefined) headers.prefer = `example=${testAccount.answer.example}`;
      if (route.template === '/v1/mortgages/export') {
        const format = url.searchParams.get('format') ?? 'json';
        headers.accept = EXPORT_MEDIA[format] ?? 'text/csv';
      }
      const answer = await fetch(upstream + url.pathname + url.search, {
        method: req.method,
        headers,
        ...(body !== undefined ? { body: new Uint8Array(body) } : {}),
      });
      const violations = answer.headers.get('sl-violations');
      if ((answer.status === 400 || answer.status === 422) && violations) {
        const errors = issuesFromViolations(violations, operation);
        if (errors.length > 0) {
          await answer.body?.cancel();
          const first = errors[0]!;
          const detail = `${first.pointer === '/' ? 'The request body' : first.pointer} ${first.message}` + (errors.length > 1 ? ` (and ${errors.length - 1} more)` : '');
          return problem(400, 'validation_failed', detail, { errors }, { 'sl-violations': violations });
        }
      }
      if (testAccount?.answer.code && answer.status < 300 && headers.prefer === undefined) {
        // The request is valid (Prism said so): the test value's documented problem replaces the success.
        await answer.body?.cancel();
        const { status, code } = testAccount.answer;
        const extra: Record<string, string> = status === 401 ? { 'WWW-Authenticate': REALM } : status === 502 ? { 'Retry-After': '30' } : {};
        return problem(status, code, `Test value ${testAccount.accountNumber}: ${testAccount.description}`, {}, extra);
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name.startsWith('access-control-') || ['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding'].includes(name)) return;
        out[name] = value;
      });
      out['x-request-id'] = requestId;
      res.writeHead(answer.status, out);
      res.end(await answerBody(answer, path, requestId));
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      problem(500, 'internal_error', `The mock failed: ${(err as Error).message}`);
    }
  });
}
