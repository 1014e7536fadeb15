/**
 * What sharing one Ajv per option set relies on in openapi-backend, pinned: building every
 * operation's request validators, it asks the hook for an Ajv with at most two option sets
 * (parameters coerce types, bodies do not) and only ever calls compile() on what it gets back.
 */
import { describe, expect, it } from 'vitest';
import { loadBundledSpec, REQUEST_VALIDATION_OPTIONS } from '../../../../src/contract/spec.ts';
import { ContractBackend } from '../../../../src/http/framework/definitionCheck.ts';
import { sharedAjvPerOptions } from '../../../../src/http/framework/sharedAjv.ts';

describe('sharedAjvPerOptions', () => {
  it('answers the same instance for the same options and another for other options', () => {
    const shared = sharedAjvPerOptions();
    const bodies = shared(null, { ...REQUEST_VALIDATION_OPTIONS });
    expect(shared(null, { ...REQUEST_VALIDATION_OPTIONS })).toBe(bodies);
    expect(shared(null, { ...REQUEST_VALIDATION_OPTIONS, coerceTypes: true })).not.toBe(bodies);
  });

  it('is asked for two option sets by openapi-backend, which calls only compile() on the instances', async () => {
    const shared = sharedAjvPerOptions();
    const optionSets = new Set<string>();
    const used = new Set<string>();
    const api = new ContractBackend({
      definition: loadBundledSpec(),
      strict: true,
      quick: true,
      coerceTypes: true,
      ajvOpts: { ...REQUEST_VALIDATION_OPTIONS },
      customizeAjv: (ajv, options) => {
        optionSets.add(JSON.stringify(options));
        return new Proxy(shared(ajv, options), {
          get(target, property, receiver) {
            used.add(String(property));
            return Reflect.get(target, property, receiver);
          },
        }) as never;
      },
    });
    await api.init();
    for (const operation of api.getOperations()) expect(api.validator.getRequestValidatorsForOperation(operation.operationId!)).not.toBeNull();
    expect(optionSets.size).toBe(2);
    expect([...used]).toEqual(['compile']);
  });
});
