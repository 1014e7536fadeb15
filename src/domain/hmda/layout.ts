/**
 * The record layouts of a HMDA file (FFIEC, "Filing Instructions Guide for HMDA Data Collected in
 * 2026", sections 2 and 3): the transmittal sheet (record 1, 15 fields) and the loan/application
 * register (record 2, 110 fields), each field in the FIG's order under the FIG's name (the name the
 * edits' messages and the HMDA platform use). The order was read from the CFPB's hmda-platform
 * (common/.../filing/lar/LarFieldMapping.scala and filing/ts/TsFieldMapping.scala), which
 * implements the FIG.
 *
 * Each field also has a short key for the code that builds and checks rows.
 */

/** [key, FIG name] for every LAR field, in file order. */
const LAR_LAYOUT = [
  ['recordId', 'Record Identifier'],
  ['lei', 'Legal Entity Identifier (LEI)'],
  ['uli', 'Universal Loan Identifier (ULI)'],
  ['applicationDate', 'Application Date'],
  ['loanType', 'Loan Type'],
  ['loanPurpose', 'Loan Purpose'],
  ['preapproval', 'Preapproval'],
  ['constructionMethod', 'Construction Method'],
  ['occupancy', 'Occupancy Type'],
  ['loanAmount', 'Loan Amount'],
  ['actionTaken', 'Action Taken'],
  ['actionTakenDate', 'Action Taken Date'],
  ['street', 'Street Address'],
  ['city', 'City'],
  ['state', 'State'],
  ['zip', 'Zip Code'],
  ['county', 'County'],
  ['censusTract', 'Census Tract'],
  ['eth1', 'Ethnicity of Applicant or Borrower: 1'],
  ['eth2', 'Ethnicity of Applicant or Borrower: 2'],
  ['eth3', 'Ethnicity of Applicant or Borrower: 3'],
  ['eth4', 'Ethnicity of Applicant or Borrower: 4'],
  ['eth5', 'Ethnicity of Applicant or Borrower: 5'],
  ['ethOther', 'Ethnicity of Applicant or Borrower: Free Form Text Field for Other Hispanic or Latino'],
  ['coEth1', 'Ethnicity of Co-Applicant or Co-Borrower: 1'],
  ['coEth2', 'Ethnicity of Co-Applicant or Co-Borrower: 2'],
  ['coEth3', 'Ethnicity of Co-Applicant or Co-Borrower: 3'],
  ['coEth4', 'Ethnicity of Co-Applicant or Co-Borrower: 4'],
  ['coEth5', 'Ethnicity of Co-Applicant or Co-Borrower: 5'],
  ['coEthOther', 'Ethnicity of Co-Applicant or Co-Borrower: Free Form Text Field for Other Hispanic or Latino'],
  ['ethObserved', 'Ethnicity of Applicant or Borrower Collected on the Basis of Visual Observation or Surname'],
  ['coEthObserved', 'Ethnicity of Co-Applicant or Co-Borrower Collected on the Basis of Visual Observation or Surname'],
  ['race1', 'Race of Applicant or Borrower: 1'],
  ['race2', 'Race of Applicant or Borrower: 2'],
  ['race3', 'Race of Applicant or Borrower: 3'],
  ['race4', 'Race of Applicant or Borrower: 4'],
  ['race5', 'Race of Applicant or Borrower: 5'],
  ['raceNative', 'Race of Applicant or Borrower: Free Form Text Field for American Indian or Alaska Native Enrolled or Principal Tribe'],
  ['raceAsian', 'Race of Applicant or Borrower: Free Form Text Field for Other Asian'],
  ['racePacific', 'Race of Applicant or Borrower: Free Form Text Field for Other Pacific Islander'],
  ['coRace1', 'Race of Co-Applicant or Co-Borrower: 1'],
  ['coRace2', 'Race of Co-Applicant or Co-Borrower: 2'],
  ['coRace3', 'Race of Co-Applicant or Co-Borrower: 3'],
  ['coRace4', 'Race of Co-Applicant or Co-Borrower: 4'],
  ['coRace5', 'Race of Co-Applicant or Co-Borrower: 5'],
  ['coRaceNative', 'Race of Co-Applicant or Co-Borrower: Free Form Text Field for American Indian or Alaska Native Enrolled or Principal Tribe'],
  ['coRaceAsian', 'Race of Co-Applicant or Co-Borrower: Free Form Text Field for Other Asian'],
  ['coRacePacific', 'Race of Co-Applicant or Co-Borrower: Free Form Text Field for Other Pacific Islander'],
  ['raceObserved', 'Race of Applicant or Borrower Collected on the Basis of Visual Observation or Surname'],
  ['coRaceObserved', 'Race of Co-Applicant or Co-Borrower Collected on the Basis of Visual Observation or Surname'],
  ['sex', 'Sex of Applicant or Borrower'],
  ['coSex', 'Sex of Co-Applicant or Co-Borrower'],
  ['sexObserved', 'Sex of Applicant or Borrower Collected on the Basis of Visual Observation or Surname'],
  ['coSexObserved', 'Sex of Co-Applicant or Co-Borrower Collected on the Basis of Visual Observation or Surname'],
  ['age', 'Age of Applicant or Borrower'],
  ['coAge', 'Age of Co-Applicant or Co-Borrower'],
  ['income', 'Income'],
  ['purchaserType', 'Type of Purchaser'],
  ['rateSpread', 'Rate Spread'],
  ['hoepa', 'HOEPA Status'],
  ['lienStatus', 'Lien Status'],
  ['creditScore', 'Credit Score of Applicant or Borrower'],
  ['coCreditScore', 'Credit Score of Co-Applicant or Co-Borrower'],
  ['scoreModel', 'Applicant or Borrower, Name and Version of Credit Scoring Model'],
  ['scoreModelOther', 'Applicant or Borrower, Name and Version of Credit Scoring Model: Conditional Free Form Text Field for Code 8'],
  ['coScoreModel', 'Co-Applicant or Co-Borrower, Name and Version of Credit Scoring Model'],
  ['coScoreModelOther', 'Co-Applicant or Co-Borrower, Name and Version of Credit Scoring Model: Conditional Free Form Text Field for Code 8'],
  ['denial1', 'Reason for Denial: 1'],
  ['denial2', 'Reason for Denial: 2'],
  ['denial3', 'Reason for Denial: 3'],
  ['denial4', 'Reason for Denial: 4'],
  ['denialOther', 'Reason for Denial: Conditional Free Form Text Field for Code 9'],
  ['totalLoanCosts', 'Total Loan Costs'],
  ['totalPointsAndFees', 'Total Points and Fees'],
  ['originationCharges', 'Origination Charges'],
  ['discountPoints', 'Discount Points'],
  ['lenderCredits', 'Lender Credits'],
  ['interestRate', 'Interest Rate'],
  ['prepaymentPenaltyTerm', 'Prepayment Penalty Term'],
  ['dti', 'Debt-to-Income Ratio'],
  ['cltv', 'Combined Loan-to-Value Ratio'],
  ['loanTerm', 'Loan Term'],
  ['introRatePeriod', 'Introductory Rate Period'],
  ['balloon', 'Balloon Payment'],
  ['interestOnly', 'Interest-Only Payments'],
  ['negativeAmortization', 'Negative Amortization'],
  ['otherNonAmortizing', 'Other Non-amortizing Features'],
  ['propertyValue', 'Property Value'],
  ['mhSecuredPropertyType', 'Manufactured Home Secured Property Type'],
  ['mhLandInterest', 'Manufactured Home Land Property Interest'],
  ['totalUnits', 'Total Units'],
  ['multifamilyAffordableUnits', 'Multifamily Affordable Units'],
  ['submissionOfApplication', 'Submission of Application'],
  ['initiallyPayable', 'Initially Payable to Your Institution'],
  ['nmlsrId', 'NMLSR ID'],
  ['aus1', 'Automated Underwriting System: 1'],
  ['aus2', 'Automated Underwriting System: 2'],
  ['aus3', 'Automated Underwriting System: 3'],
  ['aus4', 'Automated Underwriting System: 4'],
  ['aus5', 'Automated Underwriting System: 5'],
  ['ausOther', 'Automated Underwriting System: Conditional Free Form Text Field for Code 5'],
  ['ausResult1', 'Automated Underwriting System Result: 1'],
  ['ausResult2', 'Automated Underwriting System Result: 2'],
  ['ausResult3', 'Automated Underwriting System Result: 3'],
  ['ausResult4', 'Automated Underwriting System Result: 4'],
  ['ausResult5', 'Automated Underwriting System Result: 5'],
  ['ausResultOther', 'Automated Underwriting System Result: Conditional Free Form Text Field for Code 16'],
  ['reverseMortgage', 'Reverse Mortgage'],
  ['openEndLineOfCredit', 'Open-End Line of Credit'],
  ['businessPurpose', 'Business or Commercial Purpose'],
] as const;

