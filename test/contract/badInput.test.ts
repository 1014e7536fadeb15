/**
 * The bad-input harness: for every operation of the spec, requests that are wrong in form
 * (invalid JSON, the wrong content type, too large, too deep, a field of the wrong type, missing
 * or unknown, a 100,000-character string, a control character or an unpaired surrogate in any
 * string field, a malformed path or query parameter, an overlong Idempotency-Key) each get the 4xx
 * problem+json the conventions name, never a 5xx, and write nothing: the store's LSN does not move.
 *
 * Every case starts from the operation's valid request (real path resources from
 * test/helpers/resources.ts, the first named request example as the body) and breaks one thing,
 * so a refusal is about that thing. The valid request itself is sent first as a control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MULTI_LINE_TEXT } from '../../src/domain/text/textRule.ts';
import { checkProblem } from '../helpers/contractFetch.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import {
  HarnessGap,
  bodyValidator,
  createPathResources,
  credentialFor,
  encodeBody,
  fileFields,
  fillPath,
  firstRequestExample,
  label,
  multipartForm,
  parameterAccepts,
  parameters,
  rawRequest,
  requestBody,
  requiredQuery,
  securitySchemes,
  settledLsn,
  specOperations,
  withQuery,
  type Parameter,
  type RequestBodyMedia,
  type SpecOperation,
} from './harness.ts';

type Json = Record<string, any>;

const HUGE = 'x'.repeat(100_000);
const DEEP_LEVELS = 5_000;
const SHARED_RESPONSE: Record<number, string> = {
  400: 'BadRequest.yaml',
  413: 'PayloadTooLarge.yaml',
  415: 'UnsupportedMediaType.yaml',
};

/** What each case runs against: the operation's valid request, with real ids and credentials. */
interface Base {
  pathValues: Record<string, string>;
  query: Record<string, string>;
  authorization: Record<string, string>;
  example: unknown;
}

interface BadRequest {
  pathValues?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | Buffer | FormData;
}

interface BadCase {
  name: string;
  status: number;
  /** The problem `code` the edge gives this failure, when the edge (not the feature) decides it. */
  code?: string;
  /** A JSON Pointer that must appear in the problem's errors[]. */
  pointer?: string;
  /** Whether the operation must declare the status (false only for inputs it does not declare at all). */
  declared: boolean;
  /** Why the spec itself would be at fault if the service accepted this, when a local check finds the spec allows it. */
  specAllows?: string;
  build(base: Base): BadRequest;
}

// ---- body mutations ----------------------------------------------------------------------------

