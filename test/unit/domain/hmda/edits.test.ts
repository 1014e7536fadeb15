import { describe, expect, it } from 'vitest';
import { EDIT_MESSAGES, type EditCode } from '../../../../src/domain/hmda/editMessages.ts';
import { FileChecker, LAR_EDITS, TS_EDITS, duplicateEdits, larFailures, transmittalFailures } from '../../../../src/domain/hmda/fileEdits.ts';
import { larFieldsOf, larRecordOf, tsFieldsOf, tsRecordOf, type LarKey, type LarRecord, type TsKey } from '../../../../src/domain/hmda/layout.ts';
import { larRowOf } from '../../../../src/domain/hmda/larRow.ts';
import { finalActionOf } from '../../../../src/domain/hmda/reportable.ts';
import { transmittalRowOf } from '../../../../src/domain/hmda/transmittal.ts';
import { LEI, LENDER, application } from './fixtures.ts';

/** An approved application's row (Action Taken 2), which passes every implemented edit. */
function validRecord(): LarRecord {
  const app = application();
  return larRecordOf(larRowOf(app, LEI, finalActionOf(app)!, { debtToIncomePercent: 36.25 }).fields);
}

const base = validRecord();
const wrongCheck = base.uli.slice(0, -2) + String((Number(base.uli.slice(-2)) + 1) % 100).padStart(2, '0');
const nonNatural = { eth1: '4', race1: '7', sex: '4' };
const coNonNatural = { coEth1: '4', coRace1: '7', coSex: '4' };

