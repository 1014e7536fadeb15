/**
 * The principal reasons of a notice of action taken, in the wording of Regulation B's model form
 * C-1 (12 CFR part 1002, appendix C), and the mapping from an automated decision's failed rules to
 * them. A statement of more than four reasons is not helpful to the applicant (official
 * interpretation 1002.9(b)(2)-1), so a notice gives at most four, the rules that declined first.
 */
import type { DecisionReason } from '../underwriting/decision.ts';

/** Every reason a notice may give: form C-1's list (but "Other, specify"), plus the credit score itself. */
export const NOTICE_REASONS = {
  incomplete_application: 'Credit application incomplete',
  insufficient_credit_references: 'Insufficient number of credit references provided',
  unacceptable_credit_references: 'Unacceptable type of credit references provided',
  unverifiable_credit_references: 'Unable to verify credit references',
  temporary_employment: 'Temporary or irregular employment',
  unverifiable_employment: 'Unable to verify employment',
  length_of_employment: 'Length of employment',
  insufficient_income: 'Income insufficient for amount of credit requested',
  excessive_obligations: 'Excessive obligations in relation to income',
  unverifiable_income: 'Unable to verify income',
  length_of_residence: 'Length of residence',
  temporary_residence: 'Temporary residence',
  unverifiable_residence: 'Unable to verify residence',
  no_credit_file: 'No credit file',
  limited_credit_experience: 'Limited credit experience',
  poor_credit_performance_with_us: 'Poor credit performance with us',
  delinquent_obligations: 'Delinquent past or present credit obligations with others',
  collection_action_or_judgment: 'Collection action or judgment',
  garnishment_or_attachment: 'Garnishment or attachment',
  foreclosure_or_repossession: 'Foreclosure or repossession',
  bankruptcy: 'Bankruptcy',
  excessive_inquiries: 'Number of recent inquiries on credit bureau report',
  insufficient_collateral: 'Value or type of collateral not sufficient',
  credit_score: 'Credit score',
  amount_exceeds_limit: 'Other: amount of credit requested exceeds our lending limit',
  outside_lending_program: 'Other: the loan requested is outside our lending program',
} as const;

export type NoticeReasonCode = keyof typeof NOTICE_REASONS;

/** A reason as a notice states it. */
export interface NoticeReason {
  code: NoticeReasonCode;
  text: string;
}

/** At most this many principal reasons on one notice. */
const MAX_NOTICE_REASONS = 4;

const reasonOf = (code: NoticeReasonCode): NoticeReason => ({ code, text: NOTICE_REASONS[code] });

/** The C-1 reason a failed rule stands for. */
function codeFor(reason: DecisionReason): NoticeReasonCode {
  // A rule that could not be judged for want of the applicant's data: the application is incomplete.
  if (reason.missing && reason.missing.length > 0) return 'incomplete_application';
  switch (reason.rule) {
    case 'financial_data':
      return 'incomplete_application';
    case 'debt_to_income':
      // No payment to weigh (the loan could not be priced) or no income at all.
      if (reason.value === null) return reason.effect === 'decline' ? 'insufficient_income' : 'outside_lending_program';
      return 'excessive_obligations';
    case 'loan_to_value':
      return 'insufficient_collateral';
    case 'credit_score':
      return 'credit_score';
    case 'loan_amount':
      return 'amount_exceeds_limit';
    case 'pricing':
      return 'outside_lending_program';
  }
}

/**
 * The principal reasons for declining, from the decision's failed rules: those that declined
 * first, then those that referred, each group in the rules' order; one line per reason, at most four.
 */
export function reasonsFromDecision(reasons: readonly DecisionReason[]): NoticeReason[] {
  const failed = reasons.filter((r) => r.result === 'fail');
  const ordered = [...failed.filter((r) => r.effect === 'decline'), ...failed.filter((r) => r.effect !== 'decline')];
  const codes: NoticeReasonCode[] = [];
  for (const reason of ordered) {
    const code = codeFor(reason);
    if (!codes.includes(code)) codes.push(code);
  }
  return codes.slice(0, MAX_NOTICE_REASONS).map(reasonOf);
}

/** An underwriter's chosen reasons, in their order, each once. */
export function chosenReasons(codes: readonly NoticeReasonCode[]): NoticeReason[] {
  return [...new Set(codes)].map(reasonOf);
}

/** Whether the decision used a credit score (FCRA §615(a) then asks for the score disclosure). */
export function scoreWasUsed(reasons: readonly DecisionReason[]): boolean {
  return reasons.some((r) => r.rule === 'credit_score' && r.value !== null);
}
