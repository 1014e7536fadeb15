/**
 * The automated pre-approval decision: pure, from the application's facts and the account's
 * rules. Every rule yields a reason; the outcome is `declined` when any rule declines, otherwise
 * `referred` when any rule refers (a near miss, missing data, a loan that cannot be priced),
 * otherwise `approved`.
 */
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api.d.ts';
import { exactCents, formatMoney } from '../applications/money.ts';
import { limitsOf, type RuleDirection, type RuleKey, type UnderwritingRules } from './rules.ts';

export type Decision = components['schemas']['Decision'];
export type DecisionReason = components['schemas']['DecisionReason'];
export type DecisionOutcome = Decision['outcome'];
export type RuleEffect = DecisionReason['effect'];
type FinancialField = NonNullable<DecisionReason['missing']>[number];

/** The monthly payment of the new mortgage, or why it could not be had. */
export type PaymentFact =
  | { kind: 'payment'; monthlyPayment: number; source: 'quote' | 'pricing' }
  | { kind: 'refused'; code: string; detail: string };

export interface UnderwritingFacts {
  amount: number;
  propertyValue: number | null;
  annualIncome: number | null;
  monthlyDebts: number | null;
  creditScore: number | null;
  /** Null when the payment was not asked for (income or debts missing). */
  payment: PaymentFact | null;
}

/** Percentages in reasons carry three decimals, rounded half-up; the rounded value is judged. */
const PERCENT_PLACES = 3;

/**
 * What a value does against a rule's limits. Compared as numbers: that is comparing the decimals
 * decimal.js reads them as (each number's shortest form), since distinct doubles have disjoint,
 * ordered rounding intervals and each shortest form lies in its own.
 */
export function judge(direction: RuleDirection, threshold: number, referralLimit: number, value: number): RuleEffect {
  if (direction === 'max') {
    if (value <= threshold) return 'approve';
    return value <= referralLimit ? 'refer' : 'decline';
  }
  if (value >= threshold) return 'approve';
  return value >= referralLimit ? 'refer' : 'decline';
}

/**
 * n / d rounded half-up to a whole number k, as the JSON number k / 1000 (thousandths of a
 * percent), for exact integers 0 ≤ n < 2^53 and 0 < d < 2^53 and a result below 10^9 (a million
 * percent); null when the ratio lies within 5·10^-10 of a half, or out of that range. The
 * decimal.js computations below divide at 20 significant digits: a relative error under 10^-19,
 * under 10^-10 of a unit at these sizes, so wherever the exact ratio is farther than that from a
 * half both round to the same k.
 */
function roundedThousandths(n: number, d: number): number | null {
  if (!(Number.isSafeInteger(n) && n >= 0 && Number.isSafeInteger(d) && d > 0)) return null;
  let q = Math.floor(n / d);
  // n − q·d exactly (q·d ≤ n < 2^53), with q one lower should the division have rounded up.
  let remainder = n - q * d;
  if (remainder < 0) {
    q -= 1;
    remainder += d;
  }
  if (q >= 1e9 || Math.abs(2 * remainder - d) <= d * 1e-9) return null;
  return (2 * remainder >= d ? q + 1 : q) / 1000;
}

/** Back-end debt-to-income, percent: (new payment + other monthly debts) over gross monthly income. */
export function debtToIncomePercent(monthlyPayment: number, monthlyDebts: number, annualIncome: number): number | null {
  if (annualIncome <= 0) return null;
  // In thousandths of a percent: 1200 · (payment + debts) / income · 1000, all in cents.
  const payment = exactCents(monthlyPayment);
  const debts = exactCents(monthlyDebts);
  const income = exactCents(annualIncome);
  // 1,200,000 · (payment + debts) stays an exact integer below 2^53 up to 7,505,999,378 cents.
  if (payment !== null && debts !== null && income !== null && payment + debts <= 7_505_999_378) {
    const fast = roundedThousandths(1_200_000 * (payment + debts), income);
    if (fast !== null) return fast;
  }
  const monthlyIncome = new Decimal(annualIncome).dividedBy(12);
  return new Decimal(monthlyPayment)
    .plus(monthlyDebts)
    .dividedBy(monthlyIncome)
    .times(100)
    .toDecimalPlaces(PERCENT_PLACES, Decimal.ROUND_HALF_UP)
    .toNumber();
}

/** Loan-to-value, percent. */
export function loanToValuePercent(amount: number, propertyValue: number): number {
  const amountCents = exactCents(amount);
  const valueCents = exactCents(propertyValue);
  // 100,000 · amount stays an exact integer below 2^53 up to 90,071,992,547 cents.
  if (amountCents !== null && valueCents !== null && amountCents <= 90_071_992_547) {
    const fast = roundedThousandths(100_000 * amountCents, valueCents);
    if (fast !== null) return fast;
  }
  return new Decimal(amount).dividedBy(propertyValue).times(100).toDecimalPlaces(PERCENT_PLACES, Decimal.ROUND_HALF_UP).toNumber();
}

interface RuleSpec {
  rule: 'debt_to_income' | 'loan_to_value' | 'credit_score' | 'loan_amount';
  key: RuleKey;
  unit: 'percent' | 'points' | 'USD';
  label: string;
  needs: FinancialField[];
}

/** The rules in the order they are reported. */
const RULE_SPECS: readonly RuleSpec[] = [
  { rule: 'debt_to_income', key: 'debtToIncome', unit: 'percent', label: 'debt-to-income', needs: ['annualIncome', 'monthlyDebts'] },
  { rule: 'loan_to_value', key: 'loanToValue', unit: 'percent', label: 'loan-to-value', needs: ['propertyValue'] },
  { rule: 'credit_score', key: 'creditScore', unit: 'points', label: 'credit score', needs: ['creditScore'] },
  { rule: 'loan_amount', key: 'loanAmount', unit: 'USD', label: 'loan amount', needs: [] },
];

