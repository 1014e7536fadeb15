/**
 * A fetch that checks every response against the contract: the status must be one the spec
 * declares for the operation, and the body (JSON or problem+json) must match that status's
 * schema. API tests go through it (via `apiClient`), so no handler can drift from the spec
 * without a test failing.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { dereference } from '../../src/contract/spec.ts';
import { CURRENT_VERSION } from '../../src/domain/versions/registry.ts';
import { RELEASED_VERSIONS } from '../../src/domain/versions/released.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;
/** The published bundle (generated/openapi.json), dereferenced in memory so each schema compiles on its own. */
export const spec: Json = dereference(JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')));

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']) ajv.addFormat(format, true);

export interface SpecOperation {
  operationId: string;
  method: string;
  pathTemplate: string;
  operation: Json;
  pathItem: Json;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

export function specOperations(): SpecOperation[] {
  const list: SpecOperation[] = [];
  for (const [pathTemplate, pathItem] of Object.entries<Json>(spec.paths)) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (operation) list.push({ operationId: operation.operationId, method, pathTemplate, operation, pathItem });
    }
  }
  return list;
}

const matchers = specOperations().map((op) => ({
  op,
  regex: new RegExp('^' + op.pathTemplate.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
}));

function findOperation(method: string, pathname: string): SpecOperation | undefined {
  return matchers.find((m) => m.op.method === method.toLowerCase() && m.regex.test(pathname))?.op;
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: Json): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

class ContractViolation extends Error {}

/** Checks one response against the spec; throws ContractViolation with what is wrong. */
async function checkResponse(method: string, url: string, response: Response): Promise<void> {
  const { pathname } = new URL(url);
  const op = findOperation(method, pathname);
  const where = `${method.toUpperCase()} ${pathname} → ${response.status}`;
  if (!op) {
    // Routes outside the contract answer 404/405 problems; anything else is a test bug.
    if (response.status === 404 || response.status === 405) return checkProblem(where, response);
    throw new ContractViolation(`${where}: no operation of the spec matches this request`);
  }
  const declared = op.operation.responses?.[String(response.status)];
  if (!declared) {
    throw new ContractViolation(`${where}: status ${response.status} is not declared for ${op.operationId}; body: ${await response.clone().text()}`);
  }
  if (!response.headers.get('x-request-id')) throw new ContractViolation(`${where}: no X-Request-Id header`);
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (response.status === 204 || !declared.content) return;
  const media = declared.content[contentType];
  if (!media) {
    throw new ContractViolation(`${where}: content type "${contentType}" is not declared (declared: ${Object.keys(declared.content).join(', ')})`);
  }
  // One JSON document: application/json or a +json type. NDJSON (application/x-ndjson) is many, typed as a string.
  if (!(contentType === 'application/json' || contentType.endsWith('+json')) || !media.schema) return;
  const body = await response.clone().json();
  const validate = validatorFor(`${op.operationId} ${response.status} ${contentType}`, media.schema);
  if (!validate(body)) {
    throw new ContractViolation(`${where}: body does not match the spec: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
  }
  // Rendered in an older version: the body must match that version's frozen contract too.
  const version = response.headers.get('mos-version');
  if (!version) throw new ContractViolation(`${where}: no Mos-Version header`);
  const older = version === CURRENT_VERSION ? undefined : versionedSchema(version, op, response.status, contentType);
  if (older) {
    const check = validatorFor(`${version} ${op.operationId} ${response.status} ${contentType}`, older);
    if (!check(body)) throw new ContractViolation(`${where}: body does not match version ${version}'s contract: ${ajv.errorsText(check.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
  }
}

/** Released versions' bundles (openapi/versions/), dereferenced once each. */
const bundles = new Map<string, Json>();
/** The schema of a response in a released version's frozen bundle. */
function versionedSchema(version: string, op: { method: string; pathTemplate: string }, status: number, contentType: string): Json | undefined {
  let bundle = bundles.get(version);
  if (!bundle) {
    // The current version before its release has no frozen bundle yet: its contract is the working one.
    bundle = version === CURRENT_VERSION && !RELEASED_VERSIONS.includes(version) ? spec : (dereference(JSON.parse(readFileSync(new URL(`../../openapi/versions/${version}.json`, import.meta.url), 'utf8'))) as Json);
    bundles.set(version, bundle);
  }
  return bundle.paths?.[op.pathTemplate]?.[op.method]?.responses?.[String(status)]?.content?.[contentType]?.schema;
}

/** A payload's problems against the schema of its event in a released version's bundle, or null. */
export function versionedPayloadErrors(version: string, payload: Json): string | null {
  versionedSchema(version, { method: 'get', pathTemplate: '' }, 0, '');
  const schema = bundles.get(version)!.webhooks?.[payload.event]?.post?.requestBody?.content?.['application/json']?.schema;
  if (!schema) return `version ${version} has no event ${String(payload.event)}`;
  const check = validatorFor(`${version} webhook ${payload.event}`, schema);
  return check(payload) ? null : ajv.errorsText(check.errors);
}

const problemSchema = spec.components.schemas.Problem;
export async function checkProblem(where: string, response: Response): Promise<void> {
  if (!(response.headers.get('content-type') ?? '').startsWith('application/problem+json')) {
    throw new ContractViolation(`${where}: expected application/problem+json, got ${response.headers.get('content-type')}`);
  }
  const body = (await response.clone().json()) as Json;
  const validate = validatorFor('Problem', problemSchema);
  if (!validate(body)) throw new ContractViolation(`${where}: problem body does not match the Problem schema: ${ajv.errorsText(validate.errors)}`);
  if (body.status !== response.status) throw new ContractViolation(`${where}: problem status ${body.status} differs from the HTTP status`);
}

/** `fetch`, plus the contract check of every response. */
export async function contractFetch(input: Request | string | URL, init?: RequestInit): Promise<Response> {
  const request = input instanceof Request ? input : new Request(input, init);
  const response = await fetch(request);
  await checkResponse(request.method, request.url, response);
  return response;
}
