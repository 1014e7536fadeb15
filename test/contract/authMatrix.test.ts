/**
 * The auth matrix: for every operation of the spec, the credentials that must be refused are
 * refused the same way (401 problem+json with WWW-Authenticate: Bearer), member keys are kept
 * off admin operations (403), and another account's resources, or the other mode's, do not exist for the caller
 * (404). A self-issued test-mode bank token opens no API-key operation.
 *
 * The operations come from generated/openapi.json, so an operation added to the spec is covered
 * here without new code; what the harness needs from its author (a resource factory for a new
 * path parameter, a request example) is named in the failure.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/accounts/apiKeyFormat.ts';
import { credentialFactories } from '../helpers/resources.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import {
  HarnessGap,
  buildRequest,
  createPathResources,
  inTestMode,
  isTestModePath,
  label,
  parameters,
  requiredRole,
  securitySchemes,
  specOperations,
  type OperationRequest,
  type SpecOperation,
} from './harness.ts';

/** Operations that are deliberately callable without credentials (none so far). */
const PUBLIC_OPERATIONS: string[] = [];

const operations = specOperations();

let app: TestApp;
let owner: TestAccount;
let other: TestAccount;
let revokedKey: string;
/** A bank token the owner issued itself in test mode (POST /v1/test/bank-tokens). */
let testBankToken: string;

beforeAll(async () => {
  app = await startTestApp();
  owner = await app.newAccount('Owner Lending');
  other = await app.newAccount('Other Lending');
  revokedKey = await app.revokedKey(owner.accountId);
  const { data } = await owner.test.POST('/v1/test/bank-tokens', { body: { holderName: 'Matrix Applicant', accountNumber: '000123456789' } });
  testBankToken = data!.bankToken;
});
afterAll(() => app?.close());

/** The documented request; without its body when the operation has no usable example (the 401 comes first anyway). */
function request(op: SpecOperation, options: OperationRequest): { path: string; init: RequestInit } {
  try {
    return buildRequest(op, options);
  } catch (err) {
    if (err instanceof HarnessGap) return buildRequest(op, { ...options, withBody: false });
    throw err;
  }
}

async function send(op: SpecOperation, options: OperationRequest): Promise<{ response: Response; body: Record<string, any> | undefined }> {
  const { path, init } = request(op, options);
  const response = await app.fetch(path, init); // contract-checked: status declared, problem body valid
  const text = await response.text();
  return { response, body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined };
}

async function expectUnauthorized(op: SpecOperation, authorization: string | undefined): Promise<void> {
  const { response, body } = await send(op, { authorization });
  expect(response.status, `${label(op)} with Authorization ${JSON.stringify(authorization ?? null)}: ${JSON.stringify(body)}`).toBe(401);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  expect(body).toMatchObject({ status: 401, code: 'unauthorized' });
}

/** A token shaped like a bank partner's, known to no partner. */
function madeUpBankToken(): string {
  return `bnk_tok_${randomBytes(24).toString('base64url')}`;
}

/** A credential of a scheme the operation does not take: a bank token where an API key is needed, and the reverse. */
async function wrongSchemeCredential(schemes: string[]): Promise<{ what: string; token: string }> {
  if (schemes.includes('apiKey')) {
    const bankToken = credentialFactories.bankToken ? await credentialFactories.bankToken(app, owner) : madeUpBankToken();
    return { what: 'a bank partner token', token: bankToken };
  }
  return { what: "an admin API key of the caller's account", token: owner.apiKey };
}