/** For each LAR edit, values planted in the valid row that make it fail. */
const LAR_PLANTS: Record<string, Partial<Record<LarKey, string>>> = {
  'V608-1': { uli: `${'A'.repeat(22)}!` },
  'V608-2': { uli: 'NA' },
  'V609': { uli: wrongCheck },
  'V610-1': { applicationDate: '20261340' },
  'V610-2': { applicationDate: 'NA' },
  'V611': { loanType: '9' },
  'V612-1': { loanPurpose: '3' },
  'V612-2': { preapproval: '1', loanPurpose: '31' },
  'V613-1': { preapproval: '3' },
  'V613-2': { actionTaken: '7' },
  'V613-3': { actionTaken: '3', preapproval: '1' },
  'V613-4': { actionTaken: '4', preapproval: '1' },
  'V614-1': { loanPurpose: '31', preapproval: '1' },
  'V614-3': { reverseMortgage: '1', preapproval: '1' },
  'V614-4': { openEndLineOfCredit: '1', preapproval: '1' },
  'V615-1': { constructionMethod: '3' },
  'V615-2': { mhLandInterest: '1' },
  'V615-3': { mhSecuredPropertyType: '1' },
  'V616': { occupancy: '4' },
  'V617': { loanAmount: '-5' },
  'V618': { actionTaken: '9' },
  'V619-1': { actionTakenDate: '2026031' },
  'V619-2': { actionTakenDate: '20250315', applicationDate: '20250301' },
  'V619-3': { actionTakenDate: '20260102' },
  'V620': { street: '' },
  'V621': { city: '' },
  'V622': { city: 'NA' },
  'V623': { state: 'XX' },
  'V624': { zip: '1234' },
  'V625-1': { censusTract: '123' },
  'V626': { county: '12' },
  'V627': { censusTract: '17031000100' },
  'V716': { county: '06075', censusTract: '06075012345' },
  'V654-1': { income: '12.5' },
  'V656-2': { purchaserType: '1' },
  'V657-2': { actionTaken: '3', rateSpread: '1.5' },
  'V658-2': { hoepa: '1' },
  'V659': { lienStatus: '3' },
  'V672-6': { totalLoanCosts: '100' },
  'V673-2': { totalPointsAndFees: '100' },
  'V674-5': { originationCharges: '100' },
  'V675-5': { discountPoints: '100' },
  'V676-5': { lenderCredits: '100' },
  'V677-2': { actionTaken: '3', interestRate: '5' },
  'V678-1': { prepaymentPenaltyTerm: '0' },
  'V679-2': { actionTaken: '4', dti: '40' },
  'V681-2': { actionTaken: '4', cltv: '80' },
  'V682-1': { loanTerm: '0' },
  'V683': { introRatePeriod: '' },
  'V684': { balloon: '3' },
  'V685': { interestOnly: '3' },
  'V686': { negativeAmortization: '3' },
  'V687': { otherNonAmortizing: '3' },
  'V688-1': { propertyValue: '0' },
  'V688-2': { actionTaken: '4', propertyValue: '300000' },
  'V689-3': { mhSecuredPropertyType: '1' },
  'V690-3': { mhLandInterest: '1' },
  'V691': { totalUnits: '0' },
  'V692-2': { multifamilyAffordableUnits: '2' },
  'V706': { reverseMortgage: '3' },
  'V707': { openEndLineOfCredit: '3' },
  'V708': { businessPurpose: '3' },
  'V628-1': { eth1: '7' },
  'V628-2': { eth2: '3' },
  'V628-3': { eth1: '1', eth2: '1' },
  'V628-4': { eth1: '3', eth2: '1' },
  'V629-1': { ethObserved: '4' },
  'V629-2': { ethObserved: '1', eth1: '11' },
  'V629-3': { eth1: '4' },
  'V630': { eth1: '4' },
  'V631-1': { coEth1: '6' },
  'V631-2': { coEth2: '3' },
  'V631-3': { coEth1: '1', coEth2: '1', coEthObserved: '2' },
  'V631-4': { coEth2: '1' },
  'V632-1': { coEthObserved: '5' },
  'V632-2': { coEthObserved: '1' },
  'V632-3': { coEthObserved: '2' },
  'V633': { coEth1: '4' },
  'V634': { coEthObserved: '2' },
  'V635-1': { race1: '9' },
  'V635-2': { race2: '6' },
  'V635-3': { race2: '5' },
  'V635-4': { race1: '6', race2: '5' },
  'V636-1': { raceObserved: '4' },
  'V636-2': { raceObserved: '1', race1: '21' },
  'V636-3': { race1: '7' },
  'V637': { race1: '7' },
  'V638-1': { coRace1: '9' },
  'V638-2': { coRace2: '6' },
  'V638-3': { coRace1: '5', coRace2: '5', coRaceObserved: '2' },
  'V638-4': { coRace2: '5' },
  'V639-1': { coRaceObserved: '5' },
  'V639-2': { coRaceObserved: '1' },
  'V639-3': { coRaceObserved: '2' },
  'V640': { coRace1: '7' },
  'V641': { coRaceObserved: '2' },
  'V642-1': { sex: '5' },
  'V642-2': { sexObserved: '4' },
  'V643': { sexObserved: '1', sex: '3' },
  'V644-1': { sex: '4' },
  'V644-2': { sex: '6', sexObserved: '1' },
  'V645': { sex: '4' },
  'V646-1': { coSex: '7' },
  'V646-2': { coSexObserved: '5' },
  'V647': { coSexObserved: '1' },
  'V648-1': { coSexObserved: '2' },
  'V648-2': { coSex: '6' },
  'V649': { coSex: '4' },
  'V650': { coSexObserved: '3' },
  'V651-1': { age: '0' },
  'V651-2': { ...nonNatural },
  'V652-1': { coAge: '-1' },
  'V655-1': { ...nonNatural },
  'V721-1': { age: '9999' },
  'V721-2': { coAge: '1111' },
  'V660-1': { creditScore: '' },
  'V661': { creditScore: '8888' },
  'V662-1': { scoreModel: '1', scoreModelOther: 'Bureau score' },
  'V662-2': { scoreModel: '8' },
  'V663': { actionTaken: '4' },
  'V664': { actionTaken: '4', creditScore: '8888', scoreModel: '9' },
  'V665-1': { coCreditScore: 'none' },
  'V665-2': { coScoreModel: '16' },
  'V666-1': { coCreditScore: '8888' },
  'V666-2': { coScoreModel: '9' },
  'V667-1': { coScoreModelOther: 'Bureau score' },
  'V667-2': { coScoreModel: '8' },
  'V668-1': { ...nonNatural },
  'V669-1': { denial1: '11' },
  'V669-2': { denial2: '10' },
  'V669-3': { actionTaken: '3', denial1: '1', denial2: '1' },
  'V669-4': { denial2: '1' },
  'V670-1': { actionTaken: '3' },
  'V670-2': { denial1: '1' },
  'V670-3': { denial1: '' },
  'V670-4': { actionTaken: '3' },
  'V671-1': { actionTaken: '3', denial1: '9' },
  'V671-2': { denialOther: 'Other reason' },
  'V614-2': { multifamilyAffordableUnits: '3', totalUnits: '10', preapproval: '1' },
  'V652-2': { ...coNonNatural },
  'V654-2': { multifamilyAffordableUnits: '3', totalUnits: '10' },
  'V655-2': { ...coNonNatural },
  'V657-3': { reverseMortgage: '1' },
  'V668-2': { ...coNonNatural },
  'V672-2': { totalPointsAndFees: '100', totalLoanCosts: '' },
  'V672-3': { reverseMortgage: '1', totalLoanCosts: '100' },
  'V672-4': { openEndLineOfCredit: '1', totalLoanCosts: '100' },
  'V672-5': { businessPurpose: '1', totalLoanCosts: '100' },
  'V673-3': { reverseMortgage: '1', totalPointsAndFees: '100' },
  'V673-4': { businessPurpose: '1', totalPointsAndFees: '100' },
  'V673-5': { totalLoanCosts: '100', totalPointsAndFees: '' },
  'V674-2': { reverseMortgage: '1', originationCharges: '100' },
  'V674-3': { openEndLineOfCredit: '1', originationCharges: '100' },
  'V674-4': { businessPurpose: '1', originationCharges: '100' },
  'V675-2': { reverseMortgage: '1', discountPoints: '100' },
  'V675-3': { openEndLineOfCredit: '1', discountPoints: '100' },
  'V675-4': { businessPurpose: '1', discountPoints: '100' },
  'V676-2': { reverseMortgage: '1', lenderCredits: '100' },
  'V676-3': { openEndLineOfCredit: '1', lenderCredits: '100' },
  'V676-4': { businessPurpose: '1', lenderCredits: '100' },
  'V678-2': { actionTaken: '6', prepaymentPenaltyTerm: '12' },
  'V678-3': { reverseMortgage: '1', prepaymentPenaltyTerm: '12' },
  'V678-4': { businessPurpose: '1', prepaymentPenaltyTerm: '12' },
  'V678-5': { prepaymentPenaltyTerm: '400' },
  'V679-3': { multifamilyAffordableUnits: '3', totalUnits: '10' },
  'V680-1': { ...nonNatural },
  'V680-2': { ...nonNatural, ...coNonNatural },
  'V682-2': { reverseMortgage: '1' },
  'V689-2': { multifamilyAffordableUnits: '3', totalUnits: '10', mhSecuredPropertyType: '1' },
  'V690-2': { multifamilyAffordableUnits: '3', totalUnits: '10', mhLandInterest: '1' },
  'V692-3': { totalUnits: '10', multifamilyAffordableUnits: '11' },
  'V704-1': { actionTaken: '6' },
  'V709': { street: 'Exempt' },
  'V720-1': { scoreModel: '1', creditScore: '250' },
  'V720-2': { coScoreModel: '1', coCreditScore: '250' },
  'V720-3': { scoreModel: '13', creditScore: '290' },
  'V720-4': { coScoreModel: '13', coCreditScore: '290' },
};

