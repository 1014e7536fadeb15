/**
 * The service's application data and the HMDA codes they are reported as (FIG 2026, section 3,
 * "Loan/Application Register"). The application-data names are those of the agreed wire format
 * (docs/partners/applications.md); the codes are the FIG's.
 */
import { STATE_FIPS as APPLICATION_STATE_FIPS } from '../applications/applicationData.ts';

export type LoanPurpose = 'purchase' | 'home_improvement' | 'refinancing' | 'cash_out_refinancing' | 'other';
export type Occupancy = 'principal_residence' | 'second_residence' | 'investment_property';
export type PropertyType = 'single_family' | 'condominium' | 'two_to_four_units' | 'manufactured_home' | 'multifamily';
export type LienStatus = 'first_lien' | 'subordinate_lien';
export type LoanType = 'conventional' | 'fha' | 'va' | 'usda';

export type Ethnicity =
  | 'hispanic_or_latino'
  | 'mexican'
  | 'puerto_rican'
  | 'cuban'
  | 'other_hispanic_or_latino'
  | 'not_hispanic_or_latino'
  | 'information_not_provided';

export type Race =
  | 'american_indian_or_alaska_native'
  | 'asian'
  | 'asian_indian'
  | 'chinese'
  | 'filipino'
  | 'japanese'
  | 'korean'
  | 'vietnamese'
  | 'other_asian'
  | 'black_or_african_american'
  | 'native_hawaiian_or_other_pacific_islander'
  | 'native_hawaiian'
  | 'guamanian_or_chamorro'
  | 'samoan'
  | 'other_pacific_islander'
  | 'white'
  | 'information_not_provided';

export type Sex = 'male' | 'female' | 'male_and_female' | 'information_not_provided';

export const LOAN_PURPOSE_CODES: Readonly<Record<LoanPurpose, string>> = {
  purchase: '1',
  home_improvement: '2',
  refinancing: '31',
  cash_out_refinancing: '32',
  other: '4',
};

export const OCCUPANCY_CODES: Readonly<Record<Occupancy, string>> = {
  principal_residence: '1',
  second_residence: '2',
  investment_property: '3',
};

export const LIEN_STATUS_CODES: Readonly<Record<LienStatus, string>> = { first_lien: '1', subordinate_lien: '2' };

export const LOAN_TYPE_CODES: Readonly<Record<LoanType, string>> = { conventional: '1', fha: '2', va: '3', usda: '4' };

/** Construction Method: 2 manufactured home, 1 site-built (everything else the service knows). */
export function constructionMethodOf(type: PropertyType): string {
  return type === 'manufactured_home' ? '2' : '1';
}

/** Total Units when the application gives none: a single dwelling for the one-unit types, else unknown. */
export function impliedTotalUnits(type: PropertyType | null): number | null {
  return type === 'single_family' || type === 'condominium' || type === 'manufactured_home' ? 1 : null;
}

export const ETHNICITY_CODES: Readonly<Record<Ethnicity, string>> = {
  hispanic_or_latino: '1',
  mexican: '11',
  puerto_rican: '12',
  cuban: '13',
  other_hispanic_or_latino: '14',
  not_hispanic_or_latino: '2',
  information_not_provided: '3',
};

export const RACE_CODES: Readonly<Record<Race, string>> = {
  american_indian_or_alaska_native: '1',
  asian: '2',
  asian_indian: '21',
  chinese: '22',
  filipino: '23',
  japanese: '24',
  korean: '25',
  vietnamese: '26',
  other_asian: '27',
  black_or_african_american: '3',
  native_hawaiian_or_other_pacific_islander: '4',
  native_hawaiian: '41',
  guamanian_or_chamorro: '42',
  samoan: '43',
  other_pacific_islander: '44',
  white: '5',
  information_not_provided: '6',
};

export const SEX_CODES: Readonly<Record<Sex, string>> = {
  male: '1',
  female: '2',
  information_not_provided: '3',
  male_and_female: '6',
};

/**
 * Reasons for Denial (FIG field 68–71). `other` (9) needs the free-form text of field 72;
 * 10 (not applicable) is what an application that was not denied reports.
 */
export type DenialReason =
  | 'debt_to_income_ratio'
  | 'employment_history'
  | 'credit_history'
  | 'collateral'
  | 'insufficient_cash'
  | 'unverifiable_information'
  | 'credit_application_incomplete'
  | 'mortgage_insurance_denied'
  | 'other';

export const DENIAL_REASON_CODES: Readonly<Record<DenialReason, string>> = {
  debt_to_income_ratio: '1',
  employment_history: '2',
  credit_history: '3',
  collateral: '4',
  insufficient_cash: '5',
  unverifiable_information: '6',
  credit_application_incomplete: '7',
  mortgage_insurance_denied: '8',
  other: '9',
};

/** A reason for denial as the LAR reports it: code 9 carries its words (field 72, up to 255 characters). */
export interface LarDenialReason {
  reason: DenialReason;
  otherText?: string;
}

/**
 * The USPS codes the FIG accepts in State fields, each with its FIPS state code (the application
 * data's table). Looked up with text read from a file, so this copy has no prototype: `in` finds
 * the codes and nothing else.
 */
export const STATE_FIPS: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, APPLICATION_STATE_FIPS);
