/**
 * The HMDA register (GET /v1/exports/hmda-lar) and its check (GET /v1/exports/hmda-lar/check),
 * over HTTP against the real app, on each engine: a year of applications in every status, stored
 * directly (their times are the year's, not the test's), exported and checked; who may ask; which
 * years.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/clock.ts';
import { testEnvironmentId } from '../../../src/domain/accounts/environments.ts';
import type { Decision } from '../../../src/domain/underwriting/decision.ts';
import { FileChecker } from '../../../src/domain/hmda/fileEdits.ts';
import { LAR_FIELD_COUNT, TS_FIELD_COUNT, larRecordOf } from '../../../src/domain/hmda/layout.ts';
import { uliCheckDigitsValid } from '../../../src/domain/hmda/uli.ts';
import { newId } from '../../../src/ids.ts';
import { putDemographics } from '../../../src/store/applicationDemographics.ts';
import { insertApplication } from '../../../src/store/applications.ts';
import { setLender } from '../../../src/store/lender.ts';
import { storedApplication } from '../../helpers/storedApplication.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';

const clock: Clock = { now: () => new Date('2026-12-07T12:00:00.000Z') };

let app: TestApp;
let lender: TestAccount;
let other: TestAccount;
/** The lender's applications by what they are, and the Action Taken each must be reported with. */
const made: Record<string, string> = {};

type Status = 'draft' | 'submitted' | 'referred' | 'approved' | 'declined' | 'withdrawn' | 'clear_to_close';

function decision(outcome: 'approved' | 'declined' | 'referred', decidedAt: string, effect: 'approve' | 'decline' | 'refer'): Decision {
  return {
    outcome,
    decidedAt,
    decidedBy: 'underwriting_rules',
    reasons: [
      { rule: 'debt_to_income', result: 'pass', effect: 'approve', threshold: 43, referralLimit: 50, value: 31.5, unit: 'percent', message: 'within' },
      { rule: 'credit_score', result: effect === 'approve' ? 'pass' : 'fail', effect, threshold: 620, referralLimit: 580, value: 560, unit: 'points', message: 'score' },
    ],
  };
}

const LEI = '549300HMDATESTLEI024';

/** Every application-data field the service holds, given (the register's rows then pass every implemented edit). */
const DATA = {
  propertyAddress: { street: '12 Elm Street', city: 'Springfield', state: 'IL' as const, zip: '62704', county: '17167', censusTract: '17167000100' },
  loanPurpose: 'purchase' as const,
  occupancy: 'principal_residence' as const,
  propertyType: 'single_family' as const,
  totalUnits: null,
  lienStatus: 'first_lien' as const,
  loanType: 'conventional' as const,
};

async function store(accountId: string, status: Status, times: { submittedAt?: string; decidedAt?: string; withdrawnAt?: string; updatedAt?: string }): Promise<string> {
  const mortgageId = newId('mtg');
  const outcome = status === 'declined' ? 'declined' : status === 'referred' ? 'referred' : 'approved';
  const effect = status === 'declined' ? 'decline' : status === 'referred' ? 'refer' : 'approve';
  const createdAt = '2026-01-05T10:00:00.000Z';
  await app.ctx.store.transaction((tx) =>
    insertApplication(
      tx,
      storedApplication({
        mortgageId,
        accountId,
        status,
        applicantEmail: 'jane@example.test',
        amount: 320000,
        annualIncome: 95500,
        monthlyDebts: 500,
        creditScore: 720,
        propertyValue: 400000,
        decision: times.decidedAt ? decision(outcome, times.decidedAt, effect) : null,
        submittedAt: times.submittedAt ?? null,
        decidedAt: times.decidedAt ?? null,
        withdrawnAt: times.withdrawnAt ?? null,
        createdAt,
        updatedAt: times.updatedAt ?? times.withdrawnAt ?? times.decidedAt ?? times.submittedAt ?? createdAt,
        ...DATA,
      }),
    ),
  );
  await app.ctx.store.transaction((tx) =>
    putDemographics(tx, accountId, mortgageId, { ethnicity: ['not_hispanic_or_latino'], race: ['asian', 'white'], sex: 'female', age: 38, collectedOnVisualObservation: false }, createdAt),
  );
  return mortgageId;
}