function typesOf(schema: Json): string[] {
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  return types.includes('integer') ? [...types, 'number'] : types;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** A value of a JSON type the schema does not allow, checked invalid against the schema itself. */
function wrongTypeValue(schema: Json): unknown {
  const allowed = typesOf(schema);
  const validate = bodyValidator(schema);
  for (const candidate of [12345, 'text', true, { wrong: 'type' }, ['wrong']]) {
    if (allowed.includes(jsonType(candidate))) continue;
    if (!validate(candidate)) return candidate;
  }
  return undefined;
}

function mergedProperties(schema: Json): { properties: Record<string, Json>; required: string[] } {
  const properties: Record<string, Json> = { ...(schema.properties ?? {}) };
  const required: string[] = [...(schema.required ?? [])];
  for (const part of (schema.allOf ?? []) as Json[]) {
    const merged = mergedProperties(part);
    Object.assign(properties, merged.properties);
    required.push(...merged.required);
  }
  return { properties, required };
}

function setAt(root: unknown, path: string[], value: unknown, remove = false): unknown {
  const copy = structuredClone(root) as Json;
  let node: Json = copy;
  for (const segment of path.slice(0, -1)) node = node[segment] as Json;
  const last = path.at(-1)!;
  if (remove) delete node[last];
  else node[last] = value;
  return copy;
}

const pointerOf = (path: string[]) => '/' + path.join('/');

/** Whether a schema takes a string here (directly or in one branch of anyOf/oneOf). */
function acceptsString(schema: Json): boolean {
  return typesOf(schema).includes('string') || [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some((branch: Json) => acceptsString(branch));
}

/** What breaks the text rule (issue 25): NUL, another C0 control, an unpaired surrogate. */
const TEXT_BREAKERS: ReadonlyArray<readonly [string, string]> = [
  ['a NUL character', '\u0000'],
  ['an escape character (U+001B)', '\u001b'],
  ['a line feed', '\n'],
  ['an unpaired surrogate', '\ud800'],
];

/** One mutation per way of breaking the text rule, in a string field: the example's text with it inside. */
function textMutations(here: string[], schema: Json, example: unknown): BodyMutation[] {
  const pointer = pointerOf(here);
  const text = typeof example === 'string' && example.length > 0 ? example : 'text';
  // A field the contract declares multi-line keeps its line feeds.
  const breakers = schema.pattern === MULTI_LINE_TEXT ? TEXT_BREAKERS.filter(([, breaker]) => breaker !== '\n') : TEXT_BREAKERS;
  return breakers.map(([what, breaker]) => ({
    name: `${pointer} with ${what}`,
    pointer,
    mutate: (e: unknown) => setAt(e, here, `${text.slice(0, 1)}${breaker}${text.slice(1)}`),
  }));
}

interface BodyMutation {
  name: string;
  pointer: string;
  mutate(example: unknown): unknown;
}

/** One mutation per property (wrong type, missing, huge string, text the text rule refuses) and per object (unknown field), recursively. */
function bodyMutations(schema: Json, example: unknown, path: string[] = [], depth = 0): BodyMutation[] {
  if (depth > 4 || jsonType(example) !== 'object') return [];
  const mutations: BodyMutation[] = [];
  const { properties, required } = mergedProperties(schema);
  for (const [name, propSchema] of Object.entries(properties)) {
    const here = [...path, name];
    const pointer = pointerOf(here);
    const wrong = wrongTypeValue(propSchema);
    if (wrong !== undefined) {
      mutations.push({ name: `${pointer} of the wrong type (${JSON.stringify(wrong)})`, pointer, mutate: (e) => setAt(e, here, wrong) });
    }
    if (required.includes(name)) {
      mutations.push({ name: `${pointer} missing (required)`, pointer, mutate: (e) => setAt(e, here, undefined, true) });
    }
    mutations.push({ name: `${pointer} as a 100,000-character string`, pointer, mutate: (e) => setAt(e, here, HUGE) });
    const value = (example as Json)[name];
    if (acceptsString(propSchema)) mutations.push(...textMutations(here, propSchema, value));
    if (Array.isArray(value) && typeof value[0] === 'string' && propSchema.items && acceptsString(propSchema.items as Json)) {
      mutations.push(...textMutations([...here, '0'], propSchema.items as Json, value[0]));
    }
    if (jsonType(value) === 'object') mutations.push(...bodyMutations(propSchema, value, here, depth + 1));
    if (Array.isArray(value) && jsonType(value[0]) === 'object' && propSchema.items) {
      mutations.push(...bodyMutations(propSchema.items as Json, value[0], [...here, '0'], depth + 1));
    }
  }
  const unknown = [...path, 'unexpectedField'];
  mutations.push({ name: `an unknown field ${pointerOf(unknown)}`, pointer: pointerOf(unknown), mutate: (e) => setAt(e, unknown, 'surprise') });
  return mutations;
}

// ---- parameter mutations -----------------------------------------------------------------------

function invalidParameterValues(param: Parameter): Array<{ what: string; value: string }> {
  const schema = (param.schema ?? {}) as Json;
  const candidates: Array<{ what: string; value: string }> = [];
  const types = typesOf(schema);
  if (types.includes('number') || types.includes('boolean')) candidates.push({ what: 'wrong type', value: 'abc' });
  if (types.includes('integer')) candidates.push({ what: 'not a whole number', value: '1.5' });
  if (typeof schema.minimum === 'number') candidates.push({ what: 'below minimum', value: String(schema.minimum - 1) });
  if (typeof schema.maximum === 'number') candidates.push({ what: 'above maximum', value: String(schema.maximum + 1) });
  if (schema.enum || schema.const !== undefined) candidates.push({ what: 'not an allowed value', value: 'not-an-allowed-value' });
  if (typeof schema.maxLength === 'number') candidates.push({ what: 'too long', value: 'x'.repeat(schema.maxLength + 1) });
  if (typeof schema.minLength === 'number' && schema.minLength > 0) candidates.push({ what: 'empty', value: '' });
  if (schema.pattern || schema.format) candidates.push({ what: 'wrong shape', value: 'not~a~valid~value' });
  if (types.includes('string')) {
    candidates.push({ what: 'a NUL character', value: 'a\u0000b' }, { what: 'an escape character (U+001B)', value: 'a\u001bb' });
  }
  candidates.push({ what: 'wrong shape', value: 'x'.repeat(300) });
  const seen = new Set<string>();
  return candidates.filter((c) => !seen.has(c.value) && (seen.add(c.value), !parameterAccepts(param, c.value)));
}

// ---- the cases of one operation ----------------------------------------------------------------

function jsonBodyCases(op: SpecOperation, body: RequestBodyMedia, limitBytes: () => number): BadCase[] {
  const json = { 'Content-Type': body.mediaType };
  const text = (base: Base) => JSON.stringify(base.example);
  const cases: BadCase[] = [
    {
      name: 'invalid JSON',
      status: 400,
      code: 'malformed_json',
      declared: true,
      build: (base) => ({ headers: json, body: text(base).slice(0, -1) + ',' }),
    },
    { name: 'Content-Type: text/plain', status: 415, code: 'unsupported_media_type', declared: true, build: (base) => ({ headers: { 'Content-Type': 'text/plain' }, body: text(base) }) },
    {
      name: 'Content-Type: application/xml',
      status: 415,
      code: 'unsupported_media_type',
      declared: true,
      build: () => ({ headers: { 'Content-Type': 'application/xml' }, body: '<request><name>x</name></request>' }),
    },
    // A Buffer body makes fetch send no Content-Type at all.
    { name: 'no Content-Type', status: 415, code: 'unsupported_media_type', declared: true, build: (base) => ({ body: Buffer.from(text(base)) }) },
    {
      name: 'a body over the JSON limit',
      status: 413,
      code: 'payload_too_large',
      declared: true,
      build: (base) => ({ headers: json, body: JSON.stringify({ ...(base.example as Json), padding: 'x'.repeat(limitBytes() + 1024) }) }),
    },
    {
      name: `JSON nested ${DEEP_LEVELS.toLocaleString('en')} levels deep`,
      status: 400,
      code: 'body_too_deep',
      declared: true,
      build: (base) => {
        const deep = '{"a":'.repeat(DEEP_LEVELS) + '1' + '}'.repeat(DEEP_LEVELS);
        const head = text(base);
        return { headers: json, body: head === '{}' ? `{"nested":${deep}}` : `${head.slice(0, -1)},"nested":${deep}}` };
      },
    },
    { name: 'a JSON array instead of an object', status: 400, code: 'validation_failed', declared: true, build: () => ({ headers: json, body: '[]' }) },
  ];
  if (body.required) {
    cases.push({ name: 'an empty body', status: 400, code: 'validation_failed', declared: true, build: () => ({ headers: json, body: '' }) });
  }
  const example = exampleOrUndefined(op);
  if (body.schema && example !== undefined) {
    const validate = bodyValidator(body.schema);
    for (const mutation of bodyMutations(body.schema, example)) {
      const mutated = mutation.mutate(example);
      cases.push({
        name: `body ${mutation.name}`,
        status: 400,
        code: 'validation_failed',
        pointer: mutation.pointer,
        declared: true,
        specAllows: validate(mutated) ? `the request schema itself accepts this body (${mutation.name}): tighten it in openapi/` : undefined,
        build: () => ({ headers: json, body: JSON.stringify(mutated) }),
      });
    }
  }
  return cases;
}

function multipartCases(op: SpecOperation, body: RequestBodyMedia): BadCase[] {
  const example = exampleOrUndefined(op) as Json | undefined;
  const cases: BadCase[] = [
    {
      name: 'Content-Type: application/json instead of multipart/form-data',
      status: 415,
      code: 'unsupported_media_type',
      declared: true,
      build: (base) => ({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(base.example) }),
    },
    { name: 'Content-Type: text/plain', status: 415, code: 'unsupported_media_type', declared: true, build: () => ({ headers: { 'Content-Type': 'text/plain' }, body: 'a document' }) },
    { name: 'no Content-Type', status: 415, code: 'unsupported_media_type', declared: true, build: () => ({ body: Buffer.from('a document') }) },
  ];
  if (example) {
    const required: string[] = body.schema?.required ?? [];
    for (const field of fileFields(body)) {
      cases.push({ name: `the file part "${field}" missing`, status: 400, declared: true, build: () => ({ body: multipartForm(body, example, [field]) }) });
    }
    for (const field of required.filter((f) => !fileFields(body).includes(f))) {
      cases.push({ name: `the required field "${field}" missing`, status: 400, declared: true, build: () => ({ body: multipartForm(body, example, [field]) }) });
    }
  }
  return cases;
}

function exampleOrUndefined(op: SpecOperation): unknown {
  try {
    return firstRequestExample(op)?.value;
  } catch (err) {
    if (err instanceof HarnessGap) return undefined;
    throw err;
  }
}

function casesFor(op: SpecOperation, limitBytes: () => number): BadCase[] {
  const cases: BadCase[] = [];
  const body = requestBody(op);
  if (!body) {
    cases.push({
      name: 'a JSON body where the operation takes none',
      status: 400,
      code: 'body_not_allowed',
      declared: false,
      build: () => ({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ unexpected: true }) }),
    });
  } else if (body.mediaType === 'multipart/form-data') {
    cases.push(...multipartCases(op, body));
  } else if (body.mediaType.endsWith('json')) {
    cases.push(...jsonBodyCases(op, body, limitBytes));
  }

  for (const param of parameters(op, 'path')) {
    for (const { what, value } of invalidParameterValues(param).slice(0, 2)) {
      cases.push({
        name: `path parameter {${param.name}} ${what} (${JSON.stringify(value.length > 40 ? value.slice(0, 20) + '…' : value)})`,
        status: 400,
        code: 'validation_failed',
        pointer: `#/path/${param.name}`,
        declared: true,
        build: (base) => ({ pathValues: { ...base.pathValues, [param.name]: value } }),
      });
    }
  }
  for (const param of parameters(op, 'query')) {
    for (const { what, value } of invalidParameterValues(param)) {
      cases.push({
        name: `query ${param.name} ${what} (${JSON.stringify(value.length > 40 ? value.slice(0, 20) + '…' : value)})`,
        status: 400,
        code: 'validation_failed',
        pointer: `#/query/${param.name}`,
        declared: true,
        build: (base) => ({ query: { ...base.query, [param.name]: value } }),
      });
    }
    if (param.required) {
      cases.push({
        name: `query ${param.name} missing (required)`,
        status: 400,
        code: 'validation_failed',
        pointer: `#/query/${param.name}`,
        declared: true,
        build: (base) => ({ query: Object.fromEntries(Object.entries(base.query).filter(([name]) => name !== param.name)) }),
      });
    }
  }
  if (parameters(op, 'header').some((p) => p.name.toLowerCase() === 'idempotency-key')) {
    cases.push({
      name: 'an Idempotency-Key of 300 characters',
      status: 400,
      code: 'validation_failed',
      pointer: '#/header/idempotency-key',
      declared: true,
      build: () => ({ headers: { 'Idempotency-Key': 'k'.repeat(300) } }),
    });
  }
  return cases;
}

