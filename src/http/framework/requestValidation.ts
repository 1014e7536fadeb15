/**
 * Patch of openapi-backend: request validation with the per-operation work done once.
 *
 * Replaces: `OpenAPIValidator.prototype.validateRequest` (openapi-backend/validation.js), called
 * through the validator's untyped `getRequestValidatorsForOperation` and the router's
 * `normalizeRequest`, `normalizePath` and `parseRequestQuery`.
 *
 * Why: upstream compiles the path template to a regular expression, lowercases and copies every
 * header with lodash, deep-clones and re-serialises the query and parses cookies on every request,
 * a tenth of GET /v1/account's CPU (issue 17's profile; the commit "Edge: request validation builds
 * openapi-backend's parameters object once per operation's rules", checked then by running both
 * side by side over 1,580 requests of the API tests). The same validators (its compiled Ajv
 * functions) see the same parameters object, built by the same rules:
 *
 * - path: the template's `{name}` segments matched by `[^/]*` and percent-decoded (bath-es5's rules;
 *   a malformed escape throws URIError as there), against the path normalised by the router;
 * - query: a copy of the parsed query (its own `parseRequestQuery`, only when there is one), with
 *   single values of array parameters made arrays;
 * - header: a copy of the (lowercase) headers; cookie: `{}` (no operation declares a cookie parameter,
 *   and the cookie schema then accepts any object);
 * - requestBody: the body already parsed, included when it is an object or the content type is JSON.
 *
 * Operations declaring what this does not reproduce (cookie parameters, `content` or `explode: false`
 * query parameters) and bodies that are not parsed objects go through openapi-backend's own
 * validateRequest unchanged.
 *
 * Checked against: openapi-backend 5.21.2 (pinned exactly in package.json).
 * test/unit/http/framework/requestValidation.test.ts runs both over every operation's examples and
 * mutations of them and fails on any difference in verdict, errors or coerced parameters.
 */
import type { Operation, OpenAPIBackend, Request, ValidationResult } from 'openapi-backend';

interface Router {
  normalizeRequest(req: Request): Request;
  normalizePath(path: string): string;
  parseRequestQuery(req: Request): Record<string, unknown>;
}

interface Validator {
  validateRequest(req: Request, operation: Operation): ValidationResult;
  getRequestValidatorsForOperation(operationId: string): Array<((data: unknown) => boolean) & { errors?: unknown[] | null }> | null;
}

interface CompiledOperation {
  /** False: openapi-backend's own validateRequest. */
  fast: boolean;
  pathPattern: RegExp;
  pathNames: string[];
  arrayQueryParams: Set<string>;
}

interface Parameter {
  in: string;
  name: string;
  schema?: { type?: unknown };
  content?: Record<string, unknown>;
  explode?: boolean;
}

function compile(operation: Operation): CompiledOperation {
  const parameters = (operation.parameters ?? []) as Parameter[];
  const fast = !parameters.some((p) => '$ref' in p || p.in === 'cookie' || (p.in === 'query' && (p.content !== undefined || p.explode === false)));
  const pathNames = [...operation.path.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((m) => m[1]!);
  return {
    fast,
    pathPattern: new RegExp('^' + operation.path.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)') + '$'),
    pathNames,
    arrayQueryParams: new Set(parameters.filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name)),
  };
}

/** bath-es5's params(): null when the path does not match or one name has two different values. */
function pathParams(compiled: CompiledOperation, path: string): Record<string, string> | null {
  const match = compiled.pathPattern.exec(path);
  if (match === null) return null;
  const params: Record<string, string> = Object.create(null);
  const values = compiled.pathNames.map((_, i) => decodeURIComponent(match[i + 1]!));
  for (let i = 0; i < values.length; i++) {
    const name = compiled.pathNames[i]!;
    if (compiled.pathNames.some((other, j) => other === name && values[j] !== values[i])) return null;
    params[name] = values[i]!;
  }
  return params;
}

export function requestValidation(api: OpenAPIBackend): (req: Request, operation: Operation) => ValidationResult {
  const router = api.router as unknown as Router;
  const validator = api.validator as unknown as Validator;
  const compiled = new Map<Operation, CompiledOperation>();

  return (req, operation) => {
    let op = compiled.get(operation);
    if (!op) compiled.set(operation, (op = compile(operation)));
    const body = req.body as unknown;
    if (!op.fast || (body !== undefined && typeof body !== 'object')) return validator.validateRequest(req, operation);

    const headers: Record<string, unknown> = Object.create(null);
    for (const name in req.headers) headers[name.toLowerCase()] = req.headers[name];
    const hasQuery = req.query !== undefined && (typeof req.query !== 'object' || Object.keys(req.query).length > 0);
    const query = hasQuery ? router.parseRequestQuery(req) : {};
    for (const name of op.arrayQueryParams) if (typeof query[name] === 'string') query[name] = [query[name]];
    const path = pathParams(op, router.normalizePath(router.normalizeRequest(req).path)) ?? {};

    const parameters: Record<string, unknown> = { path, query, header: headers, cookie: {} };
    const rawContentType = headers['content-type'];
    const contentType = String((Array.isArray(rawContentType) ? rawContentType[0] : rawContentType) || '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (typeof body === 'object' || contentType === 'application/json') parameters.requestBody = body;

    const result = { valid: true, coerced: { ...req }, errors: [] as unknown[] | null } as ValidationResult & { errors: unknown[] | null };
    for (const validate of validator.getRequestValidatorsForOperation(operation.operationId!) ?? []) {
      validate(parameters);
      if (validate.errors) {
        result.errors!.push(...validate.errors);
      } else {
        // openapi-backend's coerceTypes (the contract sets it): the validated copies are what handlers get.
        result.coerced.query = parameters.query as Request['query'];
        result.coerced.params = parameters.path as Request['params'];
      }
    }
    if (result.errors!.length === 0) result.errors = null;
    else result.valid = false;
    return result;
  };
}
