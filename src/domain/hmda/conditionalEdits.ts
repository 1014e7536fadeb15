/**
 * The FIG's validity edits that make a field not applicable because of another (a reverse
 * mortgage, an open-end line of credit, a business purpose, multifamily affordable units, a
 * non-natural person), and the credit score ranges by scoring model (V720). The service writes
 * the fields they start from (2 for the loan's features, NA for the affordable units of fewer than
 * five), so they pass on its rows; they catch a row the lender changed by hand. FIG 2026 section
 * 4.2; each edit's rule is its message in editMessages.ts.
 */
import { isNumber, isWhole, naOrExempt, oneOf, type LarEdit } from './editKit.ts';
import type { LarKey, LarRecord } from './layout.ts';

const reverse = (r: LarRecord) => r.reverseMortgage === '1';
const openEnd = (r: LarRecord) => r.openEndLineOfCredit === '1';
const business = (r: LarRecord) => r.businessPurpose === '1';
const affordableUnitsGiven = (r: LarRecord) => isNumber(r.multifamilyAffordableUnits);
const nonNatural = (r: LarRecord) => r.eth1 === '4' && r.race1 === '7' && r.sex === '4';
const coNonNatural = (r: LarRecord) => r.coEth1 === '4' && r.coRace1 === '7' && r.coSex === '4';
const noCoApplicant = (r: LarRecord) => r.coEth1 === '5' && r.coRace1 === '8' && r.coSex === '5';
const numberAtLeastZero = (v: string) => isNumber(v) && Number(v) >= 0;

/** `code`: when `when` holds, `field` must be NA or Exempt. */
const naWhen = (code: LarEdit['code'], field: LarKey, when: (r: LarRecord) => boolean): LarEdit => ({ code, fails: (r) => when(r) && !naOrExempt(r[field]) });

/** V720: a score below the model's floor (280 for the FICO and VantageScore 2.0/3.0 models, 300 for VantageScore 4.0 and the rest of 13–15). */
const scoreBelow = (code: LarEdit['code'], score: 'creditScore' | 'coCreditScore', model: 'scoreModel' | 'coScoreModel', models: string[], floor: number): LarEdit => ({
  code,
  fails: (r) => oneOf(r[model], models) && isNumber(r[score]) && Number(r[score]) < floor,
});

export const CONDITIONAL_EDITS: readonly LarEdit[] = [
  { code: 'V614-2', fails: (r) => affordableUnitsGiven(r) && r.preapproval !== '2' },
  { code: 'V652-2', fails: (r) => coNonNatural(r) && r.actionTaken !== '6' && r.coAge !== '8888' },
  naWhen('V654-2', 'income', affordableUnitsGiven),
  { code: 'V655-2', fails: (r) => coNonNatural(r) && r.actionTaken !== '6' && r.income !== 'NA' },
  naWhen('V657-3', 'rateSpread', reverse),
  { code: 'V668-2', fails: (r) => coNonNatural(r) && !oneOf(r.coCreditScore, ['8888', 'Exempt', '1111']) },
  { code: 'V672-2', fails: (r) => numberAtLeastZero(r.totalPointsAndFees) && r.totalLoanCosts !== 'NA' },
  naWhen('V672-3', 'totalLoanCosts', reverse),
  naWhen('V672-4', 'totalLoanCosts', openEnd),
  naWhen('V672-5', 'totalLoanCosts', business),
  naWhen('V673-3', 'totalPointsAndFees', reverse),
  naWhen('V673-4', 'totalPointsAndFees', business),
  { code: 'V673-5', fails: (r) => numberAtLeastZero(r.totalLoanCosts) && r.totalPointsAndFees !== 'NA' },
  naWhen('V674-2', 'originationCharges', reverse),
  naWhen('V674-3', 'originationCharges', openEnd),
  naWhen('V674-4', 'originationCharges', business),
  naWhen('V675-2', 'discountPoints', reverse),
  naWhen('V675-3', 'discountPoints', openEnd),
  naWhen('V675-4', 'discountPoints', business),
  naWhen('V676-2', 'lenderCredits', reverse),
  naWhen('V676-3', 'lenderCredits', openEnd),
  naWhen('V676-4', 'lenderCredits', business),
  naWhen('V678-2', 'prepaymentPenaltyTerm', (r) => r.actionTaken === '6'),
  naWhen('V678-3', 'prepaymentPenaltyTerm', reverse),
  naWhen('V678-4', 'prepaymentPenaltyTerm', business),
  {
    code: 'V678-5',
    fails: (r) => isWhole(r.prepaymentPenaltyTerm) && isWhole(r.loanTerm) && Number(r.prepaymentPenaltyTerm) > Number(r.loanTerm),
  },
  naWhen('V679-3', 'dti', affordableUnitsGiven),
  naWhen('V680-1', 'dti', (r) => nonNatural(r) && noCoApplicant(r)),
  naWhen('V680-2', 'dti', (r) => nonNatural(r) && coNonNatural(r)),
  naWhen('V682-2', 'loanTerm', reverse),
  { code: 'V689-2', fails: (r) => affordableUnitsGiven(r) && !oneOf(r.mhSecuredPropertyType, ['1111', '3']) },
  { code: 'V690-2', fails: (r) => affordableUnitsGiven(r) && !oneOf(r.mhLandInterest, ['1111', '5']) },
  {
    code: 'V692-3',
    fails: (r) =>
      isWhole(r.totalUnits) &&
      Number(r.totalUnits) >= 5 &&
      !naOrExempt(r.multifamilyAffordableUnits) &&
      !(isWhole(r.multifamilyAffordableUnits) && Number(r.multifamilyAffordableUnits) <= Number(r.totalUnits)),
  },
  { code: 'V704-1', fails: (r) => r.actionTaken === '6' && r.aus1 !== '6' },
  { code: 'V709', fails: (r) => [r.street, r.city, r.zip].some((v) => v === 'Exempt') && ![r.street, r.city, r.zip].every((v) => v === 'Exempt') },
  scoreBelow('V720-1', 'creditScore', 'scoreModel', ['1', '2', '3', '4', '5', '6', '11', '12'], 280),
  scoreBelow('V720-2', 'coCreditScore', 'coScoreModel', ['1', '2', '3', '4', '5', '6', '11', '12'], 280),
  scoreBelow('V720-3', 'creditScore', 'scoreModel', ['13', '14', '15'], 300),
  scoreBelow('V720-4', 'coCreditScore', 'coScoreModel', ['13', '14', '15'], 300),
];
