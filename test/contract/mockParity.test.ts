/**
 * The mock answers as the service does wherever the contract alone decides: the same requests,
 * valid and invalid, go to `npm run mock` and to the real service, and the answers must agree on
 * the status, the content type, the problem `code` (and the pointers of a validation failure),
 * and the shape of a success body. Where the service's answer to the documented request depends on
 * state the mock does not keep (an application that must first be referred, a bank account that
 * must match), SERVICE_STATE makes that state on the service first.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testValues } from '../../src/contract/testValues.ts';
import { CURRENT_VERSION, FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { setAccountApiVersion } from '../../src/store/accounts.ts';
import { startMock, stopMock } from '../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import {
  buildRequest,
  createPathResources,
  credentialFor,
  firstRequestExample,
  label,
  parameters,
  rawRequest,
  requestBody,
  securitySchemes,
  specOperations,
  type RawResponse,
  type SpecOperation,
} from './harness.ts';

type Json = Record<string, any>;

let mock: ChildProcess;
let mockUrl: string;
let app: TestApp;
let owner: TestAccount;

beforeAll(async () => {
  // The mock starts while the app does. Every webhook case registers an endpoint of its own in one
  // account: more than the default cap of 16.
  const started = startMock();
  app = await startTestApp({ env: { WEBHOOK_ENDPOINTS_PER_ACCOUNT: '1000' } });
  owner = await app.newAccount('Parity Lending');
  ({ child: mock, baseUrl: mockUrl } = await started);
}, 60_000);

afterAll(async () => {
  await stopMock(mock);
  await app?.close();
});

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | FormData;
}

/** What the two answers are compared on. */
function summary(answer: RawResponse): Json {
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const out: Json = { status: answer.status, type };
  if (type === 'application/problem+json') {
    const problem = JSON.parse(answer.text);
    out.code = problem.code;
    if (problem.errors) out.pointers = (problem.errors as Array<{ pointer: string }>).map((e) => e.pointer).sort();
  }
  if (answer.status === 405) out.allow = answer.headers.get('allow');
  if (answer.status === 401) out.challenge = /^Bearer/.test(answer.headers.get('www-authenticate') ?? '');
  out.cors = answer.headers.get('access-control-allow-origin');
  return out;
}

/** The object (or array) branch of a schema written as `oneOf`/`anyOf` with null, or the schema itself. */
function structural(schema: Json | undefined): Json | undefined {
  if (!schema) return undefined;
  for (const keyword of ['oneOf', 'anyOf', 'allOf']) {
    const branch = (schema[keyword] as Json[] | undefined)?.find((b) => b.properties || b.items || b.type === 'object' || b.type === 'array');
    if (branch) return structural(branch);
  }
  return schema;
}

/**
 * The shape of a JSON value: object keys and value types, `null` and `[]` matching anything. A
 * key the schema does not require may be missing on one side (an optional field).
 */
function shapeDifferences(a: unknown, b: unknown, schema: Json | undefined, at = ''): string[] {
  if (a === null || b === null) return [];
  const here = structural(schema);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return [`${at || '/'}: array in one, not in the other`];
    return a.length && b.length ? shapeDifferences(a[0], b[0], here?.items, `${at}/0`) : [];
  }
  if (typeof a !== typeof b) return [`${at || '/'}: ${typeof a} vs ${typeof b}`];
  if (typeof a !== 'object') return [];
  const required = new Set<string>((here?.required as string[] | undefined) ?? []);
  const keys = new Set([...Object.keys(a as Json), ...Object.keys(b as Json)]);
  const differences: string[] = [];
  for (const key of [...keys].sort()) {
    const inA = key in (a as Json);
    const inB = key in (b as Json);
    if (inA !== inB) {
      if (!here?.properties || required.has(key)) differences.push(`${at}/${key}: only in the ${inA ? 'service' : 'mock'}'s answer`);
      continue;
    }
    differences.push(...shapeDifferences((a as Json)[key], (b as Json)[key], here?.properties?.[key], `${at}/${key}`));
  }
  return differences;
}

async function both(
  op: SpecOperation | undefined,
  build: (target: 'service' | 'mock', ids: Record<string, string>, credential: string) => Sent,
  prepare?: (ids: Record<string, string>) => Promise<void>,
) {
  let ids: Record<string, string> = {};
  let credential = owner.apiKey;
  if (op) {
    ids = await createPathResources(app, owner, op);
    const scheme = securitySchemes(op)[0];
    if (scheme) credential = await credentialFor(app, owner, scheme, op);
  }
  if (prepare) await prepare(ids);
  const send = async (base: string, request: Sent) => rawRequest(base + request.path, request as never);
  const service = await send(app.baseUrl, build('service', ids, credential));
  const mocked = await send(mockUrl, build('mock', {}, 'any-token-will-do'));
  return { service, mocked };
}

