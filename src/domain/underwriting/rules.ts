/**
 * Underwriting rules as data. Each rule has an approval threshold and a referral limit: within
 * the threshold it passes; a near miss (up to the referral limit) refers the application to a
 * person; a miss beyond the referral limit declines it.
 *
 * Defaults, and where they come from:
 * - back-end DTI ≤ 43 %: the Qualified Mortgage limit of Reg Z §1026.43(e)(2)(vi) before the 2021
 *   price-based rule; referral up to 50 %, the agencies' ceiling with compensating factors.
 * - LTV ≤ 97 %: the highest conventional LTV (Fannie Mae HomeReady / Freddie Mac Home Possible);
 *   referral up to 100 %, beyond which the loan exceeds its collateral.
 * - credit score ≥ 620: the agencies' minimum for a conventional loan; referral down to 580, the
 *   FHA minimum for a 3.5 % down payment.
 * - amount ≤ 832,750: the FHFA baseline conforming loan limit for 2026; referral up to 1,249,125,
 *   the 2026 high-cost-area ceiling (150 % of the baseline). Above it the loan is jumbo.
 */
import type { components } from '../../../generated/api.d.ts';
import { DEFAULT_CONDITIONS } from '../applications/conditions.ts';

export type UnderwritingRules = Omit<components['schemas']['UnderwritingRules'], 'updatedAt' | 'livemode'>;
/** The rules that judge a number (the conditions attached at approval are not one). */
export type RuleKey = Exclude<keyof UnderwritingRules, 'conditions'>;

export const DEFAULT_RULES: UnderwritingRules = {
  debtToIncome: { approveAtMost: 43, referAtMost: 50 },
  loanToValue: { approveAtMost: 97, referAtMost: 100 },
  creditScore: { approveAtLeast: 620, referAtLeast: 580 },
  loanAmount: { approveAtMost: 832_750, referAtMost: 1_249_125 },
  conditions: [...DEFAULT_CONDITIONS],
};

/** `max` rules pass at or below the threshold; `min` rules at or above it. */
export type RuleDirection = 'max' | 'min';

export interface RuleLimits {
  direction: RuleDirection;
  /** The limit for an automatic approval. */
  threshold: number;
  /** The limit beyond which a miss declines instead of referring. */
  referralLimit: number;
}

/** One rule's limits, whatever its direction. */
export function limitsOf(rules: Pick<UnderwritingRules, RuleKey>, key: RuleKey): RuleLimits {
  if (key === 'creditScore') {
    return { direction: 'min', threshold: rules.creditScore.approveAtLeast, referralLimit: rules.creditScore.referAtLeast };
  }
  const limits = rules[key];
  return { direction: 'max', threshold: limits.approveAtMost, referralLimit: limits.referAtMost };
}

const RULE_KEYS: readonly RuleKey[] = ['debtToIncome', 'loanToValue', 'creditScore', 'loanAmount'];

export interface RulesProblem {
  pointer: string;
  message: string;
}

/** A referral limit on the wrong side of its threshold would make the near-miss band negative. */
export function checkRules(rules: Pick<UnderwritingRules, RuleKey>): RulesProblem[] {
  const found: RulesProblem[] = [];
  for (const key of RULE_KEYS) {
    const { direction, threshold, referralLimit } = limitsOf(rules, key);
    if (direction === 'max' && referralLimit < threshold) {
      found.push({ pointer: `/${key}/referAtMost`, message: `must be at least approveAtMost (${threshold})` });
    }
    if (direction === 'min' && referralLimit > threshold) {
      found.push({ pointer: `/${key}/referAtLeast`, message: `must be at most approveAtLeast (${threshold})` });
    }
  }
  return found;
}