// ---- running -----------------------------------------------------------------------------------

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** The valid request of `base` with `change` applied. */
function requestOf(
  op: SpecOperation,
  body: RequestBodyMedia | undefined,
  base: Base,
  change: BadRequest,
): { url: string; init: { method: string; headers: Record<string, string>; body?: string | Buffer | FormData } } {
  const path = withQuery(fillPath(op, change.pathValues ?? base.pathValues), change.query ?? base.query);
  const headers: Record<string, string> = { ...base.authorization };
  let payload = change.body;
  if (payload === undefined && body && base.example !== undefined) {
    const encoded = encodeBody(body, base.example);
    payload = encoded.body;
    Object.assign(headers, encoded.headers);
  }
  Object.assign(headers, change.headers);
  return { url: app.baseUrl + path, init: { method: op.method.toUpperCase(), headers, body: payload } };
}

const operations = specOperations();

describe.each(operations.map((op) => [label(op), op] as const))('%s', (_label, op) => {
  const body = requestBody(op);
  const cases = casesFor(op, () => app.ctx.config.jsonBodyLimitBytes);
  let account: TestAccount;
  let base: Base;
  let control: { status: number; text: string } | undefined;
  let setupError: unknown;

  beforeAll(async () => {
    try {
      account = await app.newAccount(`Bad Input ${op.operationId}`);
      const schemes = securitySchemes(op);
      const token = schemes.length ? await credentialFor(app, account, schemes[0]!, op) : undefined;
      const example = body ? firstRequestExample(op)!.value : undefined;
      base = {
        pathValues: await createPathResources(app, account, op),
        query: requiredQuery(op),
        authorization: token ? { Authorization: `Bearer ${token}` } : {},
        example,
      };
      // The control: the valid request passes the edge. It also warms the key (its first use is recorded).
      const { url, init } = requestOf(op, body, base, {});
      control = await rawRequest(url, init);
      await settledLsn(app);
    } catch (err) {
      setupError = err;
    }
  });

  function ready(): void {
    if (setupError) throw setupError;
  }

  it('the valid request (the base of every case) passes validation', () => {
    ready();
    expect(
      control!.status,
      `${label(op)}: the valid request built from the spec's examples was refused: ${control!.text.slice(0, 800)}\n` +
        'Fix the first named request example (or the parameter examples) in openapi/paths/ so that it is a valid request.',
    ).not.toBe(400);
    expect(control!.status, control!.text.slice(0, 800)).toBeLessThan(500);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    ready();
    const { url, init } = requestOf(op, body, base, c.build(base));
    const lsnBefore = app.ctx.store.stats().lsn;
    const response = await rawRequest(url, init);
    const text = response.text;
    const where = `${label(op)} — ${c.name}`;
    expect(response.status, `${where}: expected ${c.status}, got ${response.status}${c.specAllows ? `; ${c.specAllows}` : ''}\n${text.slice(0, 800)}`).toBe(c.status);
    await checkProblem(where, new Response(text, { status: response.status, headers: response.headers }));
    expect(response.headers.get('x-request-id'), `${where}: no X-Request-Id`).toBeTruthy();
    const problem = JSON.parse(text) as Json;
    if (c.code) expect(problem.code, `${where}: ${text.slice(0, 800)}`).toBe(c.code);
    if (c.pointer) {
      const pointers = ((problem.errors ?? []) as Json[]).map((e) => e.pointer);
      expect(pointers, `${where}: errors[] does not point at ${c.pointer}: ${text.slice(0, 800)}`).toContain(c.pointer);
    }
    if (c.declared) {
      expect(
        op.operation.responses?.[String(c.status)],
        `${where}: ${op.operationId} answers ${c.status} but does not declare it; add '${c.status}': { $ref: ../components/responses/${SHARED_RESPONSE[c.status] ?? '…'} }`,
      ).toBeDefined();
    }
    let lsnAfter = lsnBefore;
    if (app.ctx.store.stats().lsn !== lsnBefore) {
      // An API key's last use is recorded at most once a minute, by whichever request comes then
      // (a slow run, as on PostgreSQL under load, crosses that minute mid-file): that write is not
      // this request's. Send the request again once the store has settled; now it must write nothing.
      lsnAfter = await settledLsn(app);
      await rawRequest(url, init);
    }
    expect(app.ctx.store.stats().lsn, `${where}: the refused request wrote to the store`).toBe(lsnAfter);
  });
});
