/**
 * The contract at the HTTP edge: openapi-backend routes each /v1 request to its operation by the
 * bundled spec, authenticates it, checks the role, rate-limits, reads the body the operation
 * declares, validates everything with Ajv (JSON Schema 2020-12), and runs the handler.
 *
 * Order of refusals, so each caller hears about the first thing to fix:
 * 404/405 route → 401 credentials → 403 role or scope → 429 rate → 415/413/400 body → 400 schema → handler.
 *
 * Roles and scopes: an `admin` or `member` key is checked against the operation's `x-required-role`
 * as always; a `restricted` key against its `x-required-scope` alone (403 `scope_missing`, naming
 * the scope), whatever role the operation asks of other keys (src/domain/accounts/scopes.ts).
 */
import type { Context, Middleware } from 'koa';
import type { OpenAPIBackend, Context as ApiContext, Operation, Request } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { AppContext } from '../context.ts';
import { loadBundledSpec, REQUEST_VALIDATION_OPTIONS } from '../contract/spec.ts';
import type { OperationHandlers, RawResult, RequestContext } from '../contract/handlers.ts';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import { formatScope, parseRequiredScope, scopesAllow, type RequiredScope } from '../domain/accounts/scopes.ts';
import { fail, isAppError } from '../errors.ts';
import { lazyChild } from '../log.ts';
import { CURRENT_VERSION } from '../domain/versions/registry.ts';
import { inSpan } from '../observability/tracing.ts';
import type { Store, Tx } from '../store/store.ts';
import { IdempotencyKeys, requestFingerprint, type CapturedResponse } from './idempotency.ts';
import { ApiProblem, problemBody, problems } from './problem.ts';
import { RateLimiter } from './rateLimit.ts';
import { ContractBackend } from './framework/definitionCheck.ts';
import { writeDirectly, writesDirectly } from './framework/koaDirectWrite.ts';
import { rememberOperations } from './framework/operationList.ts';
import { installCompiledMatcher } from './framework/routeMatcher.ts';
import { requestValidation } from './framework/requestValidation.ts';
import { securityRequirements } from './framework/securityRequirements.ts';
import { sharedAjvPerOptions } from './framework/sharedAjv.ts';
import { jsonBodyParser, readOperationBody, type BodyParsers } from './requestBody.ts';
import type { SecurityHandler } from './security.ts';
import { attachKoa, koaOf, requestEdgeProperties } from './requestEdge.ts';
import { validationProblem } from './validationProblem.ts';
import { apiVersionOf, askedVersion, renderedResult } from './versions.ts';

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

/**
 * openapi-backend as the contract runs it: on the bundled spec, initialised, with the framework
 * patches that do not need the request pipeline installed (the tests of src/http/framework/ run
 * upstream's code on this same instance).
 */
export async function contractBackend(): Promise<ContractBackend> {
  const sharedAjv = sharedAjvPerOptions();
  const api = new ContractBackend({
    definition: loadBundledSpec(),
    strict: true,
    // Lazy validators: by default init() compiles a validator for every request, response and
    // response header of the spec (seconds with the full spec, at every start and in every API
    // test file). The service never validates responses, and a request validator is compiled on
    // an operation's first request (tens of milliseconds, once).
    quick: true,
    coerceTypes: true,
    ajvOpts: { ...REQUEST_VALIDATION_OPTIONS },
    customizeAjv: (ajv, ajvOpts) => sharedAjv(ajv, ajvOpts) as never,
  });

  await api.init();
  rememberOperations(api.router);
  installCompiledMatcher(api.router as unknown as Parameters<typeof installCompiledMatcher>[0]);
  return api;
}

