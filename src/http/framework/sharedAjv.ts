/**
 * Patch of openapi-backend: one Ajv per option set instead of one per validator it builds.
 *
 * Replaces: the fresh Ajv that `OpenAPIValidator.prototype.getAjv` (openapi-backend/validation.js)
 * makes every time it builds a validator; its `customizeAjv` hook returns a shared instance
 * instead. That relies on openapi-backend only calling `compile()` on what the hook returns (no
 * addSchema, no removeSchema, no per-instance state), as it does.
 *
 * Why: every new Ajv compiles the JSON Schema 2020-12 meta-schema before its first schema, 20 to
 * 50 ms on an operation's first request. Measured on the first export after start with format
 * writes beside it (the bench's arrangement), three runs each: first byte 129, 121, 90 ms →
 * 46, 70, 28 ms (the commit "Edge: one Ajv per option set for the lazily compiled request
 * validators").
 *
 * Checked against: openapi-backend 5.21.2 (pinned exactly in package.json). The request validation
 * tests (test/unit/http/framework/requestValidation.test.ts) run openapi-backend's validator on
 * these shared instances, so a change in what it asks of them shows there.
 */
import { createAjv } from '../../contract/spec.ts';
import { boundValidators } from './boundedValidation.ts';

type AjvOptions = Parameters<typeof createAjv>[0];

/** A customizeAjv for openapi-backend: the same bounded Ajv for the same options. */
export function sharedAjvPerOptions(): (_ajv: unknown, options: AjvOptions) => ReturnType<typeof createAjv> {
  const ajvs = new Map<string, ReturnType<typeof createAjv>>();
  return (_ajv, options) => {
    const key = JSON.stringify(options);
    let ajv = ajvs.get(key);
    if (ajv === undefined) ajvs.set(key, (ajv = boundValidators(createAjv(options))));
    return ajv;
  };
}
