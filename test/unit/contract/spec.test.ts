import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUNDLED_SPEC_URL, createAjv, dereference, loadBundledSpec, OPENAPI_FORMATS } from '../../../src/contract/spec.ts';

describe('loadBundledSpec', () => {
  it('is generated/openapi.json dereferenced, a fresh copy for each caller', () => {
    const first = loadBundledSpec();
    expect(JSON.stringify(first)).not.toContain('"$ref"');
    expect(first).toEqual(dereference(JSON.parse(readFileSync(BUNDLED_SPEC_URL, 'utf8'))));
    (first as { info: { title: string } }).info.title = 'changed by a caller';
    const second = loadBundledSpec();
    expect(second).not.toBe(first);
    expect(second.info.title).not.toBe('changed by a caller');
  });
});

describe('the published bundle', () => {
  it('keeps named components and $refs (what client generators need), not a dereferenced copy', () => {
    const published = JSON.parse(readFileSync(BUNDLED_SPEC_URL, 'utf8'));
    expect(Object.keys(published.components.schemas)).toEqual(expect.arrayContaining(['Quote', 'Application', 'Problem']));
    expect(published.paths['/v1/quotes'].post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Quote' });
  });
});

describe('dereference', () => {
  it('replaces local $refs with their targets, shared, and keeps keywords beside a $ref', () => {
    const doc = {
      components: { schemas: { Id: { type: 'string' }, Pair: { type: 'array', items: { $ref: '#/components/schemas/Id' } } } },
      use: [{ $ref: '#/components/schemas/Pair' }, { $ref: '#/components/schemas/Id', description: 'an id' }, { $ref: '#/components/schemas/Pair' }],
    };
    const out = dereference(doc);
    expect(out.use[0]).toEqual({ type: 'array', items: { type: 'string' } });
    expect(out.use[1]).toEqual({ type: 'string', description: 'an id' });
    expect(out.use[2]).toBe(out.use[0]);
    expect(doc.use[0]).toEqual({ $ref: '#/components/schemas/Pair' });
  });

  it('refuses references it cannot follow', () => {
    expect(() => dereference({ a: { $ref: 'other.yaml#/x' } })).toThrow(/only local/);
    expect(() => dereference({ a: { $ref: '#/nowhere' } })).toThrow(/nothing there/);
    expect(() => dereference({ a: { b: { $ref: '#/a' } } })).toThrow(/refers to itself/);
  });
});

describe('createAjv', () => {
  it('validates 2020-12 schemas with the ajv-formats formats', () => {
    const validate = createAjv({ allErrors: true }).compile({ type: 'string', format: 'date-time' });
    expect(validate('2025-01-02T03:04:05Z')).toBe(true);
    expect(validate('tomorrow')).toBe(false);
  });

  it('accepts the OpenAPI formats as annotations, even in strict mode', () => {
    const ajv = createAjv({ strict: true });
    for (const format of OPENAPI_FORMATS) {
      expect(ajv.compile({ type: 'string', format })('anything')).toBe(true);
    }
  });

  it('is not strict unless asked, so OpenAPI keywords such as `example` pass', () => {
    expect(() => createAjv().compile({ type: 'string', example: 'x' })).not.toThrow();
    expect(() => createAjv({ strict: true }).compile({ type: 'string', example: 'x' })).toThrow();
  });
});
