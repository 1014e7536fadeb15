/**
 * The application's property and loan data and the applicant's demographic information (issue 44),
 * as the regulatory outputs read them: the adverse action notice, the Loan Estimate and the HMDA
 * register. The contract checks each value's form; this module holds the rules that span fields,
 * which a JSON Schema states poorly, and returns them as field issues (pointer and message).
 */
import type { components } from '../../../generated/api.d.ts';

export type PropertyAddress = components['schemas']['PropertyAddress'];
export type PropertyAddressInput = components['schemas']['PropertyAddressInput'];
export type Demographics = components['schemas']['Demographics'];
export type DemographicsInput = components['schemas']['DemographicsInput'];
export type UsStateCode = components['schemas']['UsStateCode'];

/** The application's property and loan fields (every one null until given). */
export interface ApplicationData {
  propertyAddress: PropertyAddress | null;
  loanPurpose: components['schemas']['LoanPurpose'];
  occupancy: components['schemas']['Occupancy'];
  propertyType: components['schemas']['PropertyType'];
  totalUnits: number | null;
  lienStatus: components['schemas']['LienStatus'];
  loanType: components['schemas']['LoanType'];
}

export const EMPTY_APPLICATION_DATA: ApplicationData = {
  propertyAddress: null,
  loanPurpose: null,
  occupancy: null,
  propertyType: null,
  totalUnits: null,
  lienStatus: null,
  loanType: null,
};

interface Issue {
  pointer: string;
  message: string;
}

/**
 * The two-digit FIPS code of each state, DC and territory (FIPS 5-2 / INCITS 38): a county code
 * (5 digits) and a census tract (11 digits) begin with their state's, so an address whose county
 * lies in another state is refused rather than reported wrong on the HMDA register.
 */
export const STATE_FIPS: Readonly<Record<UsStateCode, string>> = {
  AL: '01', AK: '02', AZ: '04', AR: '05', CA: '06', CO: '08', CT: '09', DE: '10', DC: '11', FL: '12',
  GA: '13', HI: '15', ID: '16', IL: '17', IN: '18', IA: '19', KS: '20', KY: '21', LA: '22', ME: '23',
  MD: '24', MA: '25', MI: '26', MN: '27', MS: '28', MO: '29', MT: '30', NE: '31', NV: '32', NH: '33',
  NJ: '34', NM: '35', NY: '36', NC: '37', ND: '38', OH: '39', OK: '40', OR: '41', PA: '42', RI: '44',
  SC: '45', SD: '46', TN: '47', TX: '48', UT: '49', VT: '50', VA: '51', WA: '53', WV: '54', WI: '55',
  WY: '56', AS: '60', GU: '66', MP: '69', PR: '72', VI: '78',
};

/** The address as stored and shown: every field present, the optional ones null. */
export function toPropertyAddress(input: PropertyAddressInput): PropertyAddress {
  return { street: input.street, city: input.city, state: input.state, zip: input.zip, county: input.county ?? null, censusTract: input.censusTract ?? null };
}

/** A county or tract that lies in another state than the address's, or a tract outside its county. */
export function addressIssues(address: PropertyAddress, pointer = '/propertyAddress'): Issue[] {
  const issues: Issue[] = [];
  const fips = STATE_FIPS[address.state];
  if (address.county !== null && !address.county.startsWith(fips)) {
    issues.push({ pointer: `${pointer}/county`, message: `must be a county of ${address.state} (its FIPS code begins with ${fips})` });
  }
  if (address.censusTract !== null) {
    const within = address.county ?? fips;
    if (!address.censusTract.startsWith(within)) {
      issues.push({ pointer: `${pointer}/censusTract`, message: `must be a tract of ${address.county === null ? address.state : `county ${address.county}`} (it begins with ${within})` });
    }
  }
  return issues;
}

/**
 * Property type and unit count that contradict each other (HMDA reports both): a 2–4 unit
 * property has 2 to 4 units, a multifamily one 5 or more, a single-family one 1.
 */
export function unitIssues(data: Pick<ApplicationData, 'propertyType' | 'totalUnits'>): Issue[] {
  const { propertyType, totalUnits } = data;
  if (propertyType === null || totalUnits === null) return [];
  const bad =
    (propertyType === 'two_to_four_units' && (totalUnits < 2 || totalUnits > 4) && 'must be 2 to 4 for a two_to_four_units property') ||
    (propertyType === 'multifamily' && totalUnits < 5 && 'must be 5 or more for a multifamily property') ||
    (propertyType === 'single_family' && totalUnits !== 1 && 'must be 1 for a single_family property');
  return bad ? [{ pointer: '/totalUnits', message: bad }] : [];
}

/**
 * `information_not_provided` means the applicant gave nothing for that item, so it stands alone
 * in its list (the HMDA edits refuse it beside another value).
 */
export function demographicsIssues(input: DemographicsInput, pointer = '/demographics'): Issue[] {
  const issues: Issue[] = [];
  for (const field of ['ethnicity', 'race'] as const) {
    const values: readonly string[] = input[field];
    if (values.length > 1 && values.includes('information_not_provided')) {
      issues.push({ pointer: `${pointer}/${field}`, message: 'information_not_provided must be the only value when given' });
    }
  }
  return issues;
}

/** The demographics as stored and read back: every field present, age null when not given. */
export function toDemographics(input: DemographicsInput): Demographics {
  return {
    ethnicity: [...input.ethnicity],
    race: [...input.race],
    sex: input.sex,
    age: input.age ?? null,
    collectedOnVisualObservation: input.collectedOnVisualObservation,
  };
}
