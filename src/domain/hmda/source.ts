/**
 * What a LAR is made from, with no storage in sight: one application as the service holds it
 * (amounts in integer cents, times in ISO 8601) and the lender's identity from the account
 * settings.
 */
import type { ApplicationStatus } from '../applications/stateMachine.ts';
import type {
  Ethnicity,
  LarDenialReason,
  LienStatus,
  LoanPurpose,
  LoanType,
  Occupancy,
  PropertyType,
  Race,
  Sex,
} from './codes.ts';

interface PropertyAddress {
  street: string;
  city: string;
  state: string;
  zip: string;
  /** Five-digit FIPS state and county code. */
  county: string | null;
  /** Eleven-digit census tract. */
  censusTract: string | null;
}

/** As the applicant chose to give them (Reg C 1003.4(a)(10)(i), appendix B). */
interface Demographics {
  ethnicity: readonly Ethnicity[];
  race: readonly Race[];
  sex: Sex;
  age: number | null;
  collectedOnVisualObservation: boolean;
}

export interface LarApplication {
  mortgageId: string;
  status: ApplicationStatus;
  submittedAt: string | null;
  decidedAt: string | null;
  withdrawnAt: string | null;
  updatedAt: string;
  amountCents: number;
  annualIncomeCents: number | null;
  creditScore: number | null;
  termYears: number;
  propertyValueCents: number | null;
  propertyAddress: PropertyAddress | null;
  loanPurpose: LoanPurpose | null;
  occupancy: Occupancy | null;
  propertyType: PropertyType | null;
  totalUnits: number | null;
  lienStatus: LienStatus | null;
  loanType: LoanType | null;
  demographics: Demographics | null;
  /** The reasons of a denial, at most four (empty when the application was not denied or none is known). */
  denialReasons: readonly LarDenialReason[];
}

interface LenderAddress {
  street: string;
  city: string;
  state: string;
  zip: string;
}

/** The lender's identity for the transmittal sheet; any part may be missing from the settings. */
export interface LenderIdentity {
  name: string | null;
  address: LenderAddress | null;
  lei: string | null;
  contact: { name: string; phone: string; email: string } | null;
  taxId: string | null;
  agencyCode: number | null;
}