const submittedAt = '2026-02-01T09:00:00.000Z';

beforeAll(async () => {
  app = await startTestApp({ clock });
  lender = await app.newAccount('HMDA Lender');
  other = await app.newAccount('Other Lender');
  await app.ctx.store.transaction((tx) =>
    setLender(tx, lender.accountId, {
      name: 'HMDA Lender, N.A.',
      address: { street: '1 Main Street', city: 'Springfield', state: 'IL', zip: '62701' },
      lei: LEI,
      contact: { name: 'Pat Compliance', phone: '217-555-0100', email: 'hmda@lender.test' },
      taxId: '12-3456789',
      agencyCode: 9,
    }),
  );
  const id = lender.accountId;
  made['originated'] = await store(id, 'clear_to_close', { submittedAt, decidedAt: '2026-02-10T09:00:00.000Z', updatedAt: '2026-03-01T09:00:00.000Z' });
  made['approved'] = await store(id, 'approved', { submittedAt, decidedAt: '2026-02-11T09:00:00.000Z' });
  made['declined'] = await store(id, 'declined', { submittedAt, decidedAt: '2026-02-12T09:00:00.000Z' });
  made['withdrawn'] = await store(id, 'withdrawn', { submittedAt, withdrawnAt: '2026-02-13T09:00:00.000Z' });
  // Not in 2026's register: no final action, never submitted, or acted on in another year.
  made['draft'] = await store(id, 'draft', {});
  made['submitted'] = await store(id, 'submitted', { submittedAt });
  made['referred'] = await store(id, 'referred', { submittedAt, decidedAt: '2026-02-14T09:00:00.000Z' });
  made['withdrawnDraft'] = await store(id, 'withdrawn', { withdrawnAt: '2026-02-15T09:00:00.000Z' });
  made['approved2025'] = await store(id, 'approved', { submittedAt: '2025-11-01T09:00:00.000Z', decidedAt: '2025-12-31T23:59:59.999Z' });
  // The other account's, and the lender's test environment's, in the same year.
  await store(other.accountId, 'approved', { submittedAt, decidedAt: '2026-02-11T09:00:00.000Z' });
  made['testMode'] = await store(testEnvironmentId(lender.accountId), 'declined', { submittedAt, decidedAt: '2026-02-12T09:00:00.000Z' });
}, 60_000);
afterAll(() => app?.close());

type Json = Record<string, any>;

const get = (path: string, key: string) => app.fetch(path, { headers: { Authorization: `Bearer ${key}` } });
const getJson = async (path: string, key: string): Promise<Json> => (await get(path, key)).json() as Promise<Json>;

async function exported(key: string, year = 2026) {
  const response = await get(`/v1/exports/hmda-lar?year=${year}`, key);
  expect(response.status).toBe(200);
  const lines = (await response.text()).split('\n');
  expect(lines.pop()).toBe(''); // every line ends with \n
  return { response, lines: lines.map((line) => line.split('|')) };
}

