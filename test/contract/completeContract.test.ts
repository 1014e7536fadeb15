/**
 * The contract says what programs depend on: a 500 on every operation (and 502 where a partner is
 * called), the RateLimit headers on every response that can carry them, the servers a partner can
 * point a client at, response and webhook schemas open to additive change (request schemas stay
 * closed), and each export format typed as what it is.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dereference } from '../../src/contract/spec.ts';
import { PROJECT_ROOT } from '../helpers/server.ts';
import { specOperations } from '../helpers/contractFetch.ts';

type Json = Record<string, any>;

const published: Json = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'generated', 'openapi.json'), 'utf8'));
const spec: Json = dereference(published);
const operations = specOperations();

/** Every component schema reached from `node` (by $ref in the published bundle). */
function schemasReached(node: unknown, into = new Set<string>()): Set<string> {
  if (!node || typeof node !== 'object') return into;
  const ref = (node as Json).$ref;
  if (typeof ref === 'string') {
    const [, kind, name] = ref.split('/').slice(1);
    if (kind === 'schemas' && !into.has(name!)) {
      into.add(name!);
      schemasReached(published.components.schemas[name!], into);
    } else if (kind !== 'schemas') schemasReached(published.components[kind!][name!], into);
    return into;
  }
  for (const value of Object.values(node)) schemasReached(value, into);
  return into;
}

function closedAnywhere(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  if ((schema as Json).additionalProperties === false || (schema as Json).unevaluatedProperties === false) return true;
  return Object.entries(schema).some(([key, value]) => key !== '$ref' && closedAnywhere(value));
}

function withoutClosure(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutClosure);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).filter(([key, value]) => !(key === 'additionalProperties' && value === false)).map(([k, v]) => [k, withoutClosure(v)]));
}

describe('5xx answers', () => {
  it.each(operations.map((op) => [op.operationId, op] as const))('%s declares 500 internal_error', (_id, op) => {
    expect(Object.keys(op.operation.responses)).toContain('500');
    expect(op.operation.responses['500']['x-problem-codes']).toEqual(['internal_error']);
  });

  it('verifyBankDetails, the one operation that calls a partner, declares 502', () => {
    const withBadGateway = operations.filter((op) => op.operation.responses['502']).map((op) => op.operationId);
    expect(withBadGateway).toEqual(['verifyBankDetails']);
  });
});

describe('RateLimit headers', () => {
  it('every response of every operation declares RateLimit and RateLimit-Policy', () => {
    const missing: string[] = [];
    for (const op of operations) {
      for (const [status, response] of Object.entries<Json>(op.operation.responses)) {
        for (const header of ['RateLimit', 'RateLimit-Policy', 'X-Request-Id']) {
          if (!response.headers?.[header]) missing.push(`${op.operationId} ${status} ${header}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('servers', () => {
  it('lists the public URL (a variable), the local service and the mock', () => {
    expect(published.servers.map((s: Json) => s.url)).toEqual(['{publicBaseUrl}', 'http://127.0.0.1:3000', 'http://127.0.0.1:4010']);
    expect(published.servers[0].variables.publicBaseUrl.default).toMatch(/^https:\/\//);
  });
});

describe('open to additive change', () => {
  const responseSide = new Set<string>();
  const requestSide = new Set<string>();
  for (const op of operations) {
    for (const response of Object.values<Json>(published.paths[op.pathTemplate][op.method].responses)) schemasReached(response, responseSide);
    schemasReached(published.paths[op.pathTemplate][op.method].requestBody, requestSide);
  }
  schemasReached(published.webhooks, responseSide);

  it('no response or webhook schema sets additionalProperties: false', () => {
    const closed = [...responseSide].filter((name) => closedAnywhere(published.components.schemas[name]));
    expect(closed).toEqual([]);
  });

  it('request schemas stay closed: every object a request body reaches refuses unknown fields', () => {
    const open: string[] = [];
    for (const name of requestSide) {
      const schema = published.components.schemas[name];
      if (schema.type === 'object' && schema.properties && schema.additionalProperties !== false) open.push(name);
    }
    expect(open).toEqual([]);
  });

  it('each …Input request schema is its response-side schema, closed (the two kept in step)', () => {
    const schemas = spec.components.schemas as Record<string, Json>;
    // Schemas a request and a response share: the response side is open, the request side a closed copy.
    const shared = ['RateSheet', 'RateSheetTermRate', 'RateSheetLtvBand', 'RateSheetCreditScoreBand', 'Fee', 'CsvFormatOptions', 'CsvColumn', 'ApiKeyScopes'];
    for (const input of shared.map((name) => `${name}Input`)) {
      expect(withoutClosure(schemas[input]), input).toEqual(withoutClosure(schemas[input.slice(0, -'Input'.length)]));
    }
  });
});

describe('the export', () => {
  it('types each format as what it is: JSON as MortgageExport, NDJSON, CSV and XML as strings', () => {
    const content = spec.paths['/v1/mortgages/export'].get.responses['200'].content as Record<string, Json>;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/x-ndjson', 'application/xml', 'text/csv']);
    expect(published.paths['/v1/mortgages/export'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/MortgageExport' });
    for (const media of ['application/x-ndjson', 'application/xml', 'text/csv']) expect(content[media]!.schema.type, media).toBe('string');
  });
});
