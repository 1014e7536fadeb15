import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUNDLED_SPEC_URL, createAjv, loadBundledSpec, OPENAPI_FORMATS } from '../../../src/contract/spec.ts';

describe('loadBundledSpec', () => {
  it('is generated/openapi.json, a fresh copy for each caller', () => {
    const first = loadBundledSpec();
    expect(first).toEqual(JSON.parse(readFileSync(BUNDLED_SPEC_URL, 'utf8')));
    (first as { info: { title: string } }).info.title = 'changed by a caller';
    const second = loadBundledSpec();
    expect(second).not.toBe(first);
    expect(second.info.title).not.toBe('changed by a caller');
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
