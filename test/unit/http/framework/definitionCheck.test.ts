/**
 * Why ContractBackend skips openapi-backend's definition check, pinned: the upstream check still
 * refuses the bundled 3.1 spec (so the patch is still needed), and the subclass initialises on it
 * and routes every operation of the spec.
 */
import { OpenAPIBackend } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { loadBundledSpec } from '../../../../src/contract/spec.ts';
import { ContractBackend } from '../../../../src/http/framework/definitionCheck.ts';

// quick: false is what makes init() run the definition check; validate: false skips compiling validators.
const options = () => ({ definition: loadBundledSpec(), strict: true, quick: false, validate: false });

describe('ContractBackend', () => {
  it("is still needed: openapi-backend's own check refuses the bundled OpenAPI 3.1 spec", async () => {
    await expect(new OpenAPIBackend(options()).init()).rejects.toThrow(/not valid OpenAPI/);
  });

  it('initialises on it in strict mode and lists every operation of the spec', async () => {
    const api = new ContractBackend(options());
    await api.init();
    const spec = loadBundledSpec();
    const declared = Object.values(spec.paths ?? {}).flatMap((item) =>
      ['get', 'put', 'post', 'patch', 'delete'].flatMap((method) => ((item as Record<string, { operationId?: string }>)[method]?.operationId ?? []) as string[]),
    );
    expect(declared.length).toBeGreaterThan(30);
    expect(api.getOperations().map((operation) => operation.operationId).sort()).toEqual(declared.sort());
  });
});
