/**
 * What the cross-operation harnesses (coverage, auth matrix, bad input, mock) read from the
 * bundled spec, and how they turn an operation into a real request: path parameters from
 * resource factories, bodies from the operation's first named request example.
 *
 * When the spec asks for something a harness cannot make (a path parameter with no factory, a
 * body with no named example), it throws a HarnessGap whose message tells the engineer who
 * added the operation exactly what to add, and where.
 */
import http from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { spec, specOperations, type SpecOperation } from '../helpers/contractFetch.ts';
import { credentialFactories, resourceFactories } from '../helpers/resources.ts';
import type { TestAccount, TestApp } from '../helpers/testApp.ts';

export { spec, specOperations, type SpecOperation };

type Json = Record<string, any>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const OPENAPI_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'];

function makeAjv(coerceTypes: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes });
  addFormats(ajv);
  for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true);
  return ajv;
}
/** Bodies are validated as sent (no coercion); parameters arrive as strings and are coerced, as the edge does. */
const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export class HarnessGap extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HarnessGap';
  }
}

export function label(op: SpecOperation): string {
  return `${op.operationId} (${op.method.toUpperCase()} ${op.pathTemplate})`;
}

/** The security scheme names an operation accepts; an empty list means it is public. */
export function securitySchemes(op: SpecOperation): string[] {
  const requirements = (op.operation.security ?? spec.security ?? []) as Array<Record<string, unknown>>;
  return [...new Set(requirements.flatMap((requirement) => Object.keys(requirement)))];
}

export function requiredRole(op: SpecOperation): string | undefined {
  return op.operation['x-required-role'] as string | undefined;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Json;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

export function parameters(op: SpecOperation, where: Parameter['in']): Parameter[] {
  const byKey = new Map<string, Parameter>();
  for (const p of [...((op.pathItem.parameters ?? []) as Parameter[]), ...((op.operation.parameters ?? []) as Parameter[])]) {
    byKey.set(`${p.in}:${p.name.toLowerCase()}`, p);
  }
  const list = [...byKey.values()].filter((p) => p.in === where);
  if (where === 'path') {
    const order = [...op.pathTemplate.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    list.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  }
  return list;
}

/** The value a parameter's documentation gives as its example, as a string. */
function exampleOf(param: Parameter): string | undefined {
  const candidates = [
    param.example,
    Object.values(param.examples ?? {})[0]?.value,
    param.schema?.example,
    (param.schema?.examples as unknown[] | undefined)?.[0],
    param.schema?.default,
    (param.schema?.enum as unknown[] | undefined)?.[0],
    param.schema?.const,
  ];
  const found = candidates.find((value) => value !== undefined && value !== null);
  return found === undefined ? undefined : String(found);
}

/** The path with each `{name}` replaced by `values[name]` (URL-encoded). */
export function fillPath(op: SpecOperation, values: Record<string, string>): string {
  return op.pathTemplate.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new HarnessGap(`${label(op)}: no value for path parameter {${name}}`);
    return encodeURIComponent(value);
  });
}

/** Path parameter values from the parameters' documented examples (for requests that never reach a handler). */
export function examplePathValues(op: SpecOperation): Record<string, string> {
  const values: Record<string, string> = {};
  for (const param of parameters(op, 'path')) values[param.name] = exampleOf(param) ?? 'example';
  return values;
}

/** Required query parameters, from their documented examples. */
export function requiredQuery(op: SpecOperation): Record<string, string> {
  const query: Record<string, string> = {};
  for (const param of parameters(op, 'query')) {
    if (!param.required) continue;
    const value = exampleOf(param);
    if (value === undefined) {
      throw new HarnessGap(
        `${label(op)}: the required query parameter "${param.name}" has no example; add \`example:\` to the parameter (or \`examples:\` to its schema) so the harnesses can build a valid request`,
      );
    }
    query[param.name] = value;
  }
  return query;
}

export function withQuery(path: string, query: Record<string, string>): string {
  const search = new URLSearchParams(query).toString();
  return search ? `${path}?${search}` : path;
}

export interface RequestBodyMedia {
  mediaType: string;
  schema: Json | undefined;
  media: Json;
  required: boolean;
}

/** The operation's request body, by its first declared media type (undefined when it takes none). */
export function requestBody(op: SpecOperation): RequestBodyMedia | undefined {
  const body = op.operation.requestBody as Json | undefined;
  const content = body?.content as Record<string, Json> | undefined;
  if (!content) return undefined;
  const [mediaType, media] = Object.entries(content)[0]!;
  return { mediaType, schema: media.schema as Json | undefined, media, required: body?.required === true };
}