function documented(op: SpecOperation, ids: Record<string, string>, authorization: string | undefined, headers: Record<string, string> = {}): Sent {
  const { path: pathAndQuery, init } = buildRequest(op, { ...(Object.keys(ids).length ? { pathValues: ids } : {}), authorization, headers });
  return { method: init.method!, path: pathAndQuery, headers: init.headers as Record<string, string>, body: init.body as string | FormData | undefined };
}

const notComparedValid: string[] = [];

/** An application the underwriting rules referred to a person: submitted without the financial fields. */
async function referredApplication(): Promise<string> {
  const { data } = await owner.client.POST('/v1/applications', { body: { applicant: { name: 'Matrix Applicant', amount: 350000 }, term: 30 } });
  const { data: submitted } = await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
  expect(submitted!.status).toBe('referred');
  return data!.mortgageId;
}

/** An application with a quote and the six pieces of a TRID application: its Loan Estimate clock runs and its figures can be made. */
async function loanEstimateApplication(): Promise<string> {
  const { data: quote } = await owner.client.POST('/v1/quotes', { body: { amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 } });
  const { data } = await owner.client.POST('/v1/applications', {
    body: {
      applicant: { name: 'Matrix Applicant', amount: 350000, email: 'matrix@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 742 },
      term: 30,
      propertyValue: 437500,
      quoteId: quote!.quoteId,
      propertyAddress: { street: '1 Main St', city: 'Springfield', state: 'IL', zip: '62701' },
    },
  });
  return data!.mortgageId;
}

/**
 * What the service needs besides the documented request for the valid request to succeed: state
 * the mock does not keep. Each returns the path ids and body to send to the service.
 */
const SERVICE_STATE: Record<string, (ids: Record<string, string>, example: Json) => Promise<{ ids: Record<string, string>; body?: Json }>> = {
  // An account on the current version cannot upgrade: pin it to the first, as accounts from before versions are (the upgrade returns it to the current one).
  changeApiVersion: async (ids) => {
    await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, owner.accountId, { apiVersion: FIRST_VERSION, previousApiVersion: null, changedAt: null }));
    app.ctx.authenticate.apiKeyRevoked();
    return { ids, body: { version: CURRENT_VERSION } };
  },
  approveApplication: async (ids) => ({ ids: { ...ids, mortgageId: await referredApplication() } }),
  declineApplication: async (ids) => ({ ids: { ...ids, mortgageId: await referredApplication() } }),
  // The documented mortgageId names no application of the service's account: lock for one of its own.
  lockQuote: async (ids, example) => {
    const { data } = await owner.client.POST('/v1/applications', { body: { applicant: { name: 'Matrix Applicant', amount: 350000 }, term: 30 } });
    return { ids, body: { ...example, mortgageId: data!.mortgageId } };
  },
  // Conditions are added to approved applications: the harness's application (approvable) is submitted first.
  addCondition: async (ids) => {
    await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: ids.mortgageId! } } });
    return { ids };
  },
  // The harness's application has no quote and no property address: one that has both.
  getLoanEstimate: async (ids) => ({ ids: { ...ids, mortgageId: await loanEstimateApplication() } }),
  // A running clock (a TRID application), delivered now: the documented time is before it started.
  markLoanEstimateDelivered: async (ids, example) => ({ ids: { ...ids, mortgageId: await loanEstimateApplication() }, body: { ...example, deliveredAt: new Date().toISOString() } }),
  // The documented deliveredAt is before the decision the harness's notice just had: delivered now.
  markNoticeDelivered: async (ids, example) => ({ ids, body: { ...example, deliveredAt: new Date().toISOString() } }),
  // `since` must lie within the retention period counted back from now, which the documented date does not.
  recoverWebhookEvents: async (ids, example) => ({ ids, body: { ...example, since: new Date(Date.now() - 3_600_000).toISOString() } }),
  // The bank token of the harness names account 000123456789 of "Matrix Applicant" at a sandbox partner.
  verifyBankDetails: async (ids, example) => {
    const { data } = await owner.client.POST('/v1/applications', { body: { applicant: { name: 'Matrix Applicant', amount: 350000 }, term: 30 } });
    return { ids, body: { ...example, mortgageId: data!.mortgageId, applicant: { ...example.applicant, accountNumber: '000123456789' } } };
  },
};

