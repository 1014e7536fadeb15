/**
 * What the contract decides for the dashboard's forms, read from the bundled spec the API's edge
 * reads: the check of a request body (the operation's request schema, compiled with the same Ajv
 * set-up, its errors turned into the same pointers and messages the API's 400 carries), and the
 * role an operation needs (its `x-required-role`).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { OperationId } from '../contract/handlers.ts';
import { createAjv, loadBundledSpec, REQUEST_VALIDATION_OPTIONS } from '../contract/spec.ts';
import { throwIfIssues, type FieldIssue } from '../errors.ts';
import { boundValidators } from '../http/framework/boundedValidation.ts';
import { validationIssues } from '../http/validationProblem.ts';

interface SpecOperation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  'x-required-role'?: string;
}

let operations: Map<string, SpecOperation> | undefined;
const validators = new Map<string, ValidateFunction>();
const ajv = boundValidators(createAjv({ ...REQUEST_VALIDATION_OPTIONS }));

function specOperations(): Map<string, SpecOperation> {
  if (operations) return operations;
  operations = new Map();
  const spec = loadBundledSpec() as { paths?: Record<string, Record<string, SpecOperation>> };
  for (const item of Object.values(spec.paths ?? {})) {
    for (const operation of Object.values(item)) if (operation?.operationId) operations.set(operation.operationId, operation);
  }
  return operations;
}

/** Whether an operation is for admins only (`x-required-role: admin`), as the API's edge enforces it for keys. */
export function needsAdmin(operationId: OperationId): boolean {
  const operation = specOperations().get(operationId);
  if (!operation) throw new Error(`${operationId} is not an operation of the spec`);
  return operation['x-required-role'] === 'admin';
}

/** The JSON request schema of an operation (what its form is decoded and checked against). */
export function requestSchema(operationId: OperationId): unknown {
  const schema = specOperations().get(operationId)?.requestBody?.content?.['application/json']?.schema;
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
