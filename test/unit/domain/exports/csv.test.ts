import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centsToDecimal } from '../../../../src/domain/exports/amounts.ts';
import {
  CsvWriter,
  builtInCsvLayout,
  csvCells,
  csvStringifyOptions,
  csvOptionsProblems,
  customCsvLayout,
  FORMULA_STARTS,
  formatTimestamp,
  neutraliseFormula,
} from '../../../../src/domain/exports/csv.ts';
import { EXPORT_FIELDS, fieldByName, fieldValue, type ExportSource } from '../../../../src/domain/exports/fields.ts';
import { exportSource } from './arbitraries.ts';

const field = (name: string) => fieldByName(name)!;

function row(overrides: Partial<ExportSource> = {}): ExportSource {
  return {
    mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa',
    status: 'approved',
    applicantName: 'Jane Doe',
    applicantEmail: 'jane.doe@example.test',
    amountCents: 35_000_050,
    annualIncomeCents: 12_000_000,
    monthlyDebtsCents: 65_000,
    creditScore: 720,
    termYears: 30,
    propertyValueCents: 45_000_000,
    currency: 'USD',
    quoteId: null,
    createdAt: '2026-11-21T18:20:00.000Z',
    submittedAt: '2026-11-21T18:30:00.000Z',
    decidedAt: '2026-11-21T18:30:00.000Z',
    withdrawnAt: null,
    updatedAt: '2026-11-21T18:30:00.000Z',
    bankVerification: { verified: true, accountMask: '6789', checkedAt: '2026-11-21T18:25:00.000Z' },
    ...overrides,
  };
}

function writeAll(writer: CsvWriter, rows: ExportSource[]): string {
  return writer.begin() + writer.batch(rows) + writer.end();
}

describe('neutraliseFormula (OWASP CSV injection)', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['\nx', "'\nx"],
    ['\uFF1D1+1', "'\uFF1D1+1"],
    ['Jane Doe', 'Jane Doe'],
    ['a=b', 'a=b'],
    ["'quoted", "'quoted"],
    ['', ''],
  ])('%j becomes %j', (text, written) => {
    expect(neutraliseFormula(text)).toBe(written);
  });

  it('prefixes exactly the first characters FORMULA_STARTS lists (which PostgreSQL\'s CSV export tests in SQL)', () => {
    const prefixed: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const c = String.fromCharCode(code);
      if (neutraliseFormula(c + 'x') !== c + 'x') prefixed.push(c);
    }
    expect(prefixed.sort()).toEqual([...FORMULA_STARTS].sort());
  });
});

