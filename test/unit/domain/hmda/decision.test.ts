import { describe, expect, it } from 'vitest';
import { debtToIncomeOfDecision, denialReasonsOfDecision } from '../../../../src/domain/hmda/decision.ts';

const reason = (rule: string, result: 'pass' | 'fail', effect: 'approve' | 'refer' | 'decline', value: number | null = null) => ({ rule, result, effect, value });

describe('what the LAR reads from a decision', () => {
  it('an automatic decline reports the rules that declined, not those that only referred', () => {
    const reasons = [reason('financial_data', 'pass', 'approve'), reason('debt_to_income', 'fail', 'refer', 45), reason('credit_score', 'fail', 'decline', 540)];
    expect(denialReasonsOfDecision(reasons)).toEqual([{ reason: 'credit_history' }]);
  });

  it("a reviewer's decline of a referral reports the rules that failed and referred it", () => {
    const reasons = [reason('loan_to_value', 'fail', 'refer', 98), reason('debt_to_income', 'pass', 'approve', 30), reason('pricing', 'fail', 'refer')];
    expect(denialReasonsOfDecision(reasons)).toEqual([{ reason: 'collateral' }, { reason: 'other', otherText: 'Loan could not be priced' }]);
  });

  it('reads the debt-to-income ratio the decision computed, or none', () => {
    expect(debtToIncomeOfDecision([reason('debt_to_income', 'pass', 'approve', 36.125)])).toBe(36.125);
    expect(debtToIncomeOfDecision([reason('debt_to_income', 'fail', 'refer', null)])).toBeNull();
    expect(debtToIncomeOfDecision([])).toBeNull();
  });
});
