/**
 * The spec against the project: every operation has an API test that calls it, is routed by the running app,
 * and is documented well enough for the reference, the mock and the bad-input harness (named
 * examples everywhere, bounded strings and numbers in request bodies).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { describeBlocks, testsOperation } from './apiTestScan.ts';
import { examplePathValues, fillPath, label, requestBody, spec, specOperations } from './harness.ts';

type Json = Record<string, any>;

const operations = specOperations();
const API_TESTS = fileURLToPath(new URL('../api/', import.meta.url));

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.test.ts')).map((e) => path.join(e.parentPath, e.name));
}

describe('every operation has an API test that calls it', () => {
  let sources: Array<{ file: string; source: string }>;
  beforeAll(async () => {
    sources = [];
    for (const file of await testFiles(API_TESTS)) sources.push({ file: path.relative(path.dirname(API_TESTS), file), source: await readFile(file, 'utf8') });
  });

  it('the spec declares operations', () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  it.each(operations.map((op) => [op.operationId, op] as const))('%s has a describe() in test/api with a test that calls it', (operationId, op) => {
    const named = sources.filter(({ source }) => describeBlocks(source).some((block) => block.name === operationId)).map(({ file }) => file);
    const calling = sources.filter(({ source }) => testsOperation(source, op));
    const how = `call it inside the block with the typed client (\`.${op.method.toUpperCase()}('${op.pathTemplate}', …)\`), a raw request to its path, or a helper of the same file that does`;
    expect(
      calling.length > 0,
      named.length === 0
        ? `${label(op)} has no API test: add \`describe('${operationId}', ...)\` with its tests to a test/api/<feature>.test.ts file, and ${how}`
        : `${label(op)}: describe('${operationId}') in ${named.join(', ')} holds no test that calls the operation; ${how}`,
    ).toBe(true);
  });
});

describe('the API-test scan (test/contract/apiTestScan.ts)', () => {
  const op = { operationId: 'createWebhook', method: 'post', pathTemplate: '/v1/webhooks' };
  const calls = (body: string, helpers = '') => testsOperation(`${helpers}\ndescribe('createWebhook', () => {\n${body}\n});\n`, op);

  it('an empty describe, or one whose tests never call the operation, does not count', () => {
    expect(calls('')).toBe(false);
    expect(calls("it('lists', async () => { await client.GET('/v1/webhooks'); });")).toBe(false);
    expect(calls("it('patches', async () => { await client.PATCH('/v1/webhooks/{webhookId}', {}); });")).toBe(false);
    // A call with no test around it is no test.
    expect(calls("await client.POST('/v1/webhooks', { body });")).toBe(false);
    // A call in another describe block is not this one's.
    expect(testsOperation("describe('createWebhook', () => { it('x', () => {}); });\ndescribe('other', () => { it('y', async () => { await c.POST('/v1/webhooks', {}); }); });", op)).toBe(false);
  });

  it('counts a typed call, a raw request with its method, and a call through helpers of the file', () => {
    expect(calls("it('registers', async () => { await owner.client.POST('/v1/webhooks', { body }); });")).toBe(true);
    expect(calls("it('raw', async () => { await fetch(`${app.baseUrl}/v1/webhooks`, { method: 'POST', body: '{}' }); });")).toBe(true);
    expect(calls("it('raw GET', async () => { await fetch(`${app.baseUrl}/v1/webhooks`); });")).toBe(false);
    const helpers = [
      'async function register(owner: TestAccount, url: string): Promise<{ id: string }> {',
      "  const { data } = await owner.client.POST('/v1/webhooks', { body: { url } });",
      '  return data!;',
      '}',
      'const registerTwice = async (owner: TestAccount) => { await register(owner, "a"); await register(owner, "b"); };',
    ].join('\n');
    expect(calls("it('via a helper', async () => { await registerTwice(owner); });", helpers)).toBe(true);
    expect(calls("it('not via a helper', async () => { await somethingElse(owner); });", helpers)).toBe(false);
    expect(
      testsOperation("describe('getWebhook', () => { it('reads', async () => { await app.fetch(`/v1/webhooks/${id}`, { headers }); }); });", {
        operationId: 'getWebhook',
        method: 'get',
        pathTemplate: '/v1/webhooks/{webhookId}',
      }),
    ).toBe(true);
  });
});

describe('every operation is routed', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it('openapi-backend lists exactly the operations of the spec', () => {
    const routed = app.api.getOperations().map((op) => op.operationId).sort();
    expect(routed).toEqual(operations.map((op) => op.operationId).sort());
  });

  it.each(operations.map((op) => [label(op), op] as const))('%s reaches its operation, not the notFound handler', async (_label, op) => {
    const pathname = fillPath(op, examplePathValues(op));
    const matched = app.api.matchOperation({ method: op.method, path: pathname, headers: {}, query: {} });
    expect(matched?.operationId, `openapi-backend does not match ${op.method.toUpperCase()} ${pathname}`).toBe(op.operationId);

    // Without credentials a routed operation stops at authentication (or runs, when public);
    // an unrouted one would answer the notFound or methodNotAllowed handler's problem.
    const response = await fetch(app.baseUrl + pathname, { method: op.method.toUpperCase() });
    const text = await response.text();
    expect(response.status, text).not.toBe(405);
    if (response.status === 404) expect(JSON.parse(text).detail, text).not.toMatch(/^There is no operation at/);
  });
});

// ---- documentation -----------------------------------------------------------------------------

function namedExamples(media: Json | undefined): string[] {
  return Object.entries((media?.examples ?? {}) as Record<string, Json>)
    .filter(([, example]) => example && (example.value !== undefined || example.externalValue !== undefined))
    .map(([name]) => name);
}

function documentationGaps(op: (typeof operations)[number]): string[] {
  const gaps: string[] = [];
  const o = op.operation as Json;
  if (!o.summary) gaps.push('the operation has no summary');
  if (!o.description) gaps.push('the operation has no description');
  if (!Array.isArray(o.tags) || o.tags.length === 0) gaps.push('the operation has no tag');
  const body = o.requestBody as Json | undefined;
  if (body) {
    if (!body.description) gaps.push('the request body has no description');
    for (const [mediaType, media] of Object.entries((body.content ?? {}) as Record<string, Json>)) {
      if (namedExamples(media).length === 0) gaps.push(`the ${mediaType} request body has no named example (examples: { name: { summary, value } })`);
    }
  }
  const responses = Object.entries((o.responses ?? {}) as Record<string, Json>);
  if (responses.length === 0) gaps.push('the operation declares no responses');
  for (const [status, response] of responses) {
    if (!response.description) gaps.push(`response ${status} has no description`);
    for (const [mediaType, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
      if (namedExamples(media).length === 0) gaps.push(`response ${status} ${mediaType} has no named example (examples: { name: { summary, value } })`);
    }
  }
  return gaps;
}

describe('every operation is documented with named examples', () => {
  it.each(operations.map((op) => [label(op), op] as const))('%s has summaries, descriptions and named examples', (_label, op) => {
    const gaps = documentationGaps(op);
    expect(gaps, `${label(op)} in openapi/paths/:\n  - ${gaps.join('\n  - ')}`).toEqual([]);
  });
});

// ---- bounded request bodies --------------------------------------------------------------------

/** A pattern bounds length when it is anchored and repeats nothing without an upper bound. */
export function patternIsBounded(pattern: string): boolean {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return false;
  const bare = pattern
    .replace(/\\./g, 'e') // escaped characters are literals
    .replace(/\[[^\]]*\]/g, 'c'); // so is everything inside a character class
  return !/[*+]|\{\d+,\}/.test(bare);
}

