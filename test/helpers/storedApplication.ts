/**
 * An application row for tests that store one straight through the repository (insertApplication)
 * rather than through the API: a draft with every optional field null; `fields` say what differs.
 */
import { EMPTY_APPLICATION_DATA } from '../../src/domain/applications/applicationData.ts';
import type { ApplicationFields } from '../../src/store/applications.ts';

const CREATED_AT = '2026-01-05T10:00:00.000Z';

export function storedApplication(fields: Pick<ApplicationFields, 'mortgageId' | 'accountId'> & Partial<ApplicationFields>): ApplicationFields {
  return {
    ...EMPTY_APPLICATION_DATA,
    status: 'draft',
    applicantName: 'Jane Doe',
    applicantEmail: null,
    amount: 350000,
    annualIncome: null,
    monthlyDebts: null,
    creditScore: null,
    termYears: 30,
    propertyValue: null,
    quoteId: null,
    decision: null,
    submittedAt: null,
    decidedAt: null,
    withdrawnAt: null,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    ...fields,
  };
}
