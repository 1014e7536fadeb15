/**
 * Where the code needs a list of a schema's values at run time, the list is written by hand (a
 * type cannot be walked). Each such list is tied here to the spec's enum both ways, so a value
 * added to or removed from the contract fails this test until the code says the same.
 */
import { describe, expect, it } from 'vitest';
import { loadBundledSpec } from '../../../src/contract/spec.ts';
import { APPLICATION_STATUSES } from '../../../src/domain/applications/stateMachine.ts';
import { CONDITION_STAGES, CONDITION_TYPES } from '../../../src/domain/applications/conditions.ts';
import { DOCUMENT_TYPES } from '../../../src/domain/documents/types.ts';
import { API_KEY_ROLES } from '../../../src/cli/commands.ts';

const schemas = (loadBundledSpec() as { components: { schemas: Record<string, { enum?: unknown[] }> } }).components.schemas;

function specEnum(name: string): unknown[] {
  const values = schemas[name]?.enum;
  if (!values) throw new Error(`the spec has no enum schema ${name}`);
  return values;
}

describe('hand-written lists match the spec enums exactly (both ways, same order)', () => {
  it.each([
    ['ApplicationStatus', APPLICATION_STATUSES],
    ['DocumentType', DOCUMENT_TYPES],
    ['ApiKeyRole', API_KEY_ROLES],
    ['ConditionType', CONDITION_TYPES],
    ['ConditionDueBefore', CONDITION_STAGES],
  ] as const)('%s', (schema, list) => {
    expect([...list]).toEqual(specEnum(schema));
  });
});
