/**
 * The FIG's validity edits on credit scores and reasons for denial (FIG 2026 section 4.2,
 * V660–V671) that apply to what the service writes. V660-2 (the applicant's scoring model must be
 * a code) is the lender's: the service does not know which model produced a score and leaves the
 * field blank for the lender (the missing-fields report names it).
 */
import { blank, hasDuplicate, isNumber, oneOf, type LarEdit } from './editKit.ts';
import type { LarRecord } from './layout.ts';

const MODELS = ['1111', '1', '2', '3', '4', '5', '6', '7', '8', '9', '11', '12', '13', '14', '15'];
const DENIALS = ['1', '2', '3', '4', '5', '6', '7', '8', '9'];
const denials = (r: LarRecord) => [r.denial1, r.denial2, r.denial3, r.denial4];
const nonNaturalApplicant = (r: LarRecord) => r.eth1 === '4' && r.race1 === '7' && r.sex === '4';

export const DECISION_EDITS: readonly LarEdit[] = [
  { code: 'V660-1', fails: (r) => !isNumber(r.creditScore) },
  { code: 'V661', fails: (r) => (r.creditScore === '8888') !== (r.scoreModel === '9') },
  { code: 'V662-1', fails: (r) => oneOf(r.scoreModel, MODELS.filter((m) => m !== '8')) && !blank(r.scoreModelOther) },
  { code: 'V662-2', fails: (r) => (r.scoreModel === '8' && blank(r.scoreModelOther)) || (!blank(r.scoreModelOther) && r.scoreModel !== '8') },
  {
    code: 'V663',
    fails: (r) =>
      oneOf(r.actionTaken, ['4', '5', '6']) &&
      !(oneOf(r.creditScore, ['8888', '1111']) && oneOf(r.scoreModel, ['9', '1111']) && blank(r.scoreModelOther)),
  },
  {
    code: 'V664',
    fails: (r) =>
      oneOf(r.actionTaken, ['4', '5', '6']) &&
      !(oneOf(r.coCreditScore, ['8888', '1111']) && oneOf(r.coScoreModel, ['9', '1111']) && blank(r.coScoreModelOther)),
  },
  { code: 'V665-1', fails: (r) => !isNumber(r.coCreditScore) },
  { code: 'V665-2', fails: (r) => !oneOf(r.coScoreModel, [...MODELS, '10']) },
  { code: 'V666-1', fails: (r) => (r.coCreditScore === '8888') !== (r.coScoreModel === '9') },
  { code: 'V666-2', fails: (r) => (r.coCreditScore === '9999') !== (r.coScoreModel === '10') },
  { code: 'V667-1', fails: (r) => oneOf(r.coScoreModel, [...MODELS, '10'].filter((m) => m !== '8')) && !blank(r.coScoreModelOther) },
  { code: 'V667-2', fails: (r) => r.coScoreModel === '8' && blank(r.coScoreModelOther) },
  { code: 'V668-1', fails: (r) => nonNaturalApplicant(r) && !oneOf(r.creditScore, ['8888', 'Exempt', '1111']) },

  { code: 'V669-1', fails: (r) => !oneOf(r.denial1, ['1111', ...DENIALS, '10']) },
  { code: 'V669-2', fails: (r) => denials(r).slice(1).some((v) => !blank(v) && !oneOf(v, DENIALS)) },
  { code: 'V669-3', fails: (r) => hasDuplicate(denials(r)) },
  { code: 'V669-4', fails: (r) => oneOf(r.denial1, ['1111', '10']) && !denials(r).slice(1).every(blank) },
  { code: 'V670-1', fails: (r) => oneOf(r.actionTaken, ['3', '7']) && !oneOf(r.denial1, ['1111', ...DENIALS]) },
  { code: 'V670-2', fails: (r) => oneOf(r.denial1, DENIALS) && !oneOf(r.actionTaken, ['3', '7']) },
  { code: 'V670-3', fails: (r) => oneOf(r.actionTaken, ['1', '2', '4', '5', '6', '8']) && !oneOf(r.denial1, ['1111', '10']) },
  { code: 'V670-4', fails: (r) => r.denial1 === '10' && !oneOf(r.actionTaken, ['1', '2', '4', '5', '6', '8']) },
  { code: 'V671-1', fails: (r) => denials(r).includes('9') && blank(r.denialOther) },
  { code: 'V671-2', fails: (r) => !blank(r.denialOther) && !denials(r).includes('9') },
];
