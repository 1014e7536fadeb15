import { describe, expect, it } from 'vitest';
import { missingTridPieces, TRID_PIECES, type TridFacts } from '../../../../src/domain/disclosures/tridApplication.ts';

const complete: TridFacts = {
  applicantName: 'Jane Doe',
  annualIncome: 120_000,
  propertyAddress: { street: '1 Main St', city: 'Springfield', state: 'IL', zip: '62701', county: null, censusTract: null },
  propertyValue: 450_000,
  amount: 350_000,
  creditScore: 742,
};

describe('a TRID application (1026.2(a)(3)(ii), a credit score standing in for the SSN)', () => {
  it('is one when all six pieces are there', () => {
    expect(missingTridPieces(complete)).toEqual([]);
  });

  it.each([
    ['applicantName', '/applicant/name'],
    ['annualIncome', '/applicant/annualIncome'],
    ['propertyAddress', '/propertyAddress'],
    ['propertyValue', '/propertyValue'],
    ['amount', '/applicant/amount'],
    ['creditScore', '/applicant/creditScore'],
  ] as const)('is not one without %s (%s)', (field, pointer) => {
    expect(missingTridPieces({ ...complete, [field]: null })).toEqual([pointer]);
  });

  it('a blank name is no name; an income of 0 is an income', () => {
    expect(missingTridPieces({ ...complete, applicantName: '   ' })).toEqual(['/applicant/name']);
    expect(missingTridPieces({ ...complete, annualIncome: 0 })).toEqual([]);
  });

  it('lists every missing piece in the rule’s order', () => {
    const empty: TridFacts = { applicantName: null, annualIncome: null, propertyAddress: null, propertyValue: null, amount: null, creditScore: null };
    expect(missingTridPieces(empty)).toEqual([...TRID_PIECES]);
  });
});