export interface RequestExample {
  name: string;
  mediaType: string;
  value: unknown;
}

/** The first named example of the operation's request body; HarnessGap when there is none. */
export function firstRequestExample(op: SpecOperation): RequestExample | undefined {
  const body = requestBody(op);
  if (!body) return undefined;
  const [name, example] = Object.entries((body.media.examples ?? {}) as Record<string, Json>)[0] ?? [];
  if (!name || !example || example.value === undefined) {
    throw new HarnessGap(
      `${label(op)}: its ${body.mediaType} request body has no named example. Add \`examples: { <name>: { summary: ..., value: ... } }\` ` +
        `beside its schema in openapi/paths/ (a valid, realistic body: the harnesses send it as the valid request), then \`npm run generate\``,
    );
  }
  return { name, mediaType: body.mediaType, value: example.value };
}

/** Whether `value` is valid for `schema` as a JSON body (no coercion). */
export function bodyValidator(schema: Json): ValidateFunction {
  return bodyAjv.compile(schema);
}

/** Whether a raw string parameter value is valid for the parameter's schema, coerced as the edge coerces it. */
export function parameterAccepts(param: Parameter, raw: string): boolean {
  const validate = paramAjv.compile({ type: 'object', properties: { v: param.schema ?? {} } });
  return validate({ v: raw });
}

// ---- multipart -------------------------------------------------------------------------------

/** Small files whose leading bytes are what their type says, for upload operations. */
const SAMPLE_FILES: Record<string, { bytes: Buffer; fileName: string }> = {
  'application/pdf': {
    fileName: 'sample.pdf',
    bytes: Buffer.from('%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n'),
  },
  'image/png': {
    fileName: 'sample.png',
    bytes: Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4a30000000049454e44ae426082', 'hex'),
  },
  'image/jpeg': { fileName: 'sample.jpg', bytes: Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex') },
};

/** The multipart fields that carry files: `format: binary` or a `contentMediaType`. */
export function fileFields(body: RequestBodyMedia): string[] {
  const properties = (body.schema?.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties)
    .filter(([, schema]) => schema.format === 'binary' || schema.contentMediaType !== undefined || schema.contentEncoding !== undefined)
    .map(([name]) => name);
}

function fileFor(body: RequestBodyMedia, field: string): { blob: Blob; fileName: string } {
  const declared = String(body.media.encoding?.[field]?.contentType ?? body.schema?.properties?.[field]?.contentMediaType ?? 'application/pdf');
  const type = declared.split(',').map((t) => t.trim()).find((t) => t in SAMPLE_FILES) ?? 'application/pdf';
  const sample = SAMPLE_FILES[type]!;
  return { blob: new Blob([new Uint8Array(sample.bytes)], { type }), fileName: sample.fileName };
}

/** A multipart form from an example value: files synthesised for file fields, the rest as text. */
export function multipartForm(body: RequestBodyMedia, value: Json, omit: string[] = []): FormData {
  const form = new FormData();
  const files = fileFields(body);
  for (const [name, fieldValue] of Object.entries(value)) {
    if (omit.includes(name) || files.includes(name)) continue;
    form.append(name, typeof fieldValue === 'string' ? fieldValue : JSON.stringify(fieldValue));
  }
  for (const name of files) {
    if (omit.includes(name)) continue;
    const { blob, fileName } = fileFor(body, name);
    form.append(name, blob, fileName);
  }
  return form;
}

/** A request body and its content type for an example value of the operation's body. */
export function encodeBody(body: RequestBodyMedia, value: unknown): { body: string | FormData; headers: Record<string, string> } {
  if (body.mediaType === 'multipart/form-data') return { body: multipartForm(body, value as Json), headers: {} };
  if (body.mediaType.endsWith('json')) return { body: JSON.stringify(value), headers: { 'Content-Type': body.mediaType } };
  return { body: typeof value === 'string' ? value : JSON.stringify(value), headers: { 'Content-Type': body.mediaType } };
}

// ---- resources and credentials ---------------------------------------------------------------

/** Creates, in `owner`'s account, one resource per path parameter of the operation; returns their ids. */
export async function createPathResources(app: TestApp, owner: TestAccount, op: SpecOperation): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const param of parameters(op, 'path')) {
    const factory = resourceFactories[param.name];
    if (!factory) {
      throw new HarnessGap(
        `${label(op)}: no resource factory for the path parameter "${param.name}". Add to \`resourceFactories\` in test/helpers/resources.ts:\n` +
          `  async ${param.name}(app, owner, earlier) { /* create it through the API as owner.client; earlier holds ${JSON.stringify(Object.keys(ids))} */ return id; }`,
      );
    }
    const id = await factory(app, owner, { ...ids });
    if (typeof id !== 'string' || id === '') throw new HarnessGap(`resourceFactories.${param.name} returned ${JSON.stringify(id)} instead of an id`);
    ids[param.name] = id;
  }
  return ids;
}

