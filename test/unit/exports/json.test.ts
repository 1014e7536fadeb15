import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXPORT_FIELDS, type ExportSource, type FieldDefinition } from '../../../src/domain/exports/fields.ts';
import { jsonRecordWriter } from '../../../src/domain/exports/json.ts';
import { exportSource } from './arbitraries.ts';

/** The record built the plain way (objects, decimal.js for amounts), to compare the fast writer against. */
function reference(row: ExportSource, fields: readonly FieldDefinition[]): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const f of EXPORT_FIELDS.filter((candidate) => fields.includes(candidate))) {
    let value = f.get(row);
    if (f.kind === 'money' && value !== null) value = new Decimal(value as number).dividedBy(100).toNumber();
    if (f.parent === null) out[f.key] = value;
    else if (f.parent === 'bankVerification' && row.bankVerification === null) out.bankVerification = null;
    else (out[f.parent] ??= {})[f.key] = value;
  }
  return out;
}

describe('jsonRecordWriter', () => {
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
