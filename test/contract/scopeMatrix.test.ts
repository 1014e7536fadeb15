/**
 * The scope matrix: for every operation of the spec that takes an API key, a restricted key with
 * exactly the scope the operation declares (`x-required-scope`) gets through the edge, and one
 * with a level less of the same family, or with another family only, gets 403 `scope_missing`
 * naming the scope. `write` implies `read`; an operation declaring `none` takes a restricted key
 * without any scope. The operations come from generated/openapi.json, so an operation added to
 * the spec is covered here without new code. Runs on both engines (the sqljs and postgres projects).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_FAMILIES, formatScope, parseRequiredScope, type ApiKeyScopes } from '../../src/domain/accounts/scopes.ts';
import { ADMIN, createApiKey } from '../../src/services/accounts.ts';
import { testEnvironmentId } from '../../src/domain/accounts/environments.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { HarnessGap, buildRequest, isTestModePath, label, securitySchemes, specOperations, type OperationRequest, type SpecOperation } from './harness.ts';

const operations = specOperations().filter((op) => securitySchemes(op).includes('apiKey'));

let app: TestApp;
let owner: TestAccount;
/** Restricted keys made so far, by environment and scopes (a few dozen: under the account's key cap). */
const keys = new Map<string, string>();

beforeAll(async () => {
  app = await startTestApp();
  owner = await app.newAccount('Scoped Lending');
});
afterAll(() => app?.close());

/** A restricted key of the owner's live (or, for /v1/test/ operations, test) environment with exactly `scopes`. */
async function restrictedKey(op: SpecOperation, scopes: ApiKeyScopes): Promise<string> {
  const environment = isTestModePath(op) ? testEnvironmentId(owner.accountId) : owner.accountId;
  const id = `${environment} ${JSON.stringify(scopes)}`;
  let key = keys.get(id);
  if (!key) {
    key = (await createApiKey(app.ctx, environment, { name: `Scopes ${JSON.stringify(scopes)}`, scopes }, ADMIN)).apiKey;
    keys.set(id, key);
  }
  return key;
}

async function send(op: SpecOperation, apiKey: string): Promise<{ status: number; body: Record<string, any> | undefined }> {
  const options: OperationRequest = { authorization: `Bearer ${apiKey}` };
  let request;
  try {
    request = buildRequest(op, options);
  } catch (err) {
    if (!(err instanceof HarnessGap)) throw err;
    request = buildRequest(op, { ...options, withBody: false });
  }
  const response = await app.fetch(request.path, request.init); // contract-checked: status declared, problem body valid
  const text = await response.text();
  return { status: response.status, body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined };
}

function expectThrough(op: SpecOperation, result: { status: number; body: Record<string, any> | undefined }, what: string): void {
  const refused = result.status === 401 || (result.status === 403 && result.body?.code === 'scope_missing');
  expect(refused, `${label(op)} refused ${what}: ${result.status} ${JSON.stringify(result.body)}`).toBe(false);
}

function expectScopeMissing(op: SpecOperation, result: { status: number; body: Record<string, any> | undefined }, scope: string, what: string): void {
  expect(result.status, `${label(op)} with ${what}: ${JSON.stringify(result.body)}`).toBe(403);
  expect(result.body).toMatchObject({ status: 403, code: 'scope_missing', requiredScope: scope });
  expect(result.body!.detail).toContain(scope);
}

/** A family other than `family`, for the "another family only" key. */
const otherFamily = (family: string) => SCOPE_FAMILIES.find((f) => f !== family)!;

describe.each(operations.map((op) => [label(op), op] as const))('%s', (_label, op) => {
  const required = parseRequiredScope(op.operation['x-required-scope']);

  it('declares a valid x-required-scope', () => expect(required).not.toBeUndefined());

  if (required === null) {
    it('x-required-scope none: a restricted key with no scope at all gets through', async () => {
      expectThrough(op, await send(op, await restrictedKey(op, {})), 'a restricted key without scopes');
    });
    return;
  }
  if (required === undefined) return;
  const scope = formatScope(required);

  it(`a restricted key with exactly ${scope} gets through`, async () => {
    expectThrough(op, await send(op, await restrictedKey(op, { [required.family]: required.level })), `a key with ${scope}`);
  });

  if (required.level === 'read') {
    it(`a restricted key with ${required.family}:write gets through (write implies read)`, async () => {
      expectThrough(op, await send(op, await restrictedKey(op, { [required.family]: 'write' })), `a key with ${required.family}:write`);
    });
  } else {
    it(`a restricted key with only ${required.family}:read → 403 scope_missing naming ${scope}`, async () => {
      expectScopeMissing(op, await send(op, await restrictedKey(op, { [required.family]: 'read' })), scope, `${required.family}:read`);
    });
  }

  it(`a restricted key with another family only → 403 scope_missing naming ${scope}`, async () => {
    const other = otherFamily(required.family);
    expectScopeMissing(op, await send(op, await restrictedKey(op, { [other]: 'write' })), scope, `${other}:write`);
  });

  it('a restricted key with no scope → 403 scope_missing', async () => {
    expectScopeMissing(op, await send(op, await restrictedKey(op, {})), scope, 'no scope');
  });
});
