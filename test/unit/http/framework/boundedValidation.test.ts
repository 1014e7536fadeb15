/**
 * boundValidators against Ajv's own output: the same verdict always, the same errors up to
 * MAX_VALIDATION_ERRORS, and past it the first MAX_VALIDATION_ERRORS of Ajv's errors followed by
 * one `$truncated` marker counting them all.
 */
import { describe, expect, it } from 'vitest';
import { createAjv, REQUEST_VALIDATION_OPTIONS } from '../../../../src/contract/spec.ts';
import { boundValidators, MAX_VALIDATION_ERRORS, TRUNCATED_KEYWORD } from '../../../../src/http/framework/boundedValidation.ts';

const schema = {
  type: 'object',
  properties: { items: { type: 'array', items: { type: 'integer', maximum: 10 } } },
  additionalProperties: { type: 'string', maxLength: 3 },
};

const ajv = createAjv({ ...REQUEST_VALIDATION_OPTIONS });
const bounded = boundValidators(createAjv({ ...REQUEST_VALIDATION_OPTIONS }));
const upstream = ajv.compile(schema);
const validate = bounded.compile(schema);

function badItems(count: number) {
  return { items: Array.from({ length: count }, (_, i) => (i % 2 === 0 ? 'x' : 11)) };
}

describe('boundValidators', () => {
  it("gives Ajv's verdict and errors when there are at most MAX_VALIDATION_ERRORS of them", () => {
    for (const data of [{}, { items: [1, 2] }, { a: 'abc' }, { a: 'abcd' }, badItems(3), badItems(MAX_VALIDATION_ERRORS), { ...badItems(5), b: 'toolong', c: 1 }]) {
      expect(validate(data)).toBe(upstream(data));
      expect(validate.errors).toEqual(upstream.errors);
    }
  });

  it("keeps Ajv's first MAX_VALIDATION_ERRORS errors, then one marker with the total, past it", () => {
    for (const count of [MAX_VALIDATION_ERRORS + 1, 1000, 100_000]) {
      const data = badItems(count);
      expect(validate(data)).toBe(false);
      expect(upstream(data)).toBe(false);
      const all = upstream.errors!;
      expect(all.length).toBe(count);
      expect(validate.errors).toEqual([
        ...all.slice(0, MAX_VALIDATION_ERRORS),
        { keyword: TRUNCATED_KEYWORD, instancePath: '', schemaPath: '', params: { total: count } },
      ]);
    }
  });

  it('keeps the compiled schema on the validator, as openapi-backend and Ajv callers read it', () => {
    expect(upstream.schema).toBe(schema);
    expect(validate.schema).toBe(schema);
  });
});
