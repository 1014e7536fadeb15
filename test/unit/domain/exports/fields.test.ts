import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dereference } from '../../../../src/contract/spec.ts';
import { EXPORT_FIELDS, EXPORT_FIELD_NAMES, fieldValue, parseFieldList, type ExportSource } from '../../../../src/domain/exports/fields.ts';

const spec = dereference(JSON.parse(readFileSync(new URL('../../../../generated/openapi.json', import.meta.url), 'utf8')));

describe('the export field catalogue', () => {
  it('lists exactly the spec’s ExportFieldName values, in the spec’s order', () => {
    expect(EXPORT_FIELD_NAMES).toEqual(spec.components.schemas.ExportFieldName.enum);
  });

  it('names every leaf of the spec’s ExportRecord once, and nothing else', () => {
    const record = spec.components.schemas.ExportRecord.properties as Record<string, { properties?: Record<string, unknown> }>;
    const leaves = Object.entries(record).flatMap(([key, schema]) =>
      schema.properties ? Object.keys(schema.properties).map((inner) => `${key}.${inner}`) : [key],
    );
    expect([...EXPORT_FIELD_NAMES].sort()).toEqual(leaves.sort());
  });

  it('reads each field from the row property its name says, a missing bank verification as null', () => {
    const row: ExportSource = {
      mortgageId: 'mtg-1',
      status: 'approved',
      applicantName: 'Jane',
      applicantEmail: 'jane@example.test',
      amountCents: 1,
      annualIncomeCents: 2,
      monthlyDebtsCents: 3,
      creditScore: 4,
      termYears: 5,
      propertyValueCents: 6,
      currency: 'EUR',
      quoteId: 'qte-1',
      createdAt: 'created',
      submittedAt: 'submitted',
      decidedAt: 'decided',
      withdrawnAt: 'withdrawn',
      updatedAt: 'updated',
      bankVerification: { verified: false, accountMask: '6789', checkedAt: 'checked' },
    };
    const values = (source: ExportSource) => Object.fromEntries(EXPORT_FIELDS.map((field) => [field.name, fieldValue(source, field.index)]));
    const expected = {
      mortgageId: 'mtg-1',
      status: 'approved',
      'applicant.name': 'Jane',
      'applicant.email': 'jane@example.test',
      'applicant.amount': 1,
      'applicant.annualIncome': 2,
      'applicant.monthlyDebts': 3,
      'applicant.creditScore': 4,
      term: 5,
      propertyValue: 6,
      currency: 'EUR',
      quoteId: 'qte-1',
      createdAt: 'created',
      submittedAt: 'submitted',
      decidedAt: 'decided',
      withdrawnAt: 'withdrawn',
      updatedAt: 'updated',
      'bankVerification.verified': false,
      'bankVerification.accountMask': '6789',
      'bankVerification.checkedAt': 'checked',
    };
    expect(values(row)).toEqual(expected);
    expect(values({ ...row, bankVerification: null })).toEqual({
      ...expected,
      'bankVerification.verified': null,
      'bankVerification.accountMask': null,
      'bankVerification.checkedAt': null,
    });
    EXPORT_FIELDS.forEach((field, index) => expect(field.index).toBe(index));
    expect(() => fieldValue(row, EXPORT_FIELDS.length)).toThrow(RangeError);
  });

  it('keeps the fields of each parent object together (the JSON writer nests them in one pass)', () => {
    const parents = EXPORT_FIELDS.map((field) => field.parent);
    for (const parent of ['applicant', 'bankVerification'] as const) {
      const first = parents.indexOf(parent);
      const last = parents.lastIndexOf(parent);
      expect(parents.slice(first, last + 1).every((p) => p === parent)).toBe(true);
    }
  });
});

describe('parseFieldList', () => {
  it('accepts known names in the order given, ignoring blanks around them and repeats', () => {
    const parsed = parseFieldList(' applicant.amount ,mortgageId,applicant.amount');
    expect(parsed.ok && parsed.fields.map((field) => field.name)).toEqual(['applicant.amount', 'mortgageId']);
  });

  it('names every unknown entry, empty ones included, once', () => {
    expect(parseFieldList('mortgageId,amount,,applicant.ssn,amount')).toEqual({ ok: false, unknown: ['amount', '', 'applicant.ssn'] });
  });

  it('is case-sensitive, as the names are', () => {
    expect(parseFieldList('MortgageId')).toEqual({ ok: false, unknown: ['MortgageId'] });
  });
});
