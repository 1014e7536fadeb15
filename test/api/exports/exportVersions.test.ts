/**
 * The mortgage export in the caller's API version: a partner pinned to the first version
 * (2026-11-21) never sees `clear_to_close` in any format (JSON, NDJSON, CSV and, on PostgreSQL, the
 * CSV that COPY writes, a custom CSV, MISMO); such an application is `approved` there, and its
 * `status=approved` filter finds it. Asking for the current version (Mos-Version) shows it as it is.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, FIRST_VERSION } from '../../../src/domain/versions/registry.ts';
import { setAccountApiVersion } from '../../../src/store/accounts.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';

let app: TestApp;
let partner: TestAccount;
const ids = { cleared: '', approved: '', draft: '' };

beforeAll(async () => {
  app = await startTestApp();
  partner = await app.newAccount('Early Exporter');
  await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, partner.accountId, { apiVersion: FIRST_VERSION, previousApiVersion: null, changedAt: null }));
  app.ctx.authenticate.apiKeyRevoked();
  const api = partner.client;
  const create = async (name: string) => {
    const { data } = await api.POST('/v1/applications', {
      body: { applicant: { name, email: 'e@example.test', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 760 }, term: 30, propertyValue: 400000 },
    });
    return data!.mortgageId;
  };
  ids.cleared = await create('Cleared Applicant');
  ids.approved = await create('Approved Applicant');
  ids.draft = await create('Draft Applicant');
  for (const mortgageId of [ids.cleared, ids.approved]) {
    const { data } = await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
    expect(data!.status).toBe('approved');
    expect(data!.conditions.length).toBeGreaterThan(0);
    if (mortgageId !== ids.cleared) continue;
    for (const condition of data!.conditions) {
      await api.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/satisfy', { params: { path: { mortgageId, conditionId: condition.conditionId } }, body: { note: 'Checked' } });
    }
  }
  // The current version says what it is; the pinned one does not.
  const current = await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: ids.cleared } }, headers: { 'Mos-Version': CURRENT_VERSION } });
  expect(current.data!.status).toBe('clear_to_close');
  for (const format of ['csv-semicolon', 'mismo-34']) {
    const body = format === 'mismo-34' ? { name: format, base: 'mismo' as const } : { name: format, base: 'csv' as const, csv: { delimiter: ';' as const } };
    expect((await api.POST('/v1/export-formats', { body })).response.status).toBe(201);
  }
});
afterAll(() => app?.close());

async function exported(query: string, version?: string): Promise<{ version: string | null; text: string }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${partner.apiKey}` };
  if (version) headers['Mos-Version'] = version;
  const response = await app.fetch(`/v1/mortgages/export?${query}`, { headers });
  expect(response.status).toBe(200);
  return { version: response.headers.get('mos-version'), text: await response.text() };
}

/** The status each mortgage has in an export's text, by format. */
function statuses(format: string, text: string): Record<string, string> {
  const found: Record<string, string> = Object.create(null);
  if (format === 'json') for (const r of (JSON.parse(text) as { data: { mortgageId: string; status: string }[] }).data) found[r.mortgageId] = r.status;
  else if (format === 'ndjson') for (const line of text.trim().split('\n')) { const r = JSON.parse(line) as { mortgageId: string; status: string }; found[r.mortgageId] = r.status; }
  else if (format === 'mismo-34') for (const deal of text.split('<DEAL>').slice(1)) found[/<LoanIdentifier>([^<]+)</.exec(deal)![1]!] = /<mos:ApplicationStatus>([^<]+)</.exec(deal)![1]!;
  else {
    const rows = parseCsv(text, { columns: true, delimiter: format === 'csv' ? ',' : ';', bom: true }) as Record<string, string>[];
    for (const row of rows) found[row.mortgageId ?? row['Mortgage ID']!] = row.status ?? row.Status!;
  }
  return found;
}

describe('an export for a partner pinned to the first version', () => {
  it.each(['json', 'ndjson', 'csv', 'csv-semicolon', 'mismo-34'])('writes %s with no clear_to_close: the cleared application is approved', async (format) => {
    const { version, text } = await exported(`format=${format}`);
    expect(version).toBe(FIRST_VERSION);
    expect(text).not.toContain('clear_to_close');
    expect(text).not.toContain('ClearToClose');
    expect(statuses(format, text)).toMatchObject({ [ids.cleared]: 'approved', [ids.approved]: 'approved', [ids.draft]: 'draft' });
  });

  it.each(['json', 'ndjson', 'csv', 'csv-semicolon', 'mismo-34'])('writes %s as it is when the request asks for the current version', async (format) => {
    const { version, text } = await exported(`format=${format}`, CURRENT_VERSION);
    expect(version).toBe(CURRENT_VERSION);
    expect(statuses(format, text)).toMatchObject({ [ids.cleared]: 'clear_to_close', [ids.approved]: 'approved', [ids.draft]: 'draft' });
  });

  it('writes only the selected fields, the status still in its version', async () => {
    const { text } = await exported('format=csv&fields=mortgageId,status');
    const rows = parseCsv(text, { columns: true, bom: true }) as Record<string, string>[];
    expect(rows.find((row) => row.mortgageId === ids.cleared)).toEqual({ mortgageId: ids.cleared, status: 'approved' });
  });

  it('finds the cleared application with status=approved, as its version shows it, and nothing for a status the version lacks', async () => {
    const approved = statuses('json', (await exported('format=json&status=approved')).text);
    expect(Object.keys(approved).sort()).toEqual([ids.approved, ids.cleared].sort());
    expect(Object.values(approved)).toEqual(['approved', 'approved']);
    expect(statuses('json', (await exported('format=json&status=clear_to_close')).text)).toEqual({});
    expect(statuses('json', (await exported('format=json&status=draft')).text)).toEqual({ [ids.draft]: 'draft' });
  });

  it('filters in the current version when asked for it: approved is only approved', async () => {
    expect(Object.keys(statuses('json', (await exported('format=json&status=approved', CURRENT_VERSION)).text))).toEqual([ids.approved]);
    expect(statuses('ndjson', (await exported('format=ndjson&status=clear_to_close', CURRENT_VERSION)).text)).toEqual({ [ids.cleared]: 'clear_to_close' });
    expect(statuses('csv', (await exported('format=csv&status=clear_to_close', CURRENT_VERSION)).text)).toEqual({ [ids.cleared]: 'clear_to_close' });
  });
});

describe("the applications list's status filter, as the export's", () => {
  const listed = async (status: 'approved' | 'clear_to_close', version?: string) => {
    const { data, response } = await partner.client.GET('/v1/applications', { params: { query: { status } }, headers: version ? { 'Mos-Version': version } : {} });
    expect(response.status).toBe(200);
    return Object.fromEntries(data!.data.map((a) => [a.mortgageId, a.status]));
  };

  it('on the first version, status=approved finds every application it shows as approved, and clear_to_close finds none', async () => {
    expect(await listed('approved')).toEqual({ [ids.cleared]: 'approved', [ids.approved]: 'approved' });
    expect(await listed('clear_to_close')).toEqual({});
  });

  it('on the current version each status finds its own', async () => {
    expect(await listed('approved', CURRENT_VERSION)).toEqual({ [ids.approved]: 'approved' });
    expect(await listed('clear_to_close', CURRENT_VERSION)).toEqual({ [ids.cleared]: 'clear_to_close' });
  });
});
