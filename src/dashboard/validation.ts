/**
 * The contract's check of a request body, for the dashboard's forms: the operation's request
 * schema from the bundled spec, compiled with the same Ajv set-up as the API's edge, and Ajv's
 * errors turned into the same pointers and messages the API's 400 carries.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { OperationId } from '../contract/handlers.ts';
import { createAjv, loadBundledSpec } from '../contract/spec.ts';
import { throwIfIssues, type FieldIssue } from '../errors.ts';
import { boundValidators } from '../http/boundedValidation.ts';
import { validationIssues } from '../http/validationProblem.ts';

interface SpecOperation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
}

let schemas: Map<string, unknown> | undefined;
const validators = new Map<string, ValidateFunction>();
const ajv = boundValidators(createAjv({ allErrors: true, strict: false }));

function requestSchemas(): Map<string, unknown> {
  if (schemas) return schemas;
  schemas = new Map();
  const spec = loadBundledSpec() as { paths?: Record<string, Record<string, SpecOperation>> };
  for (const item of Object.values(spec.paths ?? {})) {
    for (const operation of Object.values(item)) {
      const schema = operation?.requestBody?.content?.['application/json']?.schema;
      if (operation?.operationId && schema) schemas.set(operation.operationId, schema);
    }
  }
  return schemas;
}

/** The JSON request schema of an operation (what its form is decoded and checked against). */
export function requestSchema(operationId: OperationId): unknown {
  const schema = requestSchemas().get(operationId);
  if (!schema) throw new Error(`${operationId} has no JSON request body in the spec`);
  return schema;
}

/** The issues the API's 400 would list for this body; empty when it passes. */
export function contractIssues(operationId: OperationId, body: unknown): FieldIssue[] {
  let validate = validators.get(operationId);
  if (!validate) {
    validate = ajv.compile(requestSchema(operationId) as object);
    validators.set(operationId, validate);
  }
  if (validate(body)) return [];
  // The edge validates the body under `requestBody`; the same prefix gives the same pointers and words.
  const errors = (validate.errors ?? []).map((e: ErrorObject) => ({ ...e, instancePath: `/requestBody${e.instancePath}` }));
  return validationIssues(errors).issues;
}

/** Throws the API's 400 `validation_failed` when the body breaks the contract. */
export function checkContract(operationId: OperationId, body: unknown): void {
  throwIfIssues(contractIssues(operationId, body));
}