describe('exportHmdaLar', () => {
  it('writes the transmittal sheet, then one row per application with a final action in the year, each with the FIG’s field count', async () => {
    const { response, lines } = await exported(lender.apiKey);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="hmda-lar-2026.txt"');
    const [ts, ...rows] = lines;
    expect(ts).toHaveLength(TS_FIELD_COUNT);
    expect(ts).toEqual(['1', 'HMDA Lender, N.A.', '2026', '4', 'Pat Compliance', '217-555-0100', 'hmda@lender.test', '1 Main Street', 'Springfield', 'IL', '62701', '9', '4', '12-3456789', LEI]);
    expect(ts![12]).toBe('4');
    expect(response.headers.get('hmda-lar-rows')).toBe('4');
    for (const row of rows) expect(row).toHaveLength(LAR_FIELD_COUNT);
    const actions = rows.map((row) => [larRecordOf(row).actionTaken, larRecordOf(row).actionTakenDate]);
    expect(actions).toEqual([
      ['1', '20260301'],
      ['2', '20260211'],
      ['3', '20260212'],
      ['4', '20260213'],
    ]);
    // The decline's reason: the credit score rule declined it (credit history, 3).
    expect(larRecordOf(rows[2]!).denial1).toBe('3');
    // The demographics, which no other export carries; the ULI of each, with valid check digits.
    expect(rows.map((row) => [larRecordOf(row).race1, larRecordOf(row).race2])).toEqual(Array(4).fill(['2', '5']));
    for (const row of rows) expect(uliCheckDigitsValid(larRecordOf(row).uli) && larRecordOf(row).uli.startsWith(LEI)).toBe(true);
  });

  it('passes every implemented edit, row by row and as a file, and says so in its headers', async () => {
    const { response, lines } = await exported(lender.apiKey);
    const checker = new FileChecker(2026);
    const [ts, ...rows] = lines;
    expect(checker.transmittal(ts!)).toEqual([]);
    for (const row of rows) expect(checker.lar(row)).toEqual([]);
    expect(checker.finish()).toEqual([]);
    expect(response.headers.get('hmda-lar-rows-failing-edits')).toBe('0');
    // What the service does not hold is left to the lender on every row (the NMLSR ID, the AUS…).
    expect(response.headers.get('hmda-lar-rows-missing-fields')).toBe('4');
  });

  it('an application without its data fails the edits of the fields left out, and the check names them', async () => {
    const third = await app.newAccount('Third Lender');
    const bare = newId('mtg');
    await app.ctx.store.transaction((tx) =>
      insertApplication(
        tx,
        storedApplication({
          mortgageId: bare,
          accountId: third.accountId,
          status: 'declined',
          applicantName: 'Bare',
          amount: 100000,
          submittedAt,
          decidedAt: '2026-04-01T00:00:00.000Z',
          createdAt: submittedAt,
          updatedAt: '2026-04-01T00:00:00.000Z',
        }),
      ),
    );
    const found = await getJson('/v1/exports/hmda-lar/check?year=2026&limit=100', third.apiKey);
    const entry = found.data.find((e: Json) => e.mortgageId === bare);
    expect(entry.failures.map((f: Json) => f.edit)).toEqual(expect.arrayContaining(['V611', 'V612-1', 'V615-1', 'V616', 'V628-1', 'V659', 'V670-1']));
    expect(entry.missing).toEqual(expect.arrayContaining(['Loan Type', 'Loan Purpose', 'Income', 'Reason for Denial: 1', 'Ethnicity of Applicant or Borrower: 1']));
    expect(entry.uli).toBeNull(); // the account has no LEI yet
    expect(found.transmittal.missing).toEqual(expect.arrayContaining(['Legal Entity Identifier (LEI)', 'Federal Taxpayer Identification Number']));
    expect(found.transmittal.failures.map((f: Json) => f.edit)).toEqual(expect.arrayContaining(['V600', 'V607']));
  });

  it('holds only the year asked for', async () => {
    const { lines } = await exported(lender.apiKey, 2025);
    expect(lines).toHaveLength(2);
    expect(larRecordOf(lines[1]!).actionTakenDate).toBe('20251231');
  });

  it('another account’s admin key gets its own register, never the lender’s rows', async () => {
    const { lines } = await exported(other.apiKey);
    // Its one application, not the lender's four; no lender settings yet, so no name or LEI of the lender's.
    expect(lines).toHaveLength(2);
    expect(lines[0]![1]).toBe('');
    expect(lines[0]![12]).toBe('1');
    expect(lines[1]![1]).toBe('');
  });

  it('a test key gets the test environment’s register, and the live key never sees test-mode applications', async () => {
    const { response, lines } = await exported(lender.testKey);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="hmda-lar-2026-test.txt"');
    expect(lines).toHaveLength(2);
    expect(larRecordOf(lines[1]!).actionTaken).toBe('3');
    const live = await getJson('/v1/exports/hmda-lar/check?year=2026&limit=100', lender.apiKey);
    expect(live.data.map((entry: { mortgageId: string }) => entry.mortgageId)).not.toContain(made['testMode']);
  });
});