const FINANCIAL_FIELDS: readonly FinancialField[] = ['annualIncome', 'monthlyDebts', 'creditScore', 'propertyValue'];
const FIELD_WORDS: Record<FinancialField, string> = {
  annualIncome: 'annual income',
  monthlyDebts: 'monthly debts',
  creditScore: 'credit score',
  propertyValue: 'property value',
};

function show(unit: RuleSpec['unit'], value: number): string {
  if (unit === 'percent') return `${value} %`;
  if (unit === 'USD') return formatMoney(value);
  return String(value);
}

function missingOf(facts: UnderwritingFacts): FinancialField[] {
  return FINANCIAL_FIELDS.filter((field) => facts[field] === null);
}

function financialDataReason(missing: FinancialField[]): DecisionReason {
  const base = { rule: 'financial_data', threshold: null, referralLimit: null, value: null, unit: null } as const;
  if (missing.length === 0) {
    return { ...base, result: 'pass', effect: 'approve', message: 'annual income, monthly debts, credit score and property value are all present' };
  }
  return {
    ...base,
    result: 'fail',
    effect: 'refer',
    missing,
    message: `missing ${missing.map((f) => FIELD_WORDS[f]).join(', ')}: a person must review the application`,
  };
}

/** The applicant's value for a rule, or why there is none. */
function valueFor(spec: RuleSpec, facts: UnderwritingFacts): { value: number; note?: string } | { value: null; effect: RuleEffect; message: string } {
  switch (spec.rule) {
    case 'loan_amount':
      return { value: facts.amount };
    case 'credit_score':
      return { value: facts.creditScore! };
    case 'loan_to_value':
      return { value: loanToValuePercent(facts.amount, facts.propertyValue!) };
    case 'debt_to_income': {
      const payment = facts.payment;
      if (payment === null) return { value: null, effect: 'refer', message: 'debt-to-income not evaluated: the monthly payment is unknown' };
      if (payment.kind === 'refused') {
        return { value: null, effect: 'refer', message: `debt-to-income not evaluated: the loan could not be priced (${payment.detail})` };
      }
      const dti = debtToIncomePercent(payment.monthlyPayment, facts.monthlyDebts!, facts.annualIncome!);
      if (dti === null) return { value: null, effect: 'decline', message: 'debt-to-income is unbounded: the annual income is zero' };
      const source = payment.source === 'quote' ? "the quote's" : 'the priced';
      return { value: dti, note: ` (${source} monthly payment of ${formatMoney(payment.monthlyPayment)} plus monthly debts of ${formatMoney(facts.monthlyDebts!)})` };
    }
  }
}

function ruleReason(spec: RuleSpec, rules: Pick<UnderwritingRules, RuleKey>, facts: UnderwritingFacts): DecisionReason {
  const { direction, threshold, referralLimit } = limitsOf(rules, spec.key);
  const base = { rule: spec.rule, threshold, referralLimit, unit: spec.unit } as const;
  const missing = spec.needs.filter((field) => facts[field] === null);
  if (missing.length > 0) {
    return {
      ...base,
      result: 'fail',
      effect: 'refer',
      value: null,
      missing,
      message: `${spec.label} not evaluated: missing ${missing.map((f) => FIELD_WORDS[f]).join(', ')}`,
    };
  }
  const found = valueFor(spec, facts);
  if (found.value === null) return { ...base, result: 'fail', effect: found.effect, value: null, message: found.message };

  const effect = judge(direction, threshold, referralLimit, found.value);
  const shown = `${spec.label} ${show(spec.unit, found.value)}${'note' in found && found.note ? found.note : ''}`;
  const bound = direction === 'max' ? 'limit' : 'minimum';
  const message =
    effect === 'approve'
      ? `${shown} ${direction === 'max' ? 'is within' : 'meets'} the approval ${bound} of ${show(spec.unit, threshold)}`
      : effect === 'refer'
        ? `${shown} is ${direction === 'max' ? 'above' : 'below'} the approval ${bound} of ${show(spec.unit, threshold)} but ${direction === 'max' ? 'within' : 'meets'} the referral ${bound} of ${show(spec.unit, referralLimit)}`
        : `${shown} is ${direction === 'max' ? 'above' : 'below'} the referral ${bound} of ${show(spec.unit, referralLimit)}`;
  return { ...base, result: effect === 'approve' ? 'pass' : 'fail', effect, value: found.value, message };
}

/** The outcome of a set of reasons: any decline declines, else any refer refers, else approved. */
export function outcomeOf(reasons: readonly DecisionReason[]): DecisionOutcome {
  if (reasons.some((r) => r.effect === 'decline')) return 'declined';
  if (reasons.some((r) => r.effect === 'refer')) return 'referred';
  return 'approved';
}

/** Decides an application by the rules. `decidedAt` is the caller's clock reading. */
export function decide(facts: UnderwritingFacts, rules: Pick<UnderwritingRules, RuleKey>, decidedAt: string): Decision {
  const reasons: DecisionReason[] = [financialDataReason(missingOf(facts))];
  for (const spec of RULE_SPECS) reasons.push(ruleReason(spec, rules, facts));
  if (facts.payment?.kind === 'refused') {
    reasons.push({
      rule: 'pricing',
      result: 'fail',
      effect: 'refer',
      threshold: null,
      referralLimit: null,
      value: null,
      unit: null,
      problemCode: facts.payment.code,
      message: `the rate sheet cannot price this loan: ${facts.payment.detail}`,
    });
  }
  return { outcome: outcomeOf(reasons), decidedAt, decidedBy: 'underwriting_rules', reasons };
}
