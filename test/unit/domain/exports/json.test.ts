import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXPORT_FIELDS, fieldValue, type ExportSource, type FieldDefinition } from '../../../../src/domain/exports/fields.ts';
import { centsToDecimal } from '../../../../src/domain/exports/amounts.ts';
import { JsonRecords } from '../../../../src/domain/exports/json.ts';
import { exportSource } from './arbitraries.ts';

/** One row as the JSON and NDJSON exports write it, the selected fields only. */
const jsonRecordWriter = (selected: readonly FieldDefinition[]) => {
  const records = new JsonRecords(selected);
  return (row: ExportSource) => records.append('', row);
};

/** The record built the plain way (objects, decimal.js for amounts), to compare the fast writer against. */
function reference(row: ExportSource, fields: readonly FieldDefinition[]): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const f of EXPORT_FIELDS.filter((candidate) => fields.includes(candidate))) {
    let value = fieldValue(row, f.index);
    if (f.kind === 'money' && value !== null) value = new Decimal(value as number).dividedBy(100).toNumber();
    if (f.parent === null) out[f.key] = value;
    else if (f.parent === 'bankVerification' && row.bankVerification === null) out.bankVerification = null;
    else (out[f.parent] ??= {})[f.key] = value;
  }
  return out;
}

/** The record's text written the plain way: JSON.stringify for every string, each field's value read on its own. */
function referenceText(row: ExportSource, fields: readonly FieldDefinition[]): string {
  const value = (f: FieldDefinition) => {
    const v = fieldValue(row, f.index);
    if (v === null) return 'null';
    if (f.kind === 'money') return centsToDecimal(v as number);
    return f.kind === 'text' || f.kind === 'timestamp' ? JSON.stringify(v) : String(v);
  };
  const parts: string[] = [];
  const selected = EXPORT_FIELDS.filter((f) => fields.includes(f));
  let i = 0;
  while (i < selected.length) {
    const f = selected[i]!;
    if (f.parent === null) {
      parts.push(`${JSON.stringify(f.key)}:${value(f)}`);
      i++;
      continue;
    }
    const group = selected.filter((g) => g.parent === f.parent);
    parts.push(
      f.parent === 'bankVerification' && row.bankVerification === null
        ? `${JSON.stringify(f.parent)}:null`
        : `${JSON.stringify(f.parent)}:{${group.map((g) => `${JSON.stringify(g.key)}:${value(g)}`).join(',')}}`,
    );
    i += group.length;
  }
  return `{${parts.join(',')}}`;
}

describe('jsonRecordWriter', () => {
  it('writes byte for byte what JSON.stringify writes for every value, escapes and lone surrogates included', () => {
    // Text made of what JSON escapes (quote, backslash, controls, lone surrogates) and what it does not.
    const escapable = fc.string({ unit: fc.constantFrom('"', '\\', '\u0000', '\n', '\u001f', '\ud800', '\udc00', '\ud83d\ude00', '\u2028', '\u007f', 'a', 'é'), maxLength: 8 });
    const rows = fc
      .tuple(exportSource, escapable, fc.option(escapable, { nil: null }))
      .map(([row, name, email]) => ({ ...row, applicantName: name, applicantEmail: email }));
    fc.assert(
      fc.property(fc.oneof(exportSource, rows), fc.subarray([...EXPORT_FIELDS], { minLength: 1 }), (row, fields) => {
        expect(jsonRecordWriter(fields)(row)).toBe(referenceText(row, fields));
      }),
      { numRuns: 500 },
    );
  });

  it('writes JSON that parses to the record, for any row and any selection of fields', () => {
    fc.assert(
      fc.property(exportSource, fc.subarray([...EXPORT_FIELDS], { minLength: 1 }), (row, fields) => {
        const text = jsonRecordWriter(fields)(row);
        expect(JSON.parse(text)).toEqual(reference(row, fields));
      }),
    );
  });

  it('keeps the record’s own key order whatever the order of the selection', () => {
    const pick = (...names: string[]) => names.map((name) => EXPORT_FIELDS.find((f) => f.name === name)!);
    const write = jsonRecordWriter(pick('bankVerification.verified', 'applicant.amount', 'mortgageId', 'applicant.name'));
    const row = fc.sample(exportSource, { numRuns: 1, seed: 7 })[0]!;
    expect(Object.keys(JSON.parse(write({ ...row, bankVerification: { verified: false, accountMask: '0000', checkedAt: row.createdAt } })))).toEqual([
      'mortgageId',
      'applicant',
      'bankVerification',
    ]);
    expect(write({ ...row, bankVerification: null })).toContain('"bankVerification":null');
  });

  it('writes amounts as exact JSON numbers in major units', () => {
    const amount = EXPORT_FIELDS.filter((f) => f.name === 'applicant.amount');
    const row = fc.sample(exportSource, { numRuns: 1, seed: 1 })[0]!;
    expect(jsonRecordWriter(amount)({ ...row, amountCents: 35_000_050 })).toBe('{"applicant":{"amount":350000.5}}');
    expect(jsonRecordWriter(amount)({ ...row, amountCents: 1 })).toBe('{"applicant":{"amount":0.01}}');
  });
});
