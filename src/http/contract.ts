/**
 * The contract at the HTTP edge: openapi-backend routes each /v1 request to its operation by the
 * bundled spec, authenticates it, checks the role, rate-limits, reads the body the operation
 * declares, validates everything with Ajv (JSON Schema 2020-12), and runs the handler.
 *
 * Order of refusals, so each caller hears about the first thing to fix:
 * 404/405 route → 401 credentials → 403 role → 429 rate → 415/413/400 body → 400 schema → handler.
 */
import type { Context, Middleware } from 'koa';
import { OpenAPIBackend, type Context as ApiContext, type Document, type Operation, type Request } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { AppContext } from '../context.ts';
import { createAjv, loadBundledSpec } from '../contract/spec.ts';
import type { OperationHandlers, RawResult, RequestContext } from '../contract/handlers.ts';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import { isAppError } from '../errors.ts';
import type { Store, Tx } from '../store/store.ts';
import { IdempotencyKeys, requestFingerprint, type CapturedResponse } from './idempotency.ts';
import { ApiProblem, problemBody, problems } from './problem.ts';
import { RateLimiter } from './rateLimit.ts';
import { installCompiledMatcher } from './routeMatcher.ts';
import { jsonBodyParser, readOperationBody, type BodyParsers } from './requestBody.ts';
import type { SecurityHandler } from './security.ts';
import { boundValidators } from './boundedValidation.ts';
import { validationProblem } from './validationProblem.ts';

/** Redocly lint is the definition check (it knows 3.1 and `webhooks`); openapi-backend's 3.0 check is not. */
class ContractBackend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

export interface ContractOptions {
  ctx: AppContext;
  handlers: OperationHandlers;
  /** A handler for each security scheme of the spec, by scheme name. */
  securityHandlers: Record<string, SecurityHandler>;
  /** Parsers beyond JSON, by media type (multipart uploads register here). */
  bodyParsers?: BodyParsers;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

function declaredMediaTypes(operation: Operation): string[] {
  const body = operation.requestBody as { content?: Record<string, unknown> } | undefined;
  return Object.keys(body?.content ?? {});
}

export async function createContract(options: ContractOptions): Promise<{ middleware: Middleware; api: OpenAPIBackend }> {
  const { ctx: app, handlers } = options;
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
    customizeAjv: (_ajv, ajvOpts) => boundValidators(createAjv(ajvOpts)) as never,
  });

  const rateLimiter = new RateLimiter(app.config.rateLimitPerMinute, app.countShared);
  const idempotency = new IdempotencyKeys(app.store, app.clock);
  const parsers: BodyParsers = { 'application/json': jsonBodyParser(app.config.jsonBodyLimitBytes), ...options.bodyParsers };

  for (const [scheme, handler] of Object.entries(options.securityHandlers)) {
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
      const refused = (error: Error) => isAppError(error) && error.kind === 'unauthenticated';
      const unexpected = failures.find((error) => !refused(error));
      if (unexpected) throw unexpected;
      throw failures[0] ?? problems.unauthorized('Credentials are required.');
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
        await rateLimiter.enforce(principal.keyId, app.clock.now().getTime(), (headers) => koa.set(headers), 'This API key has');
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
      // The app's context as this request sees it (prototype-linked: nothing is copied per request).
      const ctx = Object.create(app, {
        requestId: { value: koa.state.requestId },
        // A child logger per request costs more than most handlers use it: made on first use.
        log: { get: () => (koa.state.log ??= app.log.child({ requestId: koa.state.requestId })) },
        principal: {
          get(): ApiKeyPrincipal {
            const principal = koa.state.principal as ApiKeyPrincipal | undefined;
            if (!principal) throw new Error(`${operationId} is not secured by an API key`);
            return principal;
          },
        },
        security: { value: c.security ?? {} },
        koa: { value: koa },
      }) as RequestContext;
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
          async (mark) => capture(await run(Object.create(ctx, { store: { value: markingStore(app.store, mark) } }) as RequestContext)),
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
