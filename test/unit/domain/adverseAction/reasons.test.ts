/**
 * The notice's principal reasons from the decision's failed rules: every combination of the four
 * rules' outcomes (pass, a near miss that refers, a miss that declines, and for three of them the
 * data missing), decided by the real rules, maps to model form C-1's wording; declines first, at
 * most four, each once.
 */
import { describe, expect, it } from 'vitest';
import { chosenReasons, NOTICE_REASONS, reasonsFromDecision, scoreWasUsed, type NoticeReasonCode } from '../../../../src/domain/adverseAction/reasons.ts';
import { decide, type UnderwritingFacts } from '../../../../src/domain/underwriting/decision.ts';
import { DEFAULT_RULES } from '../../../../src/domain/underwriting/rules.ts';

type State = 'pass' | 'refer' | 'decline' | 'missing';
const AT = '2026-11-21T18:30:00.000Z';

/** Facts that put each rule in the state asked (default rules: DTI 43/50 %, LTV 97/100 %, score 620/580, amount 832,750/1,249,125). */
function facts(dti: State, ltv: State, score: State, amount: Exclude<State, 'missing'>): UnderwritingFacts {
  const loan = { pass: 300_000, refer: 1_000_000, decline: 1_500_000 }[amount];
  const ltvPercent = { pass: 80, refer: 99, decline: 120, missing: 0 }[ltv];
  const payment = { pass: 3_000, refer: 4_000, decline: 6_000, missing: 0 }[dti];
  return {
    amount: loan,
    propertyValue: ltv === 'missing' ? null : Math.round((loan * 100) / ltvPercent),
    annualIncome: dti === 'missing' ? null : 120_000,
    monthlyDebts: dti === 'missing' ? null : 500,
    creditScore: { pass: 720, refer: 600, decline: 500, missing: null }[score],
    payment: dti === 'missing' ? null : { kind: 'payment', monthlyPayment: payment, source: 'pricing' },
  };
}

const CODE: Record<'dti' | 'ltv' | 'score' | 'amount', NoticeReasonCode> = {
  dti: 'excessive_obligations',
  ltv: 'insufficient_collateral',
  score: 'credit_score',
  amount: 'amount_exceeds_limit',
};

/** What the notice should say, written out from the rule: declines in the rules' order, then missing data, then refers; each once, four at most. */
function expected(states: Record<'dti' | 'ltv' | 'score' | 'amount', State>): NoticeReasonCode[] {
  const rules = ['dti', 'ltv', 'score', 'amount'] as const;
  const codes: NoticeReasonCode[] = rules.filter((r) => states[r] === 'decline').map((r) => CODE[r]);
  if (rules.some((r) => states[r] === 'missing')) codes.push('incomplete_application');
  for (const r of rules) if (states[r] === 'refer') codes.push(CODE[r]);
  return [...new Set(codes)].slice(0, 4);
}

const STATES: State[] = ['pass', 'refer', 'decline', 'missing'];
const combinations = STATES.flatMap((dti) =>
  STATES.flatMap((ltv) => STATES.flatMap((score) => (['pass', 'refer', 'decline'] as const).map((amount) => ({ dti, ltv, score, amount })))),
);

describe('reasonsFromDecision: every failed-rule combination', () => {
  it.each(combinations.map((c) => [`dti ${c.dti}, ltv ${c.ltv}, score ${c.score}, amount ${c.amount}`, c] as const))('%s', (_name, states) => {
    const decision = decide(facts(states.dti, states.ltv, states.score, states.amount), DEFAULT_RULES, AT);
    // The facts put each rule where the case says (a wrong fixture would prove nothing).
    const effects = Object.fromEntries(decision.reasons.map((r) => [r.rule, r.missing ? 'missing' : r.effect === 'approve' ? 'pass' : r.effect]));
    expect({ dti: effects.debt_to_income, ltv: effects.loan_to_value, score: effects.credit_score, amount: effects.loan_amount }).toEqual(states);
    const reasons = reasonsFromDecision(decision.reasons);
    expect(reasons.map((r) => r.code)).toEqual(expected(states));
    for (const reason of reasons) expect(reason.text).toBe(NOTICE_REASONS[reason.code]);
  });

  it("uses model form C-1's words for the four mappings the issue names", () => {
    expect(NOTICE_REASONS.excessive_obligations).toBe('Excessive obligations in relation to income');
    expect(NOTICE_REASONS.insufficient_collateral).toBe('Value or type of collateral not sufficient');
    expect(NOTICE_REASONS.credit_score).toBe('Credit score');
    expect(NOTICE_REASONS.incomplete_application).toBe('Credit application incomplete');
  });

  it('a zero income declines as insufficient income; a loan the sheet cannot price is outside the program', () => {
    const zero = decide({ ...facts('pass', 'pass', 'pass', 'pass'), annualIncome: 0 }, DEFAULT_RULES, AT);
    expect(reasonsFromDecision(zero.reasons).map((r) => r.code)).toEqual(['insufficient_income']);
    const refused = decide({ ...facts('pass', 'pass', 'pass', 'pass'), payment: { kind: 'refused', code: 'ltv_above_maximum', detail: 'LTV above the sheet' } }, DEFAULT_RULES, AT);
    expect(reasonsFromDecision(refused.reasons).map((r) => r.code)).toEqual(['outside_lending_program']);
  });

  it('the score disclosure is owed whenever the decision used a score, whether or not the score was a reason', () => {
    expect(scoreWasUsed(decide(facts('decline', 'pass', 'pass', 'pass'), DEFAULT_RULES, AT).reasons)).toBe(true);
    expect(scoreWasUsed(decide(facts('decline', 'pass', 'missing', 'pass'), DEFAULT_RULES, AT).reasons)).toBe(false);
  });
});

describe('chosenReasons: an underwriter picks from the same list', () => {
  it('keeps their order, each once, in the form\'s words', () => {
    expect(chosenReasons(['unverifiable_income', 'excessive_obligations', 'unverifiable_income'])).toEqual([
      { code: 'unverifiable_income', text: 'Unable to verify income' },
      { code: 'excessive_obligations', text: 'Excessive obligations in relation to income' },
    ]);
  });
});
