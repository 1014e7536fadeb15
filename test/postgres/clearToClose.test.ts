/**
 * Clear to close exactly once across two instances on one PostgreSQL database: the last two
 * closing conditions of an approved application are satisfied by two uploads sent at the same
 * moment, one to each instance. Whatever the interleaving, the application moves to
 * clear_to_close once and `application.cleared_to_close` is published once; neither upload's
 * satisfaction is lost (each transaction locks the application's row before it reads the
 * conditions, and the move is a conditional update).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountWithCli, startService, tempDataDir, type ServiceProcess } from '../helpers/server.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';

const SECRETS_KEY = 'CAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAg=';
const cleanups: Array<() => Promise<unknown>> = [];
let database: TempDatabase;
let a: ServiceProcess;
let b: ServiceProcess;
let apiKey: string;

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function instance(): Promise<ServiceProcess> {
  const dir = await tempDataDir('mos-ctc-');
  cleanups.push(dir.remove);
  const service = await startService({ dataDir: dir.dataDir, env: { DATABASE_URL: database.url, DATABASE_POOL_MAX: '6', SECRETS_KEY, LOG_LEVEL: 'warn' } });
  cleanups.push(async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });
  return service;
}

beforeAll(async () => {
  database = await testDatabase();
  cleanups.push(() => database.drop());
  [a, b] = await Promise.all([instance(), instance()]);
  ({ apiKey } = await createAccountWithCli(a.dataDir, 'Closing Lending', 'ops@closing.test', { DATABASE_URL: database.url, SECRETS_KEY }));
}, 60_000);

function call(service: ServiceProcess, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function upload(service: ServiceProcess, mortgageId: string, documentType: string): Promise<Response> {
  const form = new FormData();
  form.set('documentType', documentType);
  form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), `${documentType}.pdf`);
  return fetch(`${service.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` }, body: form });
}

async function eventCounts(mortgageId: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ type: string; n: string }>('SELECT type, COUNT(*) AS n FROM webhook_events WHERE payload::text LIKE $1 GROUP BY type', [`%${mortgageId}%`]);
    return Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
  } finally {
    await client.end();
  }
}

const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

describe('clear to close on two instances', () => {
  it('two uploads at once, one per instance, each clearing a last closing condition: one transition, one event, both satisfactions kept', async () => {
    const rules = await call(a, 'PUT', '/v1/underwriting', {
      debtToIncome: { approveAtMost: 43, referAtMost: 50 },
      loanToValue: { approveAtMost: 97, referAtMost: 100 },
      creditScore: { approveAtLeast: 620, referAtLeast: 580 },
      loanAmount: { approveAtMost: 832750, referAtMost: 1249125 },
      conditions: [
        { type: 'income_proof', description: 'Pay stubs', dueBefore: 'closing' },
        { type: 'identity', description: 'Photo identity', dueBefore: 'closing' },
      ],
    });
    expect(rules.status).toBe(200);
    for (let round = 0; round < 8; round++) {
      const created = (await (await call(a, 'POST', '/v1/applications', APPROVABLE)).json()) as { mortgageId: string };
      const submitted = (await (await call(b, 'POST', `/v1/applications/${created.mortgageId}/submit`)).json()) as { status: string };
      expect(submitted.status).toBe('approved');
      // Alternate which instance gets which document, so both orders of arrival are tried.
      const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
      const statuses = await Promise.all([upload(first, created.mortgageId, 'income_proof'), upload(second, created.mortgageId, 'identity')]);
      expect(statuses.map((r) => r.status)).toEqual([201, 201]);
      const application = (await (await call(round % 2 === 0 ? b : a, 'GET', `/v1/applications/${created.mortgageId}`)).json()) as {
        status: string;
        conditions: Array<{ status: string; satisfiedBy: { kind: string } | null }>;
      };
      expect(application.status).toBe('clear_to_close');
      expect(application.conditions.map((c) => [c.status, c.satisfiedBy?.kind])).toEqual([
        ['satisfied', 'document'],
        ['satisfied', 'document'],
      ]);
      expect(await eventCounts(created.mortgageId)).toEqual({
        'application.submitted': 1,
        'application.approved': 1,
        'application.conditions_updated': 3,
        'document.uploaded': 2,
        'application.cleared_to_close': 1,
      });
    }
  }, 120_000);

  it('the same document type uploaded twice at once: one satisfies the condition, one transition, one event', async () => {
    const created = (await (await call(a, 'POST', '/v1/applications', APPROVABLE)).json()) as { mortgageId: string };
    await call(a, 'POST', `/v1/applications/${created.mortgageId}/submit`);
    await upload(b, created.mortgageId, 'identity');
    const statuses = await Promise.all([upload(a, created.mortgageId, 'income_proof'), upload(b, created.mortgageId, 'income_proof')]);
    expect(statuses.map((r) => r.status)).toEqual([201, 201]);
    const counts = await eventCounts(created.mortgageId);
    expect(counts['application.cleared_to_close']).toBe(1);
    expect(counts['application.conditions_updated']).toBe(3);
    expect(counts['document.uploaded']).toBe(3);
  }, 60_000);
});