describe.each(specOperations().map((op) => [label(op), op] as const))('%s', (_label, op) => {
  const body = requestBody(op);
  const json = body?.mediaType === 'application/json';

  it('answers its documented request alike (status, content type, shape of the body)', async () => {
    const setup = SERVICE_STATE[op.operationId];
    const example = (firstRequestExample(op)?.value ?? {}) as Json;
    const prepared = new Map<string, { ids: Record<string, string>; body?: Json }>();
    const { service, mocked } = await both(op, (target, ids, credential) => {
      if (target === 'mock') return documented(op, {}, `Bearer ${credential}`);
      const state = prepared.get('service') ?? { ids };
      const request = documented(op, state.ids, `Bearer ${credential}`);
      return state.body ? { ...request, body: JSON.stringify(state.body) } : request;
    }, setup ? async (ids) => void prepared.set('service', await setup(ids, example)) : undefined);
    if (service.status >= 300) {
      // The service's answer depends on state the mock does not keep (e.g. an application that is not yet referred).
      notComparedValid.push(`${label(op)}: the service answered ${service.status} ${service.text.slice(0, 120)}`);
      return;
    }
    const s = summary(service);
    const m = summary(mocked);
    expect(m, `${label(op)}: mock ${mocked.text.slice(0, 300)}`).toEqual(s);
    if (s.type.endsWith('json') && service.text) {
      const schema = op.operation.responses[String(service.status)]?.content?.[s.type]?.schema as Json | undefined;
      expect(shapeDifferences(JSON.parse(service.text), JSON.parse(mocked.text), schema), `${label(op)}: shapes differ`).toEqual([]);
    }
  });

  it('refuses a request without credentials alike', async () => {
    const { service, mocked } = await both(op, (target, ids) => documented(op, target === 'service' ? ids : {}, undefined));
    expect(summary(mocked)).toEqual(summary(service));
    expect(service.status).toBe(401);
  });

  it('refuses a method the path does not take alike (405 with Allow)', async () => {
    const method = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find((m) => !op.pathItem[m.toLowerCase()])!;
    const { service, mocked } = await both(op, (target, ids, credential) => ({ ...documented(op, target === 'service' ? ids : {}, `Bearer ${credential}`), method, body: undefined }));
    expect(summary(mocked)).toEqual(summary(service));
    expect(service.status).toBe(405);
  });

  const limit = parameters(op, 'query').find((p) => p.name === 'limit');
  if (limit) {
    it('refuses an out-of-range query parameter alike (400 validation_failed, #/query/limit)', async () => {
      const { service, mocked } = await both(op, (target, ids, credential) => {
        const request = documented(op, target === 'service' ? ids : {}, `Bearer ${credential}`);
        return { ...request, path: request.path + (request.path.includes('?') ? '&' : '?') + 'limit=1000' };
      });
      expect(summary(mocked)).toEqual(summary(service));
      expect(summary(service).pointers).toEqual(['#/query/limit']);
    });
  }

  if (json) {
    const example = firstRequestExample(op)!.value as Json;
    const withBody = (text: string, contentType = 'application/json') => (target: 'service' | 'mock', ids: Record<string, string>, credential: string) => ({
      ...documented(op, target === 'service' ? ids : {}, `Bearer ${credential}`),
      headers: { Authorization: `Bearer ${credential}`, 'Content-Type': contentType },
      body: text,
    });

    it('refuses malformed JSON alike (400 malformed_json)', async () => {
      const { service, mocked } = await both(op, withBody(JSON.stringify(example).slice(0, -1) + ','));
      expect(summary(mocked)).toEqual(summary(service));
      expect(summary(service).code).toBe('malformed_json');
    });

    it('refuses a content type it does not take alike (415)', async () => {
      const { service, mocked } = await both(op, withBody(JSON.stringify(example), 'text/plain'));
      expect(summary(mocked)).toEqual(summary(service));
      expect(service.status).toBe(415);
    });

    it('refuses an unknown field alike (400 validation_failed with its pointer)', async () => {
      const { service, mocked } = await both(op, withBody(JSON.stringify({ ...example, unexpectedField: true })));
      expect(summary(mocked)).toEqual(summary(service));
      expect(summary(service).pointers).toEqual(['/unexpectedField']);
    });

    const required = ((body!.schema?.required ?? []) as string[]).find((name) => name in example);
    if (required) {
      it(`refuses a body without its required ${required} alike (400 validation_failed, /${required})`, async () => {
        const { [required]: _omitted, ...rest } = example;
        const { service, mocked } = await both(op, withBody(JSON.stringify(rest)));
        expect(summary(mocked)).toEqual(summary(service));
        expect(summary(service).pointers).toEqual([`/${required}`]);
      });
    }
  }
});

