/**
 * One application as a LAR row (FIG 2026 section 3): 110 fields, each the FIG's code for what the
 * service holds, the FIG's "NA" where the FIG makes the field not applicable to this row, or,
 * where the service does not hold what the field asks and the FIG allows no "not applicable",
 * left blank and named in the row's `missing` list (the lender completes those by hand; the
 * blanks fail the FIG's "cannot be left blank" edits until then, on purpose).
 *
 * What the service holds by construction: it takes applications directly (no preapprovals:
 * Preapproval 2), for one natural-person applicant (the co-applicant fields report "no
 * co-applicant": 5, 8, 5, 4, 9999), for closed-end, fixed-rate, fully amortizing loans without a
 * prepayment penalty (Introductory Rate Period and Prepayment Penalty Term NA; Balloon,
 * Interest-Only, Negative Amortization, Other Non-amortizing Features 2; Reverse Mortgage and
 * Open-End Line of Credit 2), for a consumer purpose (Business or Commercial Purpose 2).
 */
import {
  DENIAL_REASON_CODES,
  ETHNICITY_CODES,
  LIEN_STATUS_CODES,
  LOAN_PURPOSE_CODES,
  LOAN_TYPE_CODES,
  OCCUPANCY_CODES,
  RACE_CODES,
  SEX_CODES,
  constructionMethodOf,
  impliedTotalUnits,
} from './codes.ts';
import { centsToDecimal } from '../exports/amounts.ts';
import { LAR_KEYS, type LarKey } from './layout.ts';
import { figDate, type FinalAction } from './reportable.ts';
import type { LarApplication } from './source.ts';
import { uliOf } from './uli.ts';

export interface LarRow {
  /** The 110 fields in file order. */
  fields: string[];
  /** Fields left blank because the service does not hold them, in file order. */
  missing: LarKey[];
}

/** The decision's debt-to-income ratio, in percent, when one was computed. */
export interface LarDecisionFacts {
  debtToIncomePercent: number | null;
}

/** Dollars as an exact decimal (the FIG's amounts are numbers in dollars). */
function dollars(cents: number): string {
  return centsToDecimal(cents);
}

/** Income in thousands of dollars, rounded to the nearest thousand (FIG field 57). */
function incomeThousands(cents: number): string {
  return String(Math.round(cents / 100_000));
}

/** Free text inside a pipe-delimited line: no pipes, no line breaks or other controls. */
export function fieldText(text: string): string {
  return text.replace(/[|\u0000-\u001f\u007f]/g, ' ').trim();
}