function typesOf(schema: Json): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === 'string' ? [schema.type] : [];
}

/** Every string and number anywhere in a request schema, with what bounds it lacks. */
export function unboundedFields(schema: Json | undefined, pointer = '', seen = new Set<Json>()): string[] {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const gaps: string[] = [];
  const where = pointer || '(the body)';
  const closed = schema.enum !== undefined || schema.const !== undefined;
  const types = typesOf(schema);
  if (types.includes('string') && !closed) {
    const binary = schema.format === 'binary' || schema.contentMediaType !== undefined || schema.contentEncoding !== undefined;
    const boundedPattern = typeof schema.pattern === 'string' && patternIsBounded(schema.pattern);
    if (!binary && schema.maxLength === undefined && !boundedPattern) {
      gaps.push(`${where}: string without maxLength (or enum, const, or an anchored pattern of bounded length)`);
    }
  }
  if ((types.includes('number') || types.includes('integer')) && !closed) {
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined) gaps.push(`${where}: number without minimum`);
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) gaps.push(`${where}: number without maximum`);
  }
  for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    gaps.push(...unboundedFields(child, `${pointer}/${name}`, seen));
  }
  if (schema.items && typeof schema.items === 'object') gaps.push(...unboundedFields(schema.items, `${pointer}/0`, seen));
  for (const [i, item] of ((schema.prefixItems ?? []) as Json[]).entries()) gaps.push(...unboundedFields(item, `${pointer}/${i}`, seen));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    gaps.push(...unboundedFields(schema.additionalProperties, `${pointer}/*`, seen));
  }
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    for (const branch of (schema[keyword] ?? []) as Json[]) gaps.push(...unboundedFields(branch, pointer, seen));
  }
  return gaps;
}

describe('request bodies bound every string and number', () => {
  it('recognises bounded and unbounded patterns', () => {
    expect(patternIsBounded('^key-[0-9a-z]{26}$')).toBe(true);
    expect(patternIsBounded('^[\\x21-\\x7E]{1,255}$')).toBe(true);
    expect(patternIsBounded('^[a-z+]{2,8}$')).toBe(true);
    expect(patternIsBounded('^[0-9]+$')).toBe(false);
    expect(patternIsBounded('^a.*$')).toBe(false);
    expect(patternIsBounded('^a{2,}$')).toBe(false);
    expect(patternIsBounded('[a-z]{3}')).toBe(false);
  });

  it('finds an unbounded string and number in a nested schema', () => {
    const gaps = unboundedFields({
      type: 'object',
      properties: { name: { type: 'string' }, applicant: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } } } },
    });
    expect(gaps).toEqual(['/name: string without maxLength (or enum, const, or an anchored pattern of bounded length)', '/applicant/amount: number without maximum']);
  });

  const withBodies = operations.filter((op) => requestBody(op));
  it.each(withBodies.map((op) => [label(op), op] as const))('%s bounds every string and number of its request body', (_label, op) => {
    const gaps: string[] = [];
    for (const [mediaType, media] of Object.entries((op.operation.requestBody.content ?? {}) as Record<string, Json>)) {
      gaps.push(...unboundedFields(media.schema as Json).map((gap) => `${mediaType} ${gap}`));
    }
    expect(gaps, `${label(op)}: the bad-input harness sends 100,000-character strings and huge numbers, which must get 400:\n  - ${gaps.join('\n  - ')}`).toEqual([]);
  });
});

it('the spec is an OpenAPI 3.1 document with the 2020-12 dialect (Prism and Ajv read schemas by it)', () => {
  expect(spec.openapi).toMatch(/^3\.1\./);
  expect(spec.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
});
