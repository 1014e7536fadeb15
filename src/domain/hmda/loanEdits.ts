/**
 * The FIG's validity edits on the LAR's identity, loan, property and pricing fields, those that
 * apply to the fields the service produces (FIG 2026 section 4.2; what each tests is its message
 * in editMessages.ts). Edits on fields the service never holds (rate spread, loan costs, the
 * scoring model, AUS, NMLSR ID, channel) are the lender's: docs/partners/hmda-lar.md lists them.
 * The conditional edits that make those fields NA are here, since the service writes the NA.
 */
import { STATE_FIPS } from './codes.ts';
import { blank, isFigDate, isNumber, isWhole, naOrExempt, oneOf, type LarEdit } from './editKit.ts';
import { hasUliForm, uliCheckDigitsValid } from './uli.ts';

const ALNUM = /^[A-Za-z0-9]+$/;

export const LOAN_EDITS: readonly LarEdit[] = [
  { code: 'V608-1', fails: (r) => r.uli.length > 22 && !hasUliForm(r.uli) },
  {
    code: 'V608-2',
    fails: (r) => r.uli.length <= 22 && (!ALNUM.test(r.uli) || oneOf(r.uli, ['NA', 'Exempt', '1111'])),
  },
  { code: 'V609', fails: (r) => hasUliForm(r.uli) && !uliCheckDigitsValid(r.uli) },
  { code: 'V610-1', fails: (r) => !isFigDate(r.applicationDate) && r.applicationDate !== 'NA' },
  { code: 'V610-2', fails: (r) => (r.actionTaken === '6') !== (r.applicationDate === 'NA') },
  { code: 'V611', fails: (r) => !oneOf(r.loanType, ['1', '2', '3', '4']) },
  { code: 'V612-1', fails: (r) => !oneOf(r.loanPurpose, ['1', '2', '31', '32', '4', '5']) },
  { code: 'V612-2', fails: (r) => r.preapproval === '1' && r.loanPurpose !== '1' },
  { code: 'V613-1', fails: (r) => !oneOf(r.preapproval, ['1', '2']) },
  { code: 'V613-2', fails: (r) => oneOf(r.actionTaken, ['7', '8']) && r.preapproval !== '1' },
  { code: 'V613-3', fails: (r) => oneOf(r.actionTaken, ['3', '4', '5', '6']) && r.preapproval !== '2' },
  { code: 'V613-4', fails: (r) => r.preapproval === '1' && !oneOf(r.actionTaken, ['1', '2', '7', '8']) },
  { code: 'V614-1', fails: (r) => oneOf(r.loanPurpose, ['2', '4', '31', '32', '5']) && r.preapproval !== '2' },
  { code: 'V614-3', fails: (r) => r.reverseMortgage === '1' && r.preapproval !== '2' },
  { code: 'V614-4', fails: (r) => r.openEndLineOfCredit === '1' && r.preapproval !== '2' },
  { code: 'V615-1', fails: (r) => !oneOf(r.constructionMethod, ['1', '2']) },
  { code: 'V615-2', fails: (r) => oneOf(r.mhLandInterest, ['1', '2', '3', '4']) && r.constructionMethod !== '2' },
  { code: 'V615-3', fails: (r) => oneOf(r.mhSecuredPropertyType, ['1', '2']) && r.constructionMethod !== '2' },
  { code: 'V616', fails: (r) => !oneOf(r.occupancy, ['1', '2', '3']) },
  { code: 'V617', fails: (r) => !isNumber(r.loanAmount) || Number(r.loanAmount) < 0 },
  { code: 'V618', fails: (r) => !oneOf(r.actionTaken, ['1', '2', '3', '4', '5', '6', '7', '8']) },
  { code: 'V619-1', fails: (r) => !isFigDate(r.actionTakenDate) },
  { code: 'V619-2', fails: (r, ctx) => r.actionTakenDate.slice(0, 4) !== String(ctx.year) },
  {
    code: 'V619-3',
    fails: (r) =>
      oneOf(r.actionTaken, ['1', '2', '3', '4', '5', '7', '8']) &&
      isFigDate(r.applicationDate) &&
      isFigDate(r.actionTakenDate) &&
      r.actionTakenDate < r.applicationDate,
  },

  { code: 'V620', fails: (r) => blank(r.street) },
  { code: 'V621', fails: (r) => blank(r.city) },
  {
    code: 'V622',
    fails: (r) => !naOrExempt(r.street) && [r.city, r.state, r.zip].some((v) => blank(v) || v === 'NA'),
  },
  { code: 'V623', fails: (r) => !(r.state in STATE_FIPS) && r.state !== 'NA' },
  { code: 'V624', fails: (r) => !/^[0-9]{5}(-[0-9]{4})?$/.test(r.zip) && !naOrExempt(r.zip) },
  { code: 'V625-1', fails: (r) => !/^[0-9]{11}$/.test(r.censusTract) && r.censusTract !== 'NA' },
  { code: 'V626', fails: (r) => !/^[0-9]{5}$/.test(r.county) && r.county !== 'NA' },
  {
    code: 'V627',
    fails: (r) => /^[0-9]{5}$/.test(r.county) && /^[0-9]{11}$/.test(r.censusTract) && r.censusTract.slice(0, 5) !== r.county,
  },
  // Only the state part of V716: the county's FIPS code begins with the state's. Whether the
  // county exists in that state needs the Census Bureau's county list, which the service lacks.
  {
    code: 'V716',
    fails: (r) => r.state in STATE_FIPS && /^[0-9]{5}$/.test(r.county) && r.county.slice(0, 2) !== STATE_FIPS[r.state],
  },

  { code: 'V654-1', fails: (r) => !/^-?\d+$/.test(r.income) && r.income !== 'NA' },
  { code: 'V656-2', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '7', '8']) && r.purchaserType !== '0' },
  { code: 'V657-2', fails: (r) => oneOf(r.actionTaken, ['3', '4', '5', '6', '7']) && !naOrExempt(r.rateSpread) },
  { code: 'V658-2', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '7', '8']) && r.hoepa !== '3' },
  { code: 'V659', fails: (r) => !oneOf(r.lienStatus, ['1', '2']) },

  { code: 'V672-6', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '7', '8']) && !naOrExempt(r.totalLoanCosts) },
  { code: 'V673-2', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '6', '7', '8']) && !naOrExempt(r.totalPointsAndFees) },
  { code: 'V674-5', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '7', '8']) && !naOrExempt(r.originationCharges) },
  { code: 'V675-5', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '7', '8']) && !naOrExempt(r.discountPoints) },
  { code: 'V676-5', fails: (r) => oneOf(r.actionTaken, ['2', '3', '4', '5', '7', '8']) && !naOrExempt(r.lenderCredits) },
  { code: 'V677-2', fails: (r) => oneOf(r.actionTaken, ['3', '4', '5', '7']) && !naOrExempt(r.interestRate) },
  {
    code: 'V678-1',
    fails: (r) => !(isWhole(r.prepaymentPenaltyTerm) && Number(r.prepaymentPenaltyTerm) > 0) && !naOrExempt(r.prepaymentPenaltyTerm),
  },
  { code: 'V679-2', fails: (r) => oneOf(r.actionTaken, ['4', '5', '6']) && !naOrExempt(r.dti) },
  { code: 'V681-2', fails: (r) => oneOf(r.actionTaken, ['4', '5', '6']) && !naOrExempt(r.cltv) },
  { code: 'V682-1', fails: (r) => !(isWhole(r.loanTerm) && Number(r.loanTerm) > 0) && !naOrExempt(r.loanTerm) },
  { code: 'V683', fails: (r) => !(isWhole(r.introRatePeriod) && Number(r.introRatePeriod) > 0) && !naOrExempt(r.introRatePeriod) },
  { code: 'V684', fails: (r) => !oneOf(r.balloon, ['1111', '1', '2']) },
  { code: 'V685', fails: (r) => !oneOf(r.interestOnly, ['1111', '1', '2']) },
  { code: 'V686', fails: (r) => !oneOf(r.negativeAmortization, ['1111', '1', '2']) },
  { code: 'V687', fails: (r) => !oneOf(r.otherNonAmortizing, ['1111', '1', '2']) },
  { code: 'V688-1', fails: (r) => !(isNumber(r.propertyValue) && Number(r.propertyValue) > 0) && !naOrExempt(r.propertyValue) },
  { code: 'V688-2', fails: (r) => oneOf(r.actionTaken, ['4', '5']) && !naOrExempt(r.propertyValue) },
  { code: 'V689-3', fails: (r) => r.constructionMethod === '1' && !oneOf(r.mhSecuredPropertyType, ['1111', '3']) },
  { code: 'V690-3', fails: (r) => r.constructionMethod === '1' && !oneOf(r.mhLandInterest, ['1111', '5']) },
  { code: 'V691', fails: (r) => !(isWhole(r.totalUnits) && Number(r.totalUnits) > 0) },
  { code: 'V692-2', fails: (r) => isWhole(r.totalUnits) && Number(r.totalUnits) < 5 && !naOrExempt(r.multifamilyAffordableUnits) },
  { code: 'V706', fails: (r) => !oneOf(r.reverseMortgage, ['1111', '1', '2']) },
  { code: 'V707', fails: (r) => !oneOf(r.openEndLineOfCredit, ['1111', '1', '2']) },
  { code: 'V708', fails: (r) => !oneOf(r.businessPurpose, ['1111', '1', '2']) },
];
