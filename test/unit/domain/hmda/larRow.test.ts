import { describe, expect, it } from 'vitest';
import { denialReasonsOfRules } from '../../../../src/domain/hmda/decision.ts';
import { larFailures } from '../../../../src/domain/hmda/fileEdits.ts';
import { LAR_FIELD_COUNT, TS_FIELD_COUNT, larRecordOf } from '../../../../src/domain/hmda/layout.ts';
import { larRowOf } from '../../../../src/domain/hmda/larRow.ts';
import { finalActionOf, isReportable } from '../../../../src/domain/hmda/reportable.ts';
import { transmittalRowOf } from '../../../../src/domain/hmda/transmittal.ts';
import type { LarApplication } from '../../../../src/domain/hmda/source.ts';
import { LEI, LENDER, application } from './fixtures.ts';

const facts = { debtToIncomePercent: 36.25 };

function rowOf(app: LarApplication) {
  const final = finalActionOf(app);
  if (final === null) throw new Error('not reportable');
  return larRowOf(app, LEI, final, facts);
}

describe('the action taken and whether a year reports an application', () => {
  it.each([
    ['clear_to_close', '1'],
    ['approved', '2'],
    ['declined', '3'],
    ['withdrawn', '4'],
  ] as const)('%s is Action Taken %s', (status, code) => {
    const app = application({ status, withdrawnAt: status === 'withdrawn' ? '2026-03-05T00:00:00.000Z' : null });
    expect(finalActionOf(app)?.action).toBe(code);
  });

  it.each(['draft', 'submitted', 'referred'] as const)('%s has no final action and is not reported', (status) => {
    expect(finalActionOf(application({ status }))).toBeNull();
    expect(isReportable(application({ status }), 2026)).toBe(false);
  });

  it('a draft withdrawn before submission was never an application', () => {
    expect(isReportable(application({ status: 'withdrawn', submittedAt: null, withdrawnAt: '2026-03-05T00:00:00.000Z' }), 2026)).toBe(false);
  });

  it('is reported in the UTC year of its final action, not of its submission', () => {
    const app = application({ submittedAt: '2025-12-30T12:00:00.000Z', decidedAt: '2026-01-01T00:00:00.000Z' });
    expect(isReportable(app, 2026)).toBe(true);
    expect(isReportable(app, 2025)).toBe(false);
    expect(isReportable(application({ decidedAt: '2026-12-31T23:59:59.999Z' }), 2027)).toBe(false);
  });
});

