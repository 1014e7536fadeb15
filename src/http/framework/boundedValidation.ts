/**
 * Patch of Ajv as openapi-backend uses it: validators that keep at most MAX_VALIDATION_ERRORS errors.
 *
 * Replaces: `Ajv.prototype.compile` (ajv/dist/core.js) on the instances handed to openapi-backend
 * (sharedAjv.ts) and the dashboard's forms, wrapping each compiled validator.
 *
 * Why: Ajv (allErrors) reports one error per offending key or item, and openapi-backend's
 * validateRequest copies them with `errors.push(...validate.errors)`, which overflows the stack past
 * about 120,000 arguments and builds multi-megabyte problems long before that (the commit
 * "Validation: every validator keeps at most 20 errors", with fuzz tests of 10^5 keys and items).
 * A bounded validator keeps the first MAX_VALIDATION_ERRORS errors, then a `$truncated` marker when
 * more were found; its verdict is Ajv's.
 *
 * Checked against: ajv 8.20.0 (package-lock.json), through openapi-backend 5.21.2 (pinned
 * exactly in package.json). test/unit/http/framework/boundedValidation.test.ts compares its output
 * with Ajv's own.
 */
import type { ErrorObject } from 'ajv';

/** Problems a validation failure reports at most (the body says `errorsTruncated: true` beyond). */
export const MAX_VALIDATION_ERRORS = 20;
/** Marker keyword of the error that stands for the ones left out. */
export const TRUNCATED_KEYWORD = '$truncated';

interface Compiler {
  compile(schema: unknown, meta?: boolean): ValidateLike;
}
interface ValidateLike {
  (data: unknown, ...rest: unknown[]): boolean | Promise<unknown>;
  errors?: ErrorObject[] | null;
}

/** Makes every validator `ajv` compiles from now on keep at most MAX_VALIDATION_ERRORS errors. */
export function boundValidators<A extends object>(instance: A): A {
  const ajv = instance as unknown as Compiler;
  const compile = ajv.compile.bind(ajv);
  ajv.compile = (schema: unknown, meta?: boolean) => {
    const validate = compile(schema, meta);
    const bounded: ValidateLike = Object.assign(
      function (this: unknown, data: unknown, ...rest: unknown[]) {
        const result = validate.call(this, data, ...rest);
        const errors = validate.errors;
        bounded.errors =
          errors && errors.length > MAX_VALIDATION_ERRORS
            ? [
                ...errors.slice(0, MAX_VALIDATION_ERRORS),
                { keyword: TRUNCATED_KEYWORD, instancePath: '', schemaPath: '', params: { total: errors.length } } as ErrorObject,
              ]
            : errors;
        return result;
      },
      { schema: (validate as { schema?: unknown }).schema },
    );
    return bounded;
  };
  return instance;
}