/** A valid credential of `scheme` for `owner` (its admin API key for `apiKey`; its test one on test mode's own paths). */
export async function credentialFor(app: TestApp, owner: TestAccount, scheme: string, op?: SpecOperation): Promise<string> {
  if (scheme === 'apiKey' && op && isTestModePath(op)) return owner.testKey;
  const factory = credentialFactories[scheme];
  if (!factory) {
    throw new HarnessGap(
      `${op ? label(op) + ': ' : ''}no credential factory for the security scheme "${scheme}". Add to \`credentialFactories\` in test/helpers/resources.ts:\n` +
        `  async ${scheme}(app, owner) { /* make a valid ${scheme} credential for owner's account */ return token; }`,
    );
  }
  return factory(app, owner);
}

/** Test mode's own operations (`/v1/test/…`), which only a test key reaches. */
export function isTestModePath(op: SpecOperation): boolean {
  return op.pathTemplate.startsWith('/v1/test/');
}

/** The same account acting in test mode: its test admin key and client in place of the live ones. */
export function inTestMode(owner: TestAccount): TestAccount {
  return { ...owner, apiKey: owner.testKey, client: owner.test };
}

/** Waits until no write is queued or running in the app's store, and the LSN holds still. */
export async function settledLsn(app: TestApp): Promise<number> {
  const store = app.ctx.store;
  let last = -1;
  let stableFor = 0;
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    // The store runs jobs in order: a read enqueued now finishes after every write queued before it.
    await store.read(async () => undefined);
    const lsn = store.stats().lsn;
    stableFor = lsn === last ? stableFor + 1 : 0;
    last = lsn;
    if (stableFor >= 2) return lsn;
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  throw new Error(`the store kept writing for 5 s (lsn ${last}); cannot measure that bad requests write nothing`);
}

// ---- requests ----------------------------------------------------------------------------------

export interface OperationRequest {
  /** Path parameter values (default: the parameters' documented examples). */
  pathValues?: Record<string, string>;
  /** The whole Authorization header, or undefined for none. */
  authorization?: string;
  /** Send the first named request example as the body (default true when the operation has a body). */
  withBody?: boolean;
  headers?: Record<string, string>;
}

/** Builds the operation's documented request: path, required query, and its example body when it has one. */
export function buildRequest(op: SpecOperation, options: OperationRequest = {}): { path: string; init: RequestInit } {
  const path = withQuery(fillPath(op, options.pathValues ?? examplePathValues(op)), requiredQuery(op));
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.Authorization = options.authorization;
  const init: RequestInit = { method: op.method.toUpperCase(), headers };
  const body = requestBody(op);
  if (body && options.withBody !== false) {
    const example = firstRequestExample(op)!;
    const encoded = encodeBody(body, example.value);
    init.body = encoded.body;
    Object.assign(headers, encoded.headers);
  }
  return { path, init };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * One HTTP request with exactly the given method, headers and body (fetch refuses a body on GET
 * and adds a Content-Type to string bodies; the harnesses need neither). FormData bodies are
 * encoded as multipart with their boundary.
 */
export async function rawRequest(url: string, init: { method: string; headers?: Record<string, string>; body?: string | Buffer | FormData }): Promise<RawResponse> {
  const headers: Record<string, string> = { ...init.headers };
  let payload: Buffer | undefined;
  if (init.body instanceof FormData) {
    const encoded = new Response(init.body);
    payload = Buffer.from(await encoded.arrayBuffer());
    headers['Content-Type'] ??= encoded.headers.get('content-type')!;
  } else if (init.body !== undefined) {
    payload = Buffer.isBuffer(init.body) ? init.body : Buffer.from(init.body);
  }
  if (payload !== undefined) headers['Content-Length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
        }
        resolve({ status: res.statusCode!, headers: responseHeaders, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    // The server may answer (413) and stop reading before the whole body is sent; the answer is what counts.
    req.on('error', reject);
    req.end(payload);
  });
}