/** For each transmittal-sheet edit, values planted in a valid sheet that make it fail. */
const TS_PLANTS: Record<string, Partial<Record<TsKey, string>>> = {
  'S300': { recordId: '2' },
  'S302': { calendarYear: '2025' },
  'V600': { lei: 'TOO-SHORT' },
  'V601': { contactName: '' },
  'V602': { calendarQuarter: '3' },
  'V603': { contactPhone: '2175550100' },
  'V604': { contactState: 'XX' },
  'V605': { contactZip: '6270' },
  'V606': { totalLines: '0' },
  'V607': { taxId: '123456789' },
  'V717': { contactEmail: 'hmda-at-example.com' },
  'V719-1': { institutionName: '12345' },
  'V719-2': { institutionName: LEI },
};

describe('the implemented edits', () => {
  it('leave a valid row and a valid transmittal sheet alone', () => {
    expect(larFailures(base, { year: 2026 })).toEqual([]);
    expect(transmittalFailures(transmittalRowOf(LENDER, 2026, 1).fields, 2026)).toEqual([]);
  });

  it.each(Object.entries(LAR_PLANTS))('%s fails on its planted value, with the FIG’s message', (code, planted) => {
    const record = { ...base, ...planted };
    const failures = larFailures(record, { year: 2026 });
    expect(failures.map((f) => f.edit)).toContain(code);
    expect(failures.find((f) => f.edit === code)?.message).toBe(EDIT_MESSAGES[code as EditCode]);
  });

  it.each(Object.entries(TS_PLANTS))('%s fails on its planted transmittal value', (code, planted) => {
    const ts = { ...tsRecordOf(transmittalRowOf(LENDER, 2026, 1).fields), ...planted };
    expect(transmittalFailures(tsFieldsOf(ts), 2026).map((f) => f.edit)).toContain(code);
  });

  it('reads a state code from a file as text only: names of Object.prototype are not states', () => {
    for (const state of ['constructor', '__proto__', 'toString']) {
      expect(larFailures({ ...base, state }, { year: 2026 }).map((f) => f.edit)).toContain('V623');
      expect(transmittalFailures(tsFieldsOf({ ...tsRecordOf(transmittalRowOf(LENDER, 2026, 1).fields), contactState: state }), 2026).map((f) => f.edit)).toContain('V604');
    }
  });

  it('has a planted value for every edit it implements, and a FIG message for each', () => {
    const implemented = [...LAR_EDITS.map((e) => e.code), ...TS_EDITS.map((e) => e.code), 'S300', 'S301', 'S302', 'S304', 'S305', 'S306'];
    const planted = [...Object.keys(LAR_PLANTS), ...Object.keys(TS_PLANTS), 'S301', 'S304', 'S305', 'S306'];
    expect(new Set(planted)).toEqual(new Set(implemented));
    expect(new Set(Object.keys(EDIT_MESSAGES))).toEqual(new Set(implemented));
  });
});