export function larRowOf(app: LarApplication, lei: string | null, final: FinalAction, facts: LarDecisionFacts): LarRow {
  const values = {} as Record<LarKey, string>;
  const missing = new Set<LarKey>();
  const set = (key: LarKey, value: string) => (values[key] = value);
  const owe = (key: LarKey) => {
    values[key] = '';
    missing.add(key);
  };
  const setOrOwe = (key: LarKey, value: string | null | undefined) => (value === null || value === undefined ? owe(key) : set(key, value));
  const { action } = final;
  const originated = action === '1';
  const withdrawn = action === '4';

  set('recordId', '2');
  setOrOwe('lei', lei?.toUpperCase());
  setOrOwe('uli', lei ? uliOf(lei, app.mortgageId) : null);
  set('applicationDate', figDate(app.submittedAt ?? final.at));
  setOrOwe('loanType', app.loanType && LOAN_TYPE_CODES[app.loanType]);
  setOrOwe('loanPurpose', app.loanPurpose && LOAN_PURPOSE_CODES[app.loanPurpose]);
  set('preapproval', '2');
  const construction = app.propertyType && constructionMethodOf(app.propertyType);
  setOrOwe('constructionMethod', construction);
  setOrOwe('occupancy', app.occupancy && OCCUPANCY_CODES[app.occupancy]);
  set('loanAmount', dollars(app.amountCents));
  set('actionTaken', action);
  set('actionTakenDate', figDate(final.at));

  const address = app.propertyAddress;
  if (address) {
    set('street', fieldText(address.street));
    set('city', fieldText(address.city));
    set('state', address.state);
    set('zip', address.zip);
    setOrOwe('county', address.county);
    setOrOwe('censusTract', address.censusTract);
  } else {
    // Reg C comment 4(a)(9)(i)-3: an address not known is reported NA; an origination has one.
    for (const key of ['street', 'city', 'state', 'zip', 'county', 'censusTract'] as const) {
      if (originated) owe(key);
      else set(key, 'NA');
    }
  }

  const demographics = app.demographics;
  const listed = (prefix: 'eth' | 'race' | 'coEth' | 'coRace', codes: readonly string[]) => {
    for (let i = 0; i < 5; i++) set(`${prefix}${i + 1}` as LarKey, codes[i] ?? '');
  };
  if (demographics) {
    listed('eth', demographics.ethnicity.map((e) => ETHNICITY_CODES[e]));
    listed('race', demographics.race.map((r) => RACE_CODES[r]));
    const observed = demographics.collectedOnVisualObservation ? '1' : '2';
    set('ethObserved', observed);
    set('raceObserved', observed);
    set('sex', SEX_CODES[demographics.sex]);
    set('sexObserved', observed);
    setOrOwe('age', demographics.age === null ? null : String(demographics.age));
  } else {
    listed('eth', []);
    listed('race', []);
    for (const key of ['eth1', 'race1', 'ethObserved', 'raceObserved', 'sex', 'sexObserved', 'age'] as const) owe(key);
  }
  for (const key of ['ethOther', 'raceNative', 'raceAsian', 'racePacific'] as const) set(key, '');
  // No co-applicant: the FIG's codes for "no co-applicant".
  listed('coEth', ['5']);
  listed('coRace', ['8']);
  for (const key of ['coEthOther', 'coRaceNative', 'coRaceAsian', 'coRacePacific'] as const) set(key, '');
  set('coEthObserved', '4');
  set('coRaceObserved', '4');
  set('coSex', '5');
  set('coSexObserved', '4');
  set('coAge', '9999');

  setOrOwe('income', app.annualIncomeCents === null ? null : incomeThousands(app.annualIncomeCents));
  if (originated) owe('purchaserType');
  else set('purchaserType', '0');
  if (action === '1' || action === '2') owe('rateSpread');
  else set('rateSpread', 'NA');
  if (originated) owe('hoepa');
  else set('hoepa', '3');
  setOrOwe('lienStatus', app.lienStatus && LIEN_STATUS_CODES[app.lienStatus]);

  // A withdrawn application reports no score (V663); an application without one relied on none.
  if (withdrawn || app.creditScore === null) {
    set('creditScore', '8888');
    set('scoreModel', '9');
  } else {
    set('creditScore', String(app.creditScore));
    owe('scoreModel');
  }
  set('scoreModelOther', '');
  // V664: a withdrawn application reports the co-applicant's score as not applicable too.
  set('coCreditScore', withdrawn ? '8888' : '9999');
  set('coScoreModel', withdrawn ? '9' : '10');
  set('coScoreModelOther', '');

  denialFields(app, action, set, owe);

  if (originated) {
    owe('totalLoanCosts');
    set('totalPointsAndFees', 'NA');
    owe('originationCharges');
    owe('discountPoints');
    owe('lenderCredits');
  } else {
    for (const key of ['totalLoanCosts', 'totalPointsAndFees', 'originationCharges', 'discountPoints', 'lenderCredits'] as const) set(key, 'NA');
  }
  if (originated || action === '2') owe('interestRate');
  else set('interestRate', 'NA');
  set('prepaymentPenaltyTerm', 'NA');
  if (withdrawn) set('dti', 'NA');
  else setOrOwe('dti', facts.debtToIncomePercent === null ? null : String(facts.debtToIncomePercent));
  if (withdrawn) set('cltv', 'NA');
  else owe('cltv');
  set('loanTerm', String(app.termYears * 12));
  set('introRatePeriod', 'NA');
  for (const key of ['balloon', 'interestOnly', 'negativeAmortization', 'otherNonAmortizing'] as const) set(key, '2');
  if (withdrawn) set('propertyValue', 'NA');
  else setOrOwe('propertyValue', app.propertyValueCents === null ? null : dollars(app.propertyValueCents));
  // V689-3 / V690-3: a site-built home reports the manufactured-home fields as not applicable.
  if (construction === '1') {
    set('mhSecuredPropertyType', '3');
    set('mhLandInterest', '5');
  } else {
    owe('mhSecuredPropertyType');
    owe('mhLandInterest');
  }
  const units = app.totalUnits ?? impliedTotalUnits(app.propertyType);
  setOrOwe('totalUnits', units === null ? null : String(units));
  if (units !== null && units < 5) set('multifamilyAffordableUnits', 'NA');
  else owe('multifamilyAffordableUnits');
  owe('submissionOfApplication');
  owe('initiallyPayable');
  owe('nmlsrId');
  owe('aus1');
  for (const key of ['aus2', 'aus3', 'aus4', 'aus5', 'ausOther'] as const) set(key, '');
  owe('ausResult1');
  for (const key of ['ausResult2', 'ausResult3', 'ausResult4', 'ausResult5', 'ausResultOther'] as const) set(key, '');
  set('reverseMortgage', '2');
  set('openEndLineOfCredit', '2');
  set('businessPurpose', '2');

  return { fields: LAR_KEYS.map((key) => values[key]), missing: LAR_KEYS.filter((key) => missing.has(key)) };
}

function denialFields(app: LarApplication, action: string, set: (key: LarKey, value: string) => void, owe: (key: LarKey) => void): void {
  const keys = ['denial1', 'denial2', 'denial3', 'denial4'] as const;
  if (action !== '3') {
    set('denial1', '10');
    for (const key of keys.slice(1)) set(key, '');
    set('denialOther', '');
    return;
  }
  const reasons = app.denialReasons.slice(0, 4);
  keys.forEach((key, i) => {
    const reason = reasons[i];
    if (reason) set(key, DENIAL_REASON_CODES[reason.reason]);
    else if (i === 0) owe(key);
    else set(key, '');
  });
  const other = reasons.find((r) => r.reason === 'other');
  set('denialOther', other?.otherText ? fieldText(other.otherText).slice(0, 255) : '');
}