describe('hmda-lar among the mortgage export formats', () => {
  it('format=hmda-lar on the mortgage export is a 400 that points to the register, and no custom format may take the name', async () => {
    const response = await get('/v1/mortgages/export?format=hmda-lar', lender.apiKey);
    expect(response.status).toBe(400);
    const problem = (await response.json()) as Json;
    expect(problem.code).toBe('unknown_format');
    expect(problem.detail).toContain('GET /v1/exports/hmda-lar?year=YYYY');
    const created = await lender.client.POST('/v1/export-formats', { body: { name: 'hmda-lar', base: 'csv' } });
    expect(created.response.status).toBe(422);
    expect(created.error).toMatchObject({ code: 'reserved_format_name' });
  });
});

describe('checkHmdaLar', () => {
  it('counts the register and pages through the applications that need the lender, in id order', async () => {
    const first = await get('/v1/exports/hmda-lar/check?year=2026&limit=3', lender.apiKey);
    expect(first.status).toBe(200);
    const page1 = (await first.json()) as Json;
    expect(page1).toMatchObject({ year: 2026, livemode: true, rows: 4, rowsFailingEdits: 0, rowsMissingFields: 4, transmittal: { failures: [], missing: [] }, fileFailures: [] });
    expect(page1.data).toHaveLength(3);
    expect(page1.nextCursor).not.toBeNull();
    const page2 = await getJson(`/v1/exports/hmda-lar/check?year=2026&limit=3&cursor=${page1.nextCursor}`, lender.apiKey);
    expect(page2.data).toHaveLength(1);
    expect(page2.nextCursor).toBeNull();
    const ids = [...page1.data, ...page2.data].map((entry: { mortgageId: string }) => entry.mortgageId);
    expect(ids).toEqual([made['originated'], made['approved'], made['declined'], made['withdrawn']]);
    expect(page1.data[0].missing).toContain('NMLSR ID');
  });

  it('refuses a cursor it did not give (400)', async () => {
    expect((await get('/v1/exports/hmda-lar/check?year=2026&cursor=bm9wZQ', lender.apiKey)).status).toBe(400);
  });
});

describe('who may read the register, and for which years', () => {
  it.each(['/v1/exports/hmda-lar?year=2026', '/v1/exports/hmda-lar/check?year=2026'])('a member key gets 403 at %s: the register holds demographic data', async (path) => {
    const response = await get(path, lender.memberKey);
    expect(response.status).toBe(403);
    expect(((await response.json()) as Json).code).toBe('forbidden');
  });

  it.each(['/v1/exports/hmda-lar?year=2026', '/v1/exports/hmda-lar/check?year=2026'])(
    'a restricted key made to export mortgages (exports:write) gets 403 scope_missing at %s; one with demographics:read reads it',
    async (path) => {
      const { data: exporter } = await lender.client.POST('/v1/api-keys', { body: { name: 'Exporter', scopes: { exports: 'write' } } });
      const refused = await get(path, exporter!.apiKey);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'scope_missing', requiredScope: 'demographics:read' });
      const { data: examiner } = await lender.client.POST('/v1/api-keys', { body: { name: 'HMDA filer', scopes: { demographics: 'read' } } });
      expect((await get(path, examiner!.apiKey)).status).toBe(200);
    },
  );

  it('a revoked key and no key get 401', async () => {
    expect((await get('/v1/exports/hmda-lar?year=2026', await app.revokedKey(lender.accountId))).status).toBe(401);
    expect((await app.fetch('/v1/exports/hmda-lar?year=2026')).status).toBe(401);
  });

  it.each(['1999', 'abc', '3000', '2026.5', '', '-2026'])('year=%s is a 400', async (year) => {
    for (const path of ['/v1/exports/hmda-lar', '/v1/exports/hmda-lar/check']) {
      const response = await get(`${path}?year=${year}`, lender.apiKey);
      expect(response.status, path).toBe(400);
    }
  });

  it('a missing year is a 400', async () => {
    expect((await get('/v1/exports/hmda-lar', lender.apiKey)).status).toBe(400);
  });

  it('a year that has not begun (by the environment’s clock) is a 422 year_in_future', async () => {
    for (const path of ['/v1/exports/hmda-lar', '/v1/exports/hmda-lar/check']) {
      const response = await get(`${path}?year=2027`, lender.apiKey);
      expect(response.status, path).toBe(422);
      expect(((await response.json()) as Json).code).toBe('year_in_future');
    }
  });
});