export async function createContract(options: ContractOptions): Promise<{ middleware: Middleware; api: OpenAPIBackend }> {
  const { ctx: app, handlers } = options;
  const api = await contractBackend();
  const rateLimiter = new RateLimiter(app.config.rateLimitPerMinute, app.countShared);
  const idempotency = new IdempotencyKeys(app.store, app.clock);
  const parsers: BodyParsers = { 'application/json': jsonBodyParser(app.config.jsonBodyLimitBytes), ...options.bodyParsers };

  // The edge's scheme handlers take the bearer credential and the Koa context.
  const runSecurity = securityRequirements<Context>(
    new Map(Object.entries(options.securityHandlers).map(([name, handler]) => [name, (koa: Context) => handler(koa.get('Authorization') || undefined, koa)])),
  );

  /** 404 or 405 as the router tells them apart (the router throws '404-…' or '405-…'). */
  const notRouted = (koa: Context, err: unknown): never => {
    if (err instanceof Error && err.message.startsWith('405')) {
      const allowed = METHODS.filter((method) => api.matchOperation({ ...(koa.state.apiRequest as Request), method })).map((m) => m.toUpperCase());
      throw problems.methodNotAllowed(koa.method, koa.path, allowed);
    }
    throw problems.notFound(`There is no operation at ${koa.method} ${koa.path}.`);
  };

  /** The caller's credentials refused: the first refusal's 401, or an unexpected failure as it is. */
  const unauthorized = (c: ApiContext): never => {
    const failures = Object.values(c.security ?? {})
      .map((result) => (result as { error?: unknown } | undefined)?.error)
      .filter((error): error is Error => error instanceof Error);
    const refused = (error: Error) => isAppError(error) && error.kind === 'unauthenticated';
    const unexpected = failures.find((error) => !refused(error));
    if (unexpected) throw unexpected;
    throw failures[0] ?? problems.unauthorized('Credentials are required.');
  };

  /** Role, rate limit and body, for an authorized caller: before validation, so each refusal comes in the documented order. */
  const afterSecurity = async (c: ApiContext, koa: Context): Promise<void> => {
    const principal = c.security!.apiKey as ApiKeyPrincipal | undefined;
    if (principal) {
      koa.state.principal = principal;
      const requiredRole = (c.operation as Operation & { 'x-required-role'?: string })['x-required-role'];
      if (principal.role === 'restricted') {
        const required = requiredScopes.get(c.operation.operationId!)!;
        if (!scopesAllow(principal.scopes ?? {}, required)) {
          const scope = formatScope(required!);
          throw fail.denied('scope_missing', `${c.operation.operationId} needs the scope ${scope}, which this restricted key does not hold.`, { requiredScope: scope });
        }
      } else if (requiredRole === 'admin' && principal.role !== 'admin') {
        throw problems.forbidden(`${c.operation.operationId} needs an admin API key; this key's role is ${principal.role}.`);
      }
      await rateLimiter.enforce(principal.keyId, app.clock.now().getTime(), (headers) => koa.set(headers), 'This API key has');
    }
    const body = await readOperationBody(koa, declaredMediaTypes(c.operation), parsers);
    koa.state.body = body;
    (koa.state.apiRequest as Request).body = body;
  };

  /** Each operation's x-required-scope, read once: a contract with an operation lacking a valid one does not start. */
  const requiredScopes = new Map<string, RequiredScope>();
  for (const operation of api.getOperations()) {
    const scope = parseRequiredScope((operation as Operation & { 'x-required-scope'?: unknown })['x-required-scope']);
    if (scope === undefined) throw new Error(`${operation.operationId} declares no valid x-required-scope (npm run check:scopes)`);
    requiredScopes.set(operation.operationId!, scope);
  }

  /** Operations whose reads may go to a replica (`x-read-replica: true`, GETs only: npm run check:scopes). */
  const replicaReads = new Set<string>();
  for (const operation of api.getOperations()) {
    const declared = (operation as Operation & { 'x-read-replica'?: unknown })['x-read-replica'];
    if (declared === undefined) continue;
    if (declared !== true || operation.method.toLowerCase() !== 'get') throw new Error(`${operation.operationId} declares x-read-replica other than true on a GET (npm run check:scopes)`);
    replicaReads.add(operation.operationId!);
  }

  const validateRequest = requestValidation(api);
  const declared = new Set(api.getOperations().map((operation) => operation.operationId));
  const missing = [...declared].filter((id) => id && !(id in handlers));
  if (missing.length > 0) throw new Error(`The contract declares operations with no handler: ${missing.join(', ')}`);

  const operationHandlers = new Map<string, (c: ApiContext, koa: Context) => Promise<void>>();
  for (const [operationId, handler] of Object.entries(handlers)) {
    if (!declared.has(operationId)) throw new Error(`A handler is registered for ${operationId}, which the contract does not declare`);
    // What every request of this operation shares, built once: a request's context only adds its own fields
    // (defining getters per request made each context a slow dictionary object, issue 17's profile).
    const requestProto = Object.create(app, {
      // A child logger per request costs more than most handlers use it: made on first use of a level that is written.
      log: {
        get(this: RequestContext) {
          const state = koaOf(this).state;
          return (state.log ??= lazyChild(app.log, state.traceId ? { requestId: this.requestId, traceId: state.traceId } : { requestId: this.requestId }));
        },
      },
      principal: {
        get(this: RequestContext): ApiKeyPrincipal {
          const principal = koaOf(this).state.principal as ApiKeyPrincipal | undefined;
          if (!principal) throw new Error(`${operationId} is not secured by an API key`);
          return principal;
        },
      },
      ...requestEdgeProperties,
    }) as RequestContext;
    const readsFromReplica = replicaReads.has(operationId);
    const handle = async (c: ApiContext, koa: Context) => {
      // The app's context as this request sees it (prototype-linked: nothing is copied per request).
      const ctx = Object.create(requestProto) as { -readonly [K in keyof RequestContext]: RequestContext[K] };
      ctx.requestId = koa.state.requestId;
      ctx.security = c.security ?? {};
      const caller = koa.state.principal as ApiKeyPrincipal | undefined;
      // Reads of a replica-read operation go where the caller's own writes already are (read-your-writes: src/store/postgres/replicas.ts).
      if (caller && readsFromReplica && app.store.forReplicaReads) ctx.store = app.store.forReplicaReads(caller.keyId);
      attachKoa(ctx, koa);
      // The validator's coerced copies: dispatch() always validates before it calls the handler.
      const coerced = c.validation!.coerced;
      const input = {
        path: coerced.params,
        query: coerced.query,
        body: koa.state.body,
        headers: koa.request.headers,
      };
      // The handler answers in the current version; the result is rendered in the caller's here,
      // before it is written or kept for an Idempotency-Key replay.
      const call = async (context: RequestContext) =>
        renderedResult(operationId, (await (handler as (input: unknown, ctx: RequestContext) => Promise<unknown>)(input, context)) as OperationResult, koa);
      // The use case as a child span of the request's (named by the operation it serves).
      const run = (context: RequestContext = ctx as RequestContext) =>
        app.tracer === null ? call(context) : inSpan(app.tracer, `use_case ${operationId}`, {}, () => call(context));

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
    };
    operationHandlers.set(operationId, async (c: ApiContext, koa: Context) => {
      const caller = koa.state.principal as ApiKeyPrincipal | undefined;
      if (!caller || koa.method === 'GET' || !app.store.clientWrote) return handle(c, koa);
      try {
        await handle(c, koa);
      } finally {
        // Once the write has ended (committed or not): a replica sample taken after this holds it.
        app.store.clientWrote(caller.keyId);
      }
    });
  }

  const middleware: Middleware = async (koa) => {
    koa.set('Mos-Version', CURRENT_VERSION);
    const apiRequest: Request = {
      method: koa.method,
      path: koa.path,
      // Koa parses even an empty query string with URLSearchParams; its answer for one is {}.
      query: (koa.querystring === '' ? {} : koa.query) as Request['query'],
      headers: koa.headers as Request['headers'],
    };
    koa.state.apiRequest = apiRequest;
    await dispatch(apiRequest, koa);
  };

  /**
   * What openapi-backend's handleRequest does, in the same order, parsing the request once:
   * handleRequest parses it four times (before routing, after, inside validation, after
   * coercion), a twelfth of a light request's CPU (issue 17's profile of GET /v1/account).
   */
  async function dispatch(apiRequest: Request, koa: Context): Promise<void> {
    let operation: Operation;
    try {
      operation = api.router.matchOperation(apiRequest, true) as Operation;
    } catch (err) {
      return notRouted(koa, err);
    }
    // For the request log (requestLog.ts), which records requests of recognised keys by operation.
    koa.state.operationId = operation.operationId;
    const c = { api, request: apiRequest, operation } as unknown as ApiContext;
    // A bad Mos-Version is refused before anything runs (the account's default needs the key).
    const asked = askedVersion(koa, app.clock.now());
    c.security = await runSecurity(operation, koa);
    if (c.security.authorized) await afterSecurity(c, koa);
    else if ((operation.security ?? []).length > 0) unauthorized(c);
    apiVersionOf(koa, asked);
    c.validation = validateRequest(apiRequest, operation);
    if (c.validation.errors) throw validationProblem(c.validation.errors as ErrorObject[]);
    await operationHandlers.get(operation.operationId!)!(c, koa);
  }
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
  if (!('raw' in result) && result.body !== undefined && writesDirectly(koa, result.status)) {
    return writeDirectly(koa, result.status, result.headers, JSON.stringify(result.body));
  }
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
