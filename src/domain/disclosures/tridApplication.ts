/**
 * When an application becomes an "application" for TRID (12 CFR 1026.2(a)(3)(ii)): the consumer's
 * name, income and social security number (to obtain a credit report), the property's address, an
 * estimate of its value and the loan amount sought. The service holds no social security number;
 * a credit score stands in for the credit report it would obtain (issue 44). From that moment the
 * Loan Estimate's clock runs.
 */

/** The six pieces, by the application's field (JSON Pointer in the application as the API shows it). */
export const TRID_PIECES = ['/applicant/name', '/applicant/annualIncome', '/propertyAddress', '/propertyValue', '/applicant/amount', '/applicant/creditScore'] as const;

export type TridPiece = (typeof TRID_PIECES)[number];

export interface TridFacts {
  applicantName: string | null;
  annualIncome: number | null;
  /** The property's address, or null when not given (its fields are validated where it is written). */
  propertyAddress: unknown;
  propertyValue: number | null;
  amount: number | null;
  creditScore: number | null;
}

/** The pieces still missing, in the order of 1026.2(a)(3)(ii); empty when the application is a TRID application. */
export function missingTridPieces(facts: TridFacts): TridPiece[] {
  const present: Record<TridPiece, boolean> = {
    '/applicant/name': typeof facts.applicantName === 'string' && facts.applicantName.trim() !== '',
    '/applicant/annualIncome': facts.annualIncome !== null && facts.annualIncome !== undefined,
    '/propertyAddress': facts.propertyAddress !== null && facts.propertyAddress !== undefined,
    '/propertyValue': facts.propertyValue !== null && facts.propertyValue !== undefined,
    '/applicant/amount': facts.amount !== null && facts.amount !== undefined,
    '/applicant/creditScore': facts.creditScore !== null && facts.creditScore !== undefined,
  };
  return TRID_PIECES.filter((piece) => !present[piece]);
}