describe('CsvWriter', () => {
  it('writes RFC 4180: a header row, CRLF line ends, quotes where needed and doubled inside', () => {
    const writer = new CsvWriter(builtInCsvLayout([field('mortgageId'), field('applicant.name'), field('applicant.amount')]));
    const text = writeAll(writer, [row({ applicantName: 'Doe, "JD"\nJane' }), row({ applicantName: 'Lone\rCR' })]);
    expect(text).toBe(
      'mortgageId,applicant.name,applicant.amount\r\n' +
        'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa,"Doe, ""JD""\nJane",350000.5\r\n' +
        'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa,"Lone\rCR",350000.5\r\n',
    );
  });

  it('keeps a record whose only column is empty: "" rather than a blank line readers skip', () => {
    const writer = new CsvWriter(builtInCsvLayout([field('quoteId')]));
    const text = writeAll(writer, [row({ quoteId: null }), row({ quoteId: null })]);
    expect(text).toBe('quoteId\r\n""\r\n""\r\n');
    // Readers that skip blank lines (Python's csv, pandas, spreadsheet imports) still see both records.
    expect(parse(text, { skip_empty_lines: true })).toEqual([['quoteId'], [''], ['']]);
  });

  it('neutralises text cells, never numbers, and writes null as an empty cell', () => {
    const writer = new CsvWriter(builtInCsvLayout([field('applicant.name'), field('applicant.email'), field('applicant.amount'), field('quoteId')]));
    const text = writer.batch([row({ applicantName: '-Smith', applicantEmail: '=cmd|/C calc!A0', amountCents: -5 })]);
    expect(parse(text)).toEqual([["'-Smith", "'=cmd|/C calc!A0", '-0.05', '']]);
  });

  it('reads back, with a real CSV parser, to every cell it was given (text neutralised)', () => {
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 5 }), (rows) => {
        const records = parse(writeAll(new CsvWriter(builtInCsvLayout(EXPORT_FIELDS)), rows), { relax_column_count: false }) as string[][];
        expect(records[0]).toEqual(EXPORT_FIELDS.map((f) => f.name));
        rows.forEach((source, i) => {
          const cells = records[i + 1]!;
          EXPORT_FIELDS.forEach((f, c) => {
            const value = fieldValue(source, f.index);
            const expected =
              value === null ? '' : f.kind === 'text' ? neutraliseFormula(value as string) : f.kind === 'money' ? centsToDecimal(value as number) : String(value);
            expect(cells[c]).toBe(expected);
          });
        });
        expect(records).toHaveLength(rows.length + 1);
      }),
    );
  });

  it('writes byte for byte what csv-stringify writes for the same cells, for any rows and layout', () => {
    const layouts = fc
      .record({
        delimiter: fc.constantFrom<',' | ';' | '\t' | '|'>(',', ';', '\t', '|'),
        decimalSeparator: fc.constantFrom<'.' | ','>('.', ','),
        thousandsSeparator: fc.constantFrom<'' | ',' | '.' | ' ' | "'">('', ',', '.', ' ', "'"),
        dateFormat: fc.constantFrom<'iso8601' | 'date' | 'dateTime' | 'unixSeconds'>('iso8601', 'date', 'dateTime', 'unixSeconds'),
        booleanFormat: fc.constantFrom<'trueFalse' | 'yesNo' | 'oneZero'>('trueFalse', 'yesNo', 'oneZero'),
      })
      .filter((options) => options.decimalSeparator !== options.thousandsSeparator)
      .map((options) => customCsvLayout({ ...options, includeHeader: false }));
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 6 }), layouts, (rows, layout) => {
        const cells = csvCells(layout);
        const expected = rows.length === 0 ? '' : stringify(rows.map(cells), csvStringifyOptions(layout));
        expect(new CsvWriter(layout).batch(rows)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('writes a custom layout: delimiter, column order and headers, dates, numbers, booleans, BOM', () => {
    const layout = customCsvLayout({
      delimiter: ';',
      columns: [
        { field: 'applicant.amount', header: 'Amount' },
        { field: 'mortgageId', header: '=Loan' },
        { field: 'decidedAt' },
        { field: 'bankVerification.verified', header: 'Verified' },
      ],
      dateFormat: 'dateTime',
      decimalSeparator: ',',
      thousandsSeparator: '.',
      moneyDecimals: 'two',
      booleanFormat: 'oneZero',
      byteOrderMark: true,
    });
    const text = writeAll(new CsvWriter(layout), [row(), row({ bankVerification: null, decidedAt: null })]);
    expect(text).toBe(
      "\uFEFFAmount;'=Loan;decidedAt;Verified\r\n" +
        '350.000,50;mtg-01jdz8k3n4q2v6x9b7c5t1r0aa;2026-11-21 18:30:00;1\r\n' +
        '350.000,50;mtg-01jdz8k3n4q2v6x9b7c5t1r0aa;;\r\n',
    );
  });

  it('quotes an amount whose decimal comma is also the delimiter', () => {
    const layout = customCsvLayout({ columns: [{ field: 'applicant.amount' }], decimalSeparator: ',', includeHeader: false });
    const text = writeAll(new CsvWriter(layout), [row()]);
    expect(text).toBe('"350000,5"\r\n');
    expect(parse(text)).toEqual([['350000,5']]);
  });

  it('has every field, headed by its name, when a custom layout names no columns', () => {
    const text = new CsvWriter(customCsvLayout({})).begin();
    expect(text).toBe(EXPORT_FIELDS.map((f) => f.name).join(',') + '\r\n');
  });
});

describe('formatTimestamp', () => {
  it.each([
    ['iso8601', '2026-11-21T18:30:00.000Z'],
    ['date', '2026-11-21'],
    ['dateTime', '2026-11-21 18:30:00'],
    ['unixSeconds', '1795285800'],
  ] as const)('%s writes %s', (format, text) => {
    expect(formatTimestamp('2026-11-21T18:30:00.000Z', format)).toBe(text);
  });
});

describe('csvOptionsProblems', () => {
  it('refuses the same separator for decimals and thousands, and accepts the rest', () => {
    expect(csvOptionsProblems({ decimalSeparator: ',', thousandsSeparator: ',' })).toHaveLength(1);
    expect(csvOptionsProblems({ thousandsSeparator: '.' })).toHaveLength(1);
    expect(csvOptionsProblems({ decimalSeparator: ',', thousandsSeparator: '.' })).toEqual([]);
    expect(csvOptionsProblems({})).toEqual([]);
  });
});
