/**
 * Conformance across versions, generated from the contract: every operation's documented request
 * (its path resources made through the API, its first named request example as the body) sent in
 * every supported version with Mos-Version. The contract-checked fetch (test/helpers/contractFetch.ts)
 * validates each answer with Ajv against the current contract and against the frozen bundle of
 * the version its Mos-Version names; here each answer must also be in the version asked for.
 * Runs on both engines (test/api/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSIONS } from '../../src/domain/versions/registry.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { buildRequest, createPathResources, credentialFor, HarnessGap, inTestMode, isTestModePath, label, securitySchemes, specOperations, type SpecOperation } from '../contract/harness.ts';

let app: TestApp;
let owner: TestAccount;

beforeAll(async () => {
  // Every webhook operation makes an endpoint in each version: more than the default 16 an account may have.
  app = await startTestApp({ env: { WEBHOOK_ENDPOINTS_PER_ACCOUNT: '100' } });
  owner = await app.newAccount('Conformance Lending');
});
afterAll(() => app?.close());

const cases = specOperations().flatMap((op) => VERSIONS.map((version) => [label(op), version, op] as [string, string, SpecOperation]));

describe('every operation in every version', () => {
  it.each(cases)('%s in %s answers in that version, matching its frozen contract', async (_label, version, op) => {
    const actor = isTestModePath(op) ? inTestMode(owner) : owner;
    const pathValues = await createPathResources(app, actor, op);
    const scheme = securitySchemes(op)[0];
    const authorization = scheme ? `Bearer ${await credentialFor(app, actor, scheme, op)}` : undefined;
    let built: ReturnType<typeof buildRequest>;
    try {
      built = buildRequest(op, { pathValues, authorization, headers: { 'Mos-Version': version } });
    } catch (err) {
      if (!(err instanceof HarnessGap)) throw err;
      built = buildRequest(op, { pathValues, authorization, headers: { 'Mos-Version': version }, withBody: false });
    }
    const response = await app.fetch(built.path, built.init); // checked against both contracts
    await response.arrayBuffer();
    expect(response.status, `${label(op)} in ${version}`).toBeLessThan(500);
    expect(response.headers.get('mos-version')).toBe(version);
  });
});
