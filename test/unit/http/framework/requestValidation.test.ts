/**
 * The edge's request validation against openapi-backend's own `api.validator.validateRequest`, on
 * the backend the contract runs (contractBackend): every operation of the spec, with its
 * documented examples (path, query and header parameters, each named request body example) and
 * mutations of them (properties dropped, nulled, of the wrong type or unknown; bodies that are not
 * objects; parameters out of their schema, malformed percent escapes, repeated query values;
 * content types spelled differently or missing). Each request is validated by both on its own copy:
 * the same verdict, the same errors, the same coerced request (parameters, query and the body with
 * its defaults filled in) or the same exception, and the request itself left as upstream leaves it.
 */
import type { Operation, Request } from 'openapi-backend';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { contractBackend } from '../../../../src/http/contract.ts';
import type { ContractBackend } from '../../../../src/http/framework/definitionCheck.ts';
import { requestValidation } from '../../../../src/http/framework/requestValidation.ts';

type Json = Record<string, any>;

interface Parameter {
  in: string;
  name: string;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
  schema?: Json;
}

function exampleOf(param: Parameter): string {
  const value = [param.example, Object.values(param.examples ?? {})[0]?.value, param.schema?.example, (param.schema?.examples as unknown[] | undefined)?.[0]].find(
    (candidate) => candidate !== undefined,
  );
  if (value === undefined) throw new Error(`${param.in} parameter ${param.name} has no example`);
  return String(value);
}

/** A request as the contract middleware hands it over (Koa's lowercase headers, parsed query, parsed body). */
function baseRequests(operation: Operation): Array<{ what: string; request: Request }> {
  const parameters = (operation.parameters ?? []) as Parameter[];
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(exampleOf(parameters.find((p) => p.in === 'path' && p.name === name)!)),
  );
  const query: Record<string, string> = {};
  for (const param of parameters.filter((p) => p.in === 'query')) query[param.name] = exampleOf(param);
  const headers: Record<string, string> = { host: '127.0.0.1', authorization: 'Bearer x' };
  for (const param of parameters.filter((p) => p.in === 'header')) headers[param.name.toLowerCase()] = exampleOf(param);
  const request = (body: unknown, contentType?: string): Request => ({
    method: operation.method.toUpperCase(),
    path,
    query: { ...query },
    headers: contentType ? { ...headers, 'content-type': contentType } : { ...headers },
    ...(body === undefined ? {} : { body }),
  });
  const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
  const [mediaType, media] = Object.entries(content)[0] ?? [];
  if (!mediaType) return [{ what: 'no body', request: request(undefined) }];
  const examples = Object.entries((media!.examples ?? {}) as Record<string, { value?: unknown }>).filter(([, example]) => example.value !== undefined);
  if (examples.length === 0) throw new Error(`${operation.operationId} has no request body example`);
  return examples.map(([name, example]) => ({ what: `example ${name}`, request: request(example.value, mediaType) }));
}

const copy = <T>(value: T): T => structuredClone(value);

