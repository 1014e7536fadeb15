/**
 * What a LAR reads from the underwriting decision: the reasons for denial and the debt-to-income
 * ratio relied on (Reg C 1003.4(a)(16) and (a)(23)).
 */
import type { LarDenialReason } from './codes.ts';

/** The parts of a stored decision's reasons the LAR reads. */
export interface DecisionReasonFacts {
  rule: string;
  result: string;
  effect: string;
  value: number | null;
}

/**
 * The denial reasons of an automatic decline: each underwriting rule that declined, mapped to the
 * FIG's list (Reg C 1003.4(a)(16)). The service's rules and what they test: debt-to-income → 1;
 * loan-to-value → 4 (collateral); credit score → 3 (credit history, as Regulation B's model form
 * C-1 lists "credit score" under it); missing financial data → 7 (credit application incomplete);
 * loan amount and pricing → 9 with words. At most four are reported, in the decision's order.
 */
export function denialReasonsOfRules(rules: readonly string[]): LarDenialReason[] {
  const found: LarDenialReason[] = [];
  const add = (reason: LarDenialReason) => {
    if (found.length < 4 && !found.some((r) => r.reason === reason.reason)) found.push(reason);
  };
  for (const rule of rules) {
    if (rule === 'debt_to_income') add({ reason: 'debt_to_income_ratio' });
    else if (rule === 'loan_to_value') add({ reason: 'collateral' });
    else if (rule === 'credit_score') add({ reason: 'credit_history' });
    else if (rule === 'financial_data') add({ reason: 'credit_application_incomplete' });
    else if (rule === 'loan_amount') add({ reason: 'other', otherText: 'Loan amount above the lender limit' });
    else if (rule === 'pricing') add({ reason: 'other', otherText: 'Loan could not be priced' });
  }
  return found;
}

/**
 * The reasons a decision denied for: the rules that declined it (an automatic decline), or, for a
 * reviewer's decline of a referred application, the rules that failed and referred it.
 */
export function denialReasonsOfDecision(reasons: readonly DecisionReasonFacts[]): LarDenialReason[] {
  const declining = reasons.filter((r) => r.effect === 'decline');
  const chosen = declining.length > 0 ? declining : reasons.filter((r) => r.result === 'fail');
  return denialReasonsOfRules(chosen.map((r) => r.rule));
}

/** The debt-to-income ratio the decision computed, in percent, or null when it computed none. */
export function debtToIncomeOfDecision(reasons: readonly DecisionReasonFacts[]): number | null {
  return reasons.find((r) => r.rule === 'debt_to_income')?.value ?? null;
}