describe('a LAR row', () => {
  it('has the FIG’s 110 fields and the transmittal sheet its 15', () => {
    expect(rowOf(application()).fields).toHaveLength(LAR_FIELD_COUNT);
    expect(transmittalRowOf(LENDER, 2026, 3).fields).toHaveLength(TS_FIELD_COUNT);
  });

  it('writes the codes of the application data', () => {
    const record = larRecordOf(rowOf(application({ loanPurpose: 'cash_out_refinancing', loanType: 'va', occupancy: 'investment_property' })).fields);
    expect(record.recordId).toBe('2');
    expect(record.lei).toBe(LEI);
    expect(record.applicationDate).toBe('20260301');
    expect(record.actionTakenDate).toBe('20260310');
    expect(record.loanPurpose).toBe('32');
    expect(record.loanType).toBe('3');
    expect(record.occupancy).toBe('3');
    expect(record.loanAmount).toBe('320000');
    expect(record.income).toBe('96');
    expect(record.propertyValue).toBe('400000');
    expect(record.loanTerm).toBe('360');
    expect(record.totalUnits).toBe('1');
    expect([record.eth1, record.race1, record.sex, record.age]).toEqual(['2', '5', '2', '41']);
    expect([record.coEth1, record.coRace1, record.coSex, record.coAge]).toEqual(['5', '8', '5', '9999']);
    expect(record.dti).toBe('36.25');
  });

  it('passes every implemented edit for each status, with the fields the service does not hold named as missing', () => {
    for (const status of ['clear_to_close', 'approved', 'declined', 'withdrawn'] as const) {
      const app = application({
        status,
        withdrawnAt: status === 'withdrawn' ? '2026-03-05T00:00:00.000Z' : null,
        denialReasons: status === 'declined' ? denialReasonsOfRules(['debt_to_income', 'loan_amount']) : [],
      });
      const row = rowOf(app);
      expect(larFailures(larRecordOf(row.fields), { year: 2026 }), status).toEqual([]);
      expect(row.missing, status).toEqual(expect.arrayContaining(['submissionOfApplication', 'initiallyPayable', 'nmlsrId', 'aus1', 'ausResult1']));
      for (const key of row.missing) expect(row.fields[Object.keys(larRecordOf(row.fields)).indexOf(key)], key).toBe('');
    }
  });

  it('names the origination-only fields as missing on an origination and writes NA for them on a denial', () => {
    const originated = rowOf(application({ status: 'clear_to_close' }));
    expect(originated.missing).toEqual(expect.arrayContaining(['purchaserType', 'rateSpread', 'hoepa', 'totalLoanCosts', 'originationCharges', 'interestRate']));
    const denied = larRecordOf(rowOf(application({ status: 'declined', denialReasons: [{ reason: 'collateral' }] })).fields);
    expect([denied.rateSpread, denied.totalLoanCosts, denied.interestRate, denied.hoepa, denied.purchaserType]).toEqual(['NA', 'NA', 'NA', '3', '0']);
    expect(denied.denial1).toBe('4');
  });

  it('names each application-data field left out as missing, leaving it blank', () => {
    const row = rowOf(application({ loanType: null, loanPurpose: null, demographics: null, annualIncomeCents: null }));
    expect(row.missing).toEqual(expect.arrayContaining(['loanType', 'loanPurpose', 'eth1', 'race1', 'sex', 'age', 'income']));
    const record = larRecordOf(row.fields);
    expect([record.loanType, record.eth1, record.income]).toEqual(['', '', '']);
  });

  it('reports an unknown property address as NA, except on an origination, where it is missing', () => {
    const withdrawn = larRecordOf(rowOf(application({ status: 'withdrawn', withdrawnAt: '2026-03-05T00:00:00.000Z', propertyAddress: null })).fields);
    expect([withdrawn.street, withdrawn.city, withdrawn.state, withdrawn.zip, withdrawn.county, withdrawn.censusTract]).toEqual(['NA', 'NA', 'NA', 'NA', 'NA', 'NA']);
    expect(rowOf(application({ status: 'clear_to_close', propertyAddress: null })).missing).toEqual(expect.arrayContaining(['street', 'city', 'state', 'zip']));
  });

  it('keeps pipes and line breaks out of free text', () => {
    const address = { street: '1 A|B\nStreet', city: 'X\r\nY', state: 'IL', zip: '62704', county: '17167', censusTract: '17167000100' };
    const record = larRecordOf(rowOf(application({ propertyAddress: address })).fields);
    expect(record.street).toBe('1 A B Street');
    expect(record.city).toBe('X  Y');
  });

  it('maps an automatic decline’s failed rules to the FIG’s reasons for denial, at most four', () => {
    expect(denialReasonsOfRules(['debt_to_income', 'loan_to_value', 'credit_score', 'financial_data', 'loan_amount']).map((r) => r.reason)).toEqual([
      'debt_to_income_ratio',
      'collateral',
      'credit_history',
      'credit_application_incomplete',
    ]);
  });
});

describe('the transmittal sheet', () => {
  it('holds the lender’s settings, quarter 4 and the count, and names settings not given', () => {
    expect(transmittalRowOf(LENDER, 2026, 7).fields).toEqual([
      '1', 'Example Mortgage Bank', '2026', '4', 'Pat Compliance', '217-555-0100', 'hmda@example.com',
      '1 Main Street', 'Springfield', 'IL', '62701', '9', '7', '12-3456789', LEI,
    ]);
    expect(transmittalRowOf({ ...LENDER, lei: null, taxId: null, contact: null }, 2026, 7).missing).toEqual([
      'contactName', 'contactPhone', 'contactEmail', 'taxId', 'lei',
    ]);
  });
});