/** The base request and its mutations. */
function variants(operation: Operation, base: Request): Array<{ what: string; request: Request }> {
  const out: Array<{ what: string; request: Request }> = [{ what: 'as documented', request: copy(base) }];
  const add = (what: string, change: (request: Request) => void) => {
    const request = copy(base);
    change(request);
    out.push({ what, request });
  };
  const body = base.body as unknown;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const key of Object.keys(body).slice(0, 6)) {
      const value = (body as Json)[key];
      add(`body without ${key}`, (r) => delete (r.body as Json)[key]);
      add(`body ${key} null`, (r) => ((r.body as Json)[key] = null));
      add(`body ${key} of another type`, (r) => ((r.body as Json)[key] = typeof value === 'string' ? 12345 : 'text'));
    }
    add('body with an unknown property', (r) => ((r.body as Json).notInTheContract = 1));
    add('body an array', (r) => (r.body = [body]));
    add('body a string', (r) => (r.body = JSON.stringify(body)));
    add('body malformed JSON text', (r) => (r.body = '{"a":'));
    add('body missing', (r) => delete r.body);
    add('content type with a charset', (r) => (r.headers['content-type'] = `${r.headers['content-type']}; charset=utf-8`));
    add('content type in capitals', (r) => (r.headers['content-type'] = String(r.headers['content-type']).toUpperCase()));
    add('content type missing', (r) => delete r.headers['content-type']);
    add('header names in capitals', (r) => {
      for (const name of Object.keys(r.headers)) {
        r.headers[name.toUpperCase()] = r.headers[name]!;
        delete r.headers[name];
      }
    });
  } else {
    add('an unexpected JSON body', (r) => {
      r.body = { unexpected: true };
      r.headers['content-type'] = 'application/json';
    });
  }
  const parameters = (operation.parameters ?? []) as Parameter[];
  for (const param of parameters.filter((p) => p.in === 'query')) {
    add(`query ${param.name} out of its schema`, (r) => ((r.query as Json)[param.name] = param.schema?.type === 'integer' ? '-5' : 'x'.repeat(3000)));
    add(`query ${param.name} not a number`, (r) => ((r.query as Json)[param.name] = 'abc'));
    add(`query ${param.name} repeated`, (r) => ((r.query as Json)[param.name] = [exampleOf(param), exampleOf(param)]));
    add(`query without ${param.name}`, (r) => delete (r.query as Json)[param.name]);
  }
  if (parameters.some((p) => p.in === 'query')) add('no query at all', (r) => (r.query = {}));
  add('an unknown query parameter', (r) => ((r.query as Json).unknownParameter = '1'));
  for (const param of parameters.filter((p) => p.in === 'path')) {
    const segment = encodeURIComponent(exampleOf(param));
    add(`path ${param.name} out of its schema`, (r) => (r.path = r.path.replace(segment, 'not-an-id')));
    add(`path ${param.name} percent-encoded`, (r) => (r.path = r.path.replace(segment, encodeURIComponent(`${exampleOf(param)} é`))));
    add(`path ${param.name} a malformed escape`, (r) => (r.path = r.path.replace(segment, '%E0%A4%A')));
    add(`path ${param.name} with a trailing slash`, (r) => (r.path = `${r.path}/`));
  }
  for (const param of parameters.filter((p) => p.in === 'header')) {
    add(`header ${param.name} out of its schema`, (r) => (r.headers[param.name.toLowerCase()] = '\u0001'.repeat(300)));
    add(`header ${param.name} missing`, (r) => delete r.headers[param.name.toLowerCase()]);
    add(`header ${param.name} out of its schema, its name as the spec spells it`, (r) => {
      delete r.headers[param.name.toLowerCase()];
      r.headers[param.name] = '\u0001'.repeat(300);
    });
  }
  return out;
}

/** What validating its own copy of the request gave: the result or the exception, and the copy as validation left it. */
function outcome(request: Request, validate: (request: Request) => unknown): unknown {
  const own = copy(request);
  try {
    const result = validate(own) as Json;
    return { valid: result.valid, errors: result.errors, coerced: result.coerced, left: own };
  } catch (err) {
    return { threw: (err as Error).name, message: (err as Error).message, left: own };
  }
}

describe("requestValidation against openapi-backend's validateRequest", () => {
  let api: ContractBackend;
  beforeAll(async () => {
    api = await contractBackend();
  });

  it('gives the same verdict, errors and coerced request for every operation, its examples and their mutations', () => {
    const fast = requestValidation(api);
    const upstream = vi.spyOn(api.validator, 'validateRequest');
    let compared = 0;
    let invalid = 0;
    let handedOver = 0;
    for (const operation of api.getOperations()) {
      for (const { what: example, request: base } of baseRequests(operation)) {
        for (const { what, request } of variants(operation, base)) {
          const label = `${operation.operationId}, ${example}, ${what}`;
          upstream.mockClear();
          const mine = outcome(request, (own) => fast(own, operation));
          handedOver += upstream.mock.calls.length;
          const theirs = outcome(request, (own) => api.validator.validateRequest(own, operation));
          expect(mine, label).toEqual(theirs);
          compared++;
          if ((theirs as Json).valid === false) invalid++;
        }
      }
    }
    upstream.mockRestore();
    expect(compared).toBeGreaterThan(500);
    // The mutations are refused (and the examples accepted) often enough for the comparison to mean something.
    expect(invalid).toBeGreaterThan(compared / 3);
    expect(compared - invalid).toBeGreaterThan(100);
    // Most requests take the fast path (only bodies that are not parsed objects are handed to openapi-backend).
    expect(handedOver).toBeLessThan(compared / 4);
  });
});
