/**
 * rememberOperations against openapi-backend's router: the remembered list is the one upstream
 * builds from the document (every operation, with its path, method, merged parameters and
 * security), and it is the same array on every call afterwards.
 */
import { OpenAPIRouter } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { loadBundledSpec } from '../../../../src/contract/spec.ts';
import { rememberOperations } from '../../../../src/http/framework/operationList.ts';

describe('rememberOperations', () => {
  it("answers what openapi-backend's getOperations builds, once", () => {
    const upstream = new OpenAPIRouter({ definition: loadBundledSpec() });
    const patched = new OpenAPIRouter({ definition: loadBundledSpec() });
    const remembered = rememberOperations(patched);
    expect(remembered).toEqual(upstream.getOperations());
    expect(patched.getOperations()).toBe(remembered);
    expect(patched.getOperation('getQuote')).toEqual(upstream.getOperation('getQuote'));
  });
});
