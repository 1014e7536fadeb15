/**
 * The contract at the HTTP edge: openapi-backend routes each /v1 request to its operation by the
 * bundled spec, authenticates it, checks the role, rate-limits, reads the body the operation
 * declares, validates everything with Ajv (JSON Schema 2020-12), and runs the handler.
 *
 * Order of refusals, so each caller hears about the first thing to fix:
 * 404/405 route → 401 credentials → 403 role → 429 rate → 415/413/400 body → 400 schema → handler.
 */
import { readFileSync } from 'node:fs';
import type { Context, Middleware } from 'koa';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { OpenAPIBackend, type Context as ApiContext, type Document, type Operation, type Request } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { AppServices } from '../services/appServices.ts';
import type { Store, Tx } from '../store/store.ts';
import type { ApiKeyPrincipal, OperationHandlers, RawResult, RequestContext } from '../operations/types.ts';
import { IdempotencyKeys, requestFingerprint, type CapturedResponse } from './idempotency.ts';
import { ApiProblem, problemBody, problems } from './problem.ts';
import { RateLimiter } from './rateLimit.ts';
import { installCompiledMatcher } from './routeMatcher.ts';
import { jsonBodyParser, readOperationBody, type BodyParsers } from './requestBody.ts';
import { AuthenticationError, apiKeyAuthenticator } from './security.ts';
import { validationProblem } from './validationProblem.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const BUNDLED_SPEC_URL = new URL('../../generated/openapi.json', import.meta.url);

export function loadBundledSpec(): Document {
  return JSON.parse(readFileSync(BUNDLED_SPEC_URL, 'utf8')) as Document;
}

/** Redocly lint is the definition check (it knows 3.1 and `webhooks`); openapi-backend's 3.0 check is not. */
class ContractBackend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

/** A security handler for one scheme: returns what the operation will see, or throws AuthenticationError. */
export type SecurityHandler = (authorization: string | string[] | undefined, koa: Context) => Promise<unknown>;

export interface ContractOptions {
  services: AppServices;
  handlers: OperationHandlers;
  /** Security handlers beyond `apiKey` (the bank token scheme registers here). */
  securityHandlers?: Record<string, SecurityHandler>;
  /** Parsers beyond JSON, by media type (multipart uploads register here). */
  bodyParsers?: BodyParsers;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const OPENAPI_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'];

function declaredMediaTypes(operation: Operation): string[] {
  const body = operation.requestBody as { content?: Record<string, unknown> } | undefined;
  return Object.keys(body?.content ?? {});
}

export async function createContract(options: ContractOptions): Promise<{ middleware: Middleware; api: OpenAPIBackend }> {
  const { services, handlers } = options;
  const api = new ContractBackend({
    definition: loadBundledSpec(),
    strict: true,
    // Lazy validators: by default init() compiles a validator for every request, response and
    // response header of the spec (seconds with the full spec, at every start and in every API
    // test file). The service never validates responses, and a request validator is compiled on
    // an operation's first request (tens of milliseconds, once).
    quick: true,
    coerceTypes: true,
    ajvOpts: { strict: false, allErrors: true, verbose: true, useDefaults: true },
    customizeAjv: (_ajv, ajvOpts) => {
      const ajv = new Ajv2020({ ...ajvOpts, strict: false });
      addFormats(ajv);
      for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true);
      return ajv as never;
    },
  });

  const authenticateApiKey = apiKeyAuthenticator(services.store, services.clock, services.log);
  const rateLimiter = new RateLimiter(services.config.rateLimitPerMinute, services.store);
  const idempotency = new IdempotencyKeys(services.store, services.clock);
  const parsers: BodyParsers = { 'application/json': jsonBodyParser(services.config.jsonBodyLimitBytes), ...options.bodyParsers };

  api.registerSecurityHandler('apiKey', (_c: ApiContext, koa: Context) => authenticateApiKey(koa.get('Authorization') || undefined));
  for (const [scheme, handler] of Object.entries(options.securityHandlers ?? {})) {
    api.registerSecurityHandler(scheme, (_c: ApiContext, koa: Context) => handler(koa.get('Authorization') || undefined, koa));
  }

  api.register({
    notFound: (_c: ApiContext, koa: Context) => {
      throw problems.notFound(`There is no operation at ${koa.method} ${koa.path}.`);
    },
    methodNotAllowed: (c: ApiContext, koa: Context) => {
      const allowed = METHODS.filter((method) => api.matchOperation({ ...(koa.state.apiRequest as Request), method }))
        .map((m) => m.toUpperCase());
      void c;
      throw problems.methodNotAllowed(koa.method, koa.path, allowed);
    },
    unauthorizedHandler: (c: ApiContext) => {
      const failures = Object.values(c.security ?? {})
        .map((result) => (result as { error?: unknown } | undefined)?.error)
        .filter((error): error is Error => error instanceof Error);
      const unexpected = failures.find((error) => !(error instanceof AuthenticationError));
      if (unexpected) throw unexpected;
      throw problems.unauthorized(failures[0]?.message ?? 'Credentials are required.');
    },
    postSecurityHandler: async (c: ApiContext, koa: Context) => {
      if (!c.security?.authorized) return;
      const principal = c.security.apiKey as ApiKeyPrincipal | undefined;
      if (principal) {
        koa.state.principal = principal;
        const requiredRole = (c.operation as Operation & { 'x-required-role'?: string })['x-required-role'];
        if (requiredRole === 'admin' && principal.role !== 'admin') {
          throw problems.forbidden(`${c.operation.operationId} needs an admin API key; this key's role is ${principal.role}.`);
        }
        await rateLimiter.enforce(principal.keyId, services.clock.now().getTime(), (headers) => koa.set(headers), 'This API key has');
      }
      const body = await readOperationBody(koa, declaredMediaTypes(c.operation), parsers);
      koa.state.body = body;
      (koa.state.apiRequest as Request).body = body;
    },
    validationFail: (c: ApiContext) => {
      throw validationProblem((c.validation.errors ?? []) as ErrorObject[]);
    },
  });