describe('outside the operations', () => {
  it('an unknown path is 404 not_found on both', async () => {
    const { service, mocked } = await both(undefined, (_t, _i, credential) => ({ method: 'GET', path: '/v1/no-such-thing', headers: { Authorization: `Bearer ${credential}` } }));
    expect(summary(mocked)).toEqual(summary(service));
    expect(summary(service).code).toBe('not_found');
  });

  it('a CORS preflight gets the same answer, with no Access-Control headers (the service allows no cross-origin calls)', async () => {
    const preflight = { method: 'OPTIONS', path: '/v1/quotes', headers: { Origin: 'https://app.partner.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' } };
    const { service, mocked } = await both(undefined, () => preflight);
    expect(summary(mocked)).toEqual(summary(service));
    expect(mocked.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("a problem names the request's path and X-Request-Id on both, also when the mock answers it from an example (Prefer: code=…)", async () => {
    const path = '/v1/applications/mtg-01jdz8k3n4q2v6x9b7c5t1r0aa';
    const { service, mocked } = await both(undefined, (target, _i, credential) => ({
      method: 'GET',
      path,
      headers: { Authorization: `Bearer ${credential}`, ...(target === 'mock' ? { Prefer: 'code=404' } : {}) },
    }));
    expect(summary(mocked)).toEqual(summary(service));
    for (const answer of [service, mocked]) {
      const problem = JSON.parse(answer.text) as { instance: string; requestId: string };
      expect(problem.instance).toBe(path);
      expect(problem.requestId).toBe(answer.headers.get('x-request-id'));
    }
  });

  it('a cross-origin GET carries no Access-Control headers on either', async () => {
    const { service, mocked } = await both(undefined, (_t, _i, credential) => ({ method: 'GET', path: '/v1/account', headers: { Authorization: `Bearer ${credential}`, Origin: 'https://app.partner.test' } }));
    expect(summary(mocked)).toEqual(summary(service));
    expect(summary(mocked).cors).toBeNull();
  });

  it.each([
    ['csv', 'text/csv'],
    ['ndjson', 'application/x-ndjson'],
    ['json', 'application/json'],
  ])('the export with format=%s answers %s on both', async (format, type) => {
    const { service, mocked } = await both(undefined, (_t, _i, credential) => ({ method: 'GET', path: `/v1/mortgages/export?format=${format}`, headers: { Authorization: `Bearer ${credential}` } }));
    expect(summary(mocked)).toEqual(summary(service));
    expect(summary(service).type).toBe(type);
  });

  it.each(testValues().bankAccounts.map((v) => [v.accountNumber, v] as const))(
    'test value %s: the mock answers what test mode answers (status, content type, code, verdict)',
    async (accountNumber, value) => {
      // Test mode: a test application, a token of the test-mode bank for its applicant and this number.
      const { data: application } = await owner.test.POST('/v1/applications', { body: { applicant: { name: 'Parity Applicant', amount: 300000 }, term: 30 } });
      const { data: token } = await owner.test.POST('/v1/test/bank-tokens', { body: { holderName: 'Parity Applicant', accountNumber } });
      const verifyBody = (mortgageId: string) => JSON.stringify({ mortgageId, applicant: { accountNumber } });
      const send = (base: string, bearer: string, mortgageId: string) =>
        rawRequest(base + '/v1/banks/verify', { method: 'POST', headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' }, body: verifyBody(mortgageId) } as never);
      const service = await send(app.baseUrl, token!.bankToken, application!.mortgageId);
      const mocked = await send(mockUrl, 'any-token-will-do', 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa');
      expect(summary(mocked)).toEqual(summary(service));
      expect(service.status).toBe(value.answer.status);
      if (service.status === 200) {
        const verdict = (text: string) => {
          const { verified, failedChecks, nameMatch } = JSON.parse(text) as { verified: boolean; failedChecks: string[]; nameMatch: { outcome: string } };
          return { verified, failedChecks, outcome: nameMatch.outcome };
        };
        expect(verdict(mocked.text)).toEqual(verdict(service.text));
      } else {
        expect(mocked.headers.get('retry-after')).toBe(service.headers.get('retry-after'));
      }
    },
  );

  it('compared the valid request of every operation', () => {
    expect(notComparedValid, 'give the service the state it needs in SERVICE_STATE').toEqual([]);
  });
});