export type LarKey = (typeof LAR_LAYOUT)[number][0];

/** The LAR's keys in file order. */
export const LAR_KEYS: readonly LarKey[] = LAR_LAYOUT.map(([key]) => key);

/** The FIG's name of each LAR field. */
export const LAR_FIELD_NAMES: Readonly<Record<LarKey, string>> = Object.fromEntries(LAR_LAYOUT) as Record<LarKey, string>;

export const LAR_FIELD_COUNT = 110;

const TS_LAYOUT = [
  ['recordId', 'Record Identifier'],
  ['institutionName', 'Financial Institution Name'],
  ['calendarYear', 'Calendar Year'],
  ['calendarQuarter', 'Calendar Quarter'],
  ['contactName', "Contact Person's Name"],
  ['contactPhone', "Contact Person's Phone Number"],
  ['contactEmail', "Contact Person's E-mail Address"],
  ['contactStreet', "Contact Person's Office Street Address"],
  ['contactCity', "Contact Person's Office City"],
  ['contactState', "Contact Person's Office State"],
  ['contactZip', "Contact Person's Office Zip Code"],
  ['agencyCode', 'Federal Agency'],
  ['totalLines', 'Total Number of Entries Contained in Submission'],
  ['taxId', 'Federal Taxpayer Identification Number'],
  ['lei', 'Legal Entity Identifier (LEI)'],
] as const;

export type TsKey = (typeof TS_LAYOUT)[number][0];

export const TS_KEYS: readonly TsKey[] = TS_LAYOUT.map(([key]) => key);

export const TS_FIELD_NAMES: Readonly<Record<TsKey, string>> = Object.fromEntries(TS_LAYOUT) as Record<TsKey, string>;

export const TS_FIELD_COUNT = 15;

/** A LAR row as the edits read it: every field by key, as the text written to the file. */
export type LarRecord = Readonly<Record<LarKey, string>>;
export type TsRecord = Readonly<Record<TsKey, string>>;

export function larRecordOf(fields: readonly string[]): LarRecord {
  const record = {} as Record<LarKey, string>;
  LAR_KEYS.forEach((key, i) => (record[key] = fields[i] ?? ''));
  return record;
}

export function larFieldsOf(record: LarRecord): string[] {
  return LAR_KEYS.map((key) => record[key]);
}

export function tsRecordOf(fields: readonly string[]): TsRecord {
  const record = {} as Record<TsKey, string>;
  TS_KEYS.forEach((key, i) => (record[key] = fields[i] ?? ''));
  return record;
}

export function tsFieldsOf(record: TsRecord): string[] {
  return TS_KEYS.map((key) => record[key]);
}
