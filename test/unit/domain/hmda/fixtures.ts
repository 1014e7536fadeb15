import type { LarApplication, LenderIdentity } from '../../../../src/domain/hmda/source.ts';
import { uliCheckDigits } from '../../../../src/domain/hmda/uli.ts';

/** An LEI with valid ISO 17442 check digits (the same MOD 97-10 as the ULI's). */
export const LEI = '549300HMDATESTLEI0' + uliCheckDigits('549300HMDATESTLEI0');

export const LENDER: LenderIdentity = {
  name: 'Example Mortgage Bank',
  address: { street: '1 Main Street', city: 'Springfield', state: 'IL', zip: '62701' },
  lei: LEI,
  contact: { name: 'Pat Compliance', phone: '217-555-0100', email: 'hmda@example.com' },
  taxId: '12-3456789',
  agencyCode: 9,
};

/** A submitted application with every field the service can hold given, approved on 10 March 2026. */
export function application(overrides: Partial<LarApplication> = {}): LarApplication {
  return {
    mortgageId: 'mtg-01jkq8m2x3y4z5a6b7c8d9e0fa',
    status: 'approved',
    submittedAt: '2026-03-01T15:00:00.000Z',
    decidedAt: '2026-03-10T09:30:00.000Z',
    withdrawnAt: null,
    updatedAt: '2026-03-10T09:30:00.000Z',
    amountCents: 32_000_000,
    annualIncomeCents: 9_550_000,
    creditScore: 720,
    termYears: 30,
    propertyValueCents: 40_000_000,
    propertyAddress: { street: '12 Elm Street', city: 'Springfield', state: 'IL', zip: '62704', county: '17167', censusTract: '17167000100' },
    loanPurpose: 'purchase',
    occupancy: 'principal_residence',
    propertyType: 'single_family',
    totalUnits: null,
    lienStatus: 'first_lien',
    loanType: 'conventional',
    demographics: {
      ethnicity: ['not_hispanic_or_latino'],
      race: ['white'],
      sex: 'female',
      age: 41,
      collectedOnVisualObservation: false,
    },
    denialReasons: [],
    ...overrides,
  };
}