describe('the file’s syntactical edits', () => {
  const tsFields = (lines: number) => transmittalRowOf(LENDER, 2026, lines).fields;

  it('S301: a row whose LEI is not the transmittal sheet’s', () => {
    const checker = new FileChecker(2026);
    checker.transmittal(tsFields(1));
    const other = larFieldsOf({ ...base, lei: '549300OTHERLEI000000' });
    expect(checker.lar(other).map((f) => f.edit)).toContain('S301');
  });

  it('S304: a count on the transmittal sheet that is not the number of rows', () => {
    const checker = new FileChecker(2026);
    expect(checker.transmittal(tsFields(2))).toEqual([]);
    expect(checker.lar(larFieldsOf(base))).toEqual([]);
    expect(checker.finish().map((f) => f.edit)).toEqual(['S304']);
  });

  it('S300: a row with the wrong number of fields or the wrong record identifier', () => {
    const checker = new FileChecker(2026);
    checker.transmittal(tsFields(2));
    expect(checker.lar(larFieldsOf(base).slice(1)).map((f) => f.edit)).toEqual(['S300']);
    expect(checker.lar(['1', ...larFieldsOf(base).slice(1)]).map((f) => f.edit)).toEqual(['S300']);
    expect(checker.finish()).toEqual([]);
  });

  it('S305 and S306: a repeated row, and a repeated ULI on an origination', () => {
    const row = larFieldsOf(base);
    const originated = larFieldsOf({ ...base, actionTaken: '1', loanAmount: '320001' });
    const found = duplicateEdits([row, row, originated]).map((d) => [d.row, d.failure.edit]);
    // Row 1 repeats row 0 exactly (S305) but neither is an origination; row 2 originates under the same ULI (S306).
    expect(found).toEqual([
      [1, 'S305'],
      [2, 'S306'],
    ]);
  });
});