describe.each(operations.map((op) => [label(op), op] as const))('%s', (_label, op) => {
  const schemes = securitySchemes(op);

  if (schemes.length === 0) {
    it('requires credentials (or is listed as public on purpose)', () => {
      expect(
        PUBLIC_OPERATIONS,
        `${label(op)} has no security requirement. If anyone may call it, add "${op.operationId}" to PUBLIC_OPERATIONS in test/contract/authMatrix.test.ts; otherwise give it \`security:\``,
      ).toContain(op.operationId);
    });
    return;
  }

  it('no credentials → 401', () => expectUnauthorized(op, undefined));

  it('an unknown, well-formed credential → 401', () =>
    expectUnauthorized(op, `Bearer ${schemes.includes('apiKey') ? generateApiKey(true) : madeUpBankToken()}`));

  it('a revoked API key → 401', () => expectUnauthorized(op, `Bearer ${revokedKey}`));

  it('a malformed Authorization header (scheme without a token) → 401', () => expectUnauthorized(op, 'Bearer'));

  it('a malformed Authorization header (Basic credentials) → 401', () =>
    expectUnauthorized(op, `Basic ${Buffer.from('ops@harborlending.test:hunter2').toString('base64')}`));

  it('a malformed Authorization header (the key without "Bearer") → 401', () => expectUnauthorized(op, owner.apiKey));

  it('a credential of the wrong scheme → 401', async () => {
    const { what, token } = await wrongSchemeCredential(schemes);
    await expectUnauthorized(op, `Bearer ${token}`).catch((err: Error) => {
      throw new Error(`${what} was not refused: ${err.message}`);
    });
  });

  if (schemes.includes('apiKey')) {
    it('a test-mode bank token (POST /v1/test/bank-tokens) → 401', () => expectUnauthorized(op, `Bearer ${testBankToken}`));

    if (requiredRole(op) === 'admin') {
      it('a member key → 403 (x-required-role: admin)', async () => {
        const { response, body } = await send(op, { authorization: `Bearer ${owner.memberKey}` });
        expect(response.status, JSON.stringify(body)).toBe(403);
        expect(body).toMatchObject({ status: 403, code: 'forbidden' });
      });
    } else {
      it('a member key is not refused (no x-required-role)', async () => {
        const { response, body } = await send(op, { authorization: `Bearer ${owner.memberKey}` });
        expect([401, 403], `${label(op)} refused a member key: ${JSON.stringify(body)}`).not.toContain(response.status);
      });
    }
  }

  if (schemes.includes('apiKey') && parameters(op, 'path').length > 0) {
    it("another account's resource → 404, while its owner reaches it", async () => {
      const ids = await createPathResources(app, owner, op);
      const foreign = await send(op, { authorization: `Bearer ${other.apiKey}`, pathValues: ids });
      expect(foreign.response.status, `${label(op)} as another account, ids ${JSON.stringify(ids)}: ${JSON.stringify(foreign.body)}`).toBe(404);
      expect(foreign.body).toMatchObject({ status: 404, code: 'not_found' });
      expect(JSON.stringify(foreign.body)).not.toContain(owner.accountId);

      // The same request from the owner must find the resource, or the 404 above proves nothing.
      const own = await send(op, { authorization: `Bearer ${owner.apiKey}`, pathValues: ids });
      expect(own.response.status, `${label(op)} as the owner, ids ${JSON.stringify(ids)}: ${JSON.stringify(own.body)}`).not.toBe(404);
    });

    it("the other mode's resource → 404 both ways: a test key on a live id, a live key on a test id", async () => {
      const live = await createPathResources(app, owner, op);
      const testOnLive = await send(op, { authorization: `Bearer ${owner.testKey}`, pathValues: live });
      expect(testOnLive.response.status, `${label(op)} with the test key, live ids ${JSON.stringify(live)}: ${JSON.stringify(testOnLive.body)}`).toBe(404);
      expect(testOnLive.body).toMatchObject({ status: 404, code: 'not_found' });

      const test = await createPathResources(app, inTestMode(owner), op);
      const liveOnTest = await send(op, { authorization: `Bearer ${owner.apiKey}`, pathValues: test });
      expect(liveOnTest.response.status, `${label(op)} with the live key, test ids ${JSON.stringify(test)}: ${JSON.stringify(liveOnTest.body)}`).toBe(404);
      expect(liveOnTest.body).toMatchObject({ status: 404, code: 'not_found' });

      // The test key reaches what it made, or the 404s above prove nothing.
      const own = await send(op, { authorization: `Bearer ${owner.testKey}`, pathValues: test });
      expect(own.response.status, `${label(op)} with the test key, test ids ${JSON.stringify(test)}: ${JSON.stringify(own.body)}`).not.toBe(404);
    });
  }

  if (schemes.includes('apiKey') && isTestModePath(op)) {
    it('a live key → 404 (test mode only), while a test key reaches it', async () => {
      const live = await send(op, { authorization: `Bearer ${owner.apiKey}` });
      expect(live.response.status, JSON.stringify(live.body)).toBe(404);
      expect(live.body).toMatchObject({ status: 404, code: 'not_found' });
      const test = await send(op, { authorization: `Bearer ${owner.testKey}` });
      expect(test.response.status, JSON.stringify(test.body)).not.toBe(404);
    });
  }
});