  await api.init();
  // The router rebuilds its operation list from the document on every match (twice per request);
  // the document never changes after init, so build it once.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  installCompiledMatcher(api.router as unknown as Parameters<typeof installCompiledMatcher>[0]);
  const declared = new Set(api.getOperations().map((operation) => operation.operationId));
  const missing = [...declared].filter((id) => id && !(id in handlers));
  if (missing.length > 0) throw new Error(`The contract declares operations with no handler: ${missing.join(', ')}`);

  for (const [operationId, handler] of Object.entries(handlers)) {
    if (!declared.has(operationId)) throw new Error(`A handler is registered for ${operationId}, which the contract does not declare`);
    api.register(operationId, async (c: ApiContext, koa: Context) => {
      const ctx: RequestContext = {
        requestId: koa.state.requestId,
        services,
        // A child logger per request costs more than most handlers use it: made on first use.
        get log() {
          return (koa.state.log ??= services.log.child({ requestId: koa.state.requestId }));
        },
        get principal(): ApiKeyPrincipal {
          const principal = koa.state.principal as ApiKeyPrincipal | undefined;
          if (!principal) throw new Error(`${operationId} is not secured by an API key`);
          return principal;
        },
        security: c.security ?? {},
        koa,
      };
      const input = {
        path: c.validation?.coerced?.params ?? c.request.params,
        query: c.validation?.coerced?.query ?? c.request.query,
        body: koa.state.body,
        headers: koa.request.headers,
      };
      const run = (context: RequestContext = ctx) =>
        (handler as (input: unknown, ctx: RequestContext) => Promise<unknown>)(input, context) as Promise<OperationResult>;

      const idempotencyKey = koa.get('Idempotency-Key');
      const principal = koa.state.principal as ApiKeyPrincipal | undefined;
      if (koa.method === 'POST' && idempotencyKey && principal) {
        const response = await idempotency.run(
          principal.accountId,
          idempotencyKey,
          requestFingerprint(koa.method, koa.path, koa.state.body),
          // The handler's write transactions also record that the key took effect (see IdempotencyKeys).
          async (mark) => capture(await run(Object.assign(Object.create(ctx) as RequestContext, { services: { ...services, store: markingStore(services.store, mark) } }))),
          (problem) => captureProblem(problem, koa),
          (c.operation as Operation & { 'x-secret-fields'?: string[] })['x-secret-fields'] ?? [],
        );
        writeCaptured(koa, response);
        if (response.replayed) koa.set('Idempotent-Replayed', 'true');
        return;
      }
      writeResult(koa, await run());
    });
  }

  const middleware: Middleware = async (koa) => {
    const apiRequest: Request = {
      method: koa.method,
      path: koa.path,
      query: koa.query as Request['query'],
      headers: koa.headers as Request['headers'],
    };
    koa.state.apiRequest = apiRequest;
    await api.handleRequest(apiRequest, koa);
  };
  return { middleware, api };
}

/** The store as one idempotent request sees it: each write transaction also runs `mark` before committing. */
function markingStore(store: Store, mark: (tx: Tx) => Promise<void>): Store {
  return {
    transaction: (fn) =>
      store.transaction(async (tx) => {
        const value = await fn(tx);
        await mark(tx);
        return value;
      }),
    read: (fn) => store.read(fn),
    isOpen: () => store.isOpen(),
    close: () => store.close(),
  };
}

type OperationResult = RawResult | { status: number; body: unknown; headers?: Record<string, string> };

function writeResult(koa: Context, result: OperationResult): void {
  koa.status = result.status;
  if (result.headers) koa.set(result.headers);
  if ('raw' in result) {
    koa.type = result.contentType;
    koa.body = result.raw;
  } else if (result.body !== undefined) {
    koa.body = result.body;
  }
}

function capture(result: OperationResult): CapturedResponse {
  if ('raw' in result) {
    const raw = typeof result.raw === 'string' || Buffer.isBuffer(result.raw) ? result.raw.toString() : null;
    if (raw === null) throw new Error('A streamed response cannot be stored for Idempotency-Key replay');
    return { status: result.status, headers: { ...result.headers, 'Content-Type': result.contentType }, body: raw };
  }
  return {
    status: result.status,
    headers: { ...result.headers, 'Content-Type': 'application/json; charset=utf-8' },
    body: result.body === undefined ? '' : JSON.stringify(result.body),
  };
}

function captureProblem(problem: ApiProblem, koa: Context): CapturedResponse {
  return {
    status: problem.status,
    headers: { ...problem.headers, 'Content-Type': 'application/problem+json' },
    body: JSON.stringify(problemBody(problem, koa.state.requestId, koa.path)),
  };
}

function writeCaptured(koa: Context, response: CapturedResponse): void {
  koa.status = response.status;
  koa.set(response.headers);
  if (response.body !== '') koa.body = response.body;
}
