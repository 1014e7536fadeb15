import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  debtToIncomePercent,
  decide,
  judge,
  loanToValuePercent,
  outcomeOf,
  type DecisionReason,
  type UnderwritingFacts,
} from '../../../../src/domain/underwriting/decision.ts';
import { DEFAULT_RULES, checkRules } from '../../../../src/domain/underwriting/rules.ts';

const AT = '2026-11-21T18:30:00.000Z';

/**
 * A clean application that passes every default rule: monthly income 10,000, so the DTI in
 * percent is (payment + debts) / 100; property 100,000, so the LTV is amount / 1,000.
 */
function facts(change: Partial<UnderwritingFacts> & { paymentPlusDebts?: number } = {}): UnderwritingFacts {
  const { paymentPlusDebts = 3000, ...rest } = change;
  return {
    amount: 80_000,
    propertyValue: 100_000,
    annualIncome: 120_000,
    monthlyDebts: 500,
    creditScore: 720,
    payment: { kind: 'payment', monthlyPayment: paymentPlusDebts - 500, source: 'pricing' },
    ...rest,
  };
}

function reason(decision: ReturnType<typeof decide>, rule: DecisionReason['rule']): DecisionReason {
  const found = decision.reasons.find((r) => r.rule === rule);
  if (!found) throw new Error(`no ${rule} reason in ${JSON.stringify(decision.reasons)}`);
  return found;
}

type Row = [label: string, change: Parameters<typeof facts>[0], value: number, effect: DecisionReason['effect'], outcome: string];

describe('each rule at, just under and just over its thresholds (default rules)', () => {
  const dti: Row[] = [
    ['DTI 42.999 % (just under 43)', { paymentPlusDebts: 4299.9 }, 42.999, 'approve', 'approved'],
    ['DTI 43 % (at the approval limit)', { paymentPlusDebts: 4300 }, 43, 'approve', 'approved'],
    ['DTI 43.001 % (just over 43)', { paymentPlusDebts: 4300.1 }, 43.001, 'refer', 'referred'],
    ['DTI 49.999 % (just under the referral limit)', { paymentPlusDebts: 4999.9 }, 49.999, 'refer', 'referred'],
    ['DTI 50 % (at the referral limit)', { paymentPlusDebts: 5000 }, 50, 'refer', 'referred'],
    ['DTI 50.001 % (just over the referral limit)', { paymentPlusDebts: 5000.1 }, 50.001, 'decline', 'declined'],
  ];
  it.each(dti)('%s → %s', (_label, change, value, effect, outcome) => {
    const decision = decide(facts(change), DEFAULT_RULES, AT);
    expect(reason(decision, 'debt_to_income')).toMatchObject({ value, effect, result: effect === 'approve' ? 'pass' : 'fail', threshold: 43, referralLimit: 50, unit: 'percent' });
    expect(decision.outcome).toBe(outcome);
  });

  const ltv: Row[] = [
    ['LTV 96.999 %', { amount: 96_999 }, 96.999, 'approve', 'approved'],
    ['LTV 97 % (at the approval limit)', { amount: 97_000 }, 97, 'approve', 'approved'],
    ['LTV 97.001 %', { amount: 97_001 }, 97.001, 'refer', 'referred'],
    ['LTV 99.999 %', { amount: 99_999 }, 99.999, 'refer', 'referred'],
    ['LTV 100 % (at the referral limit)', { amount: 100_000 }, 100, 'refer', 'referred'],
    ['LTV 100.001 %', { amount: 100_001 }, 100.001, 'decline', 'declined'],
  ];
  it.each(ltv)('%s → %s', (_label, change, value, effect, outcome) => {
    const decision = decide(facts(change), DEFAULT_RULES, AT);
    expect(reason(decision, 'loan_to_value')).toMatchObject({ value, effect, threshold: 97, referralLimit: 100, unit: 'percent' });
    expect(decision.outcome).toBe(outcome);
  });

  const credit: Row[] = [
    ['credit score 621', { creditScore: 621 }, 621, 'approve', 'approved'],
    ['credit score 620 (at the approval minimum)', { creditScore: 620 }, 620, 'approve', 'approved'],
    ['credit score 619', { creditScore: 619 }, 619, 'refer', 'referred'],
    ['credit score 581', { creditScore: 581 }, 581, 'refer', 'referred'],
    ['credit score 580 (at the referral minimum)', { creditScore: 580 }, 580, 'refer', 'referred'],
    ['credit score 579', { creditScore: 579 }, 579, 'decline', 'declined'],
  ];
  it.each(credit)('%s → %s', (_label, change, value, effect, outcome) => {
    const decision = decide(facts(change), DEFAULT_RULES, AT);
    expect(reason(decision, 'credit_score')).toMatchObject({ value, effect, threshold: 620, referralLimit: 580, unit: 'points' });
    expect(decision.outcome).toBe(outcome);
  });

  // A property value that keeps the LTV low, so only the amount rule is in play.
  const big = { propertyValue: 10_000_000 };
  const amount: Row[] = [
    ['amount 832,749.99', { ...big, amount: 832_749.99 }, 832_749.99, 'approve', 'approved'],
    ['amount 832,750 (the 2026 conforming limit)', { ...big, amount: 832_750 }, 832_750, 'approve', 'approved'],
    ['amount 832,750.01', { ...big, amount: 832_750.01 }, 832_750.01, 'refer', 'referred'],
    ['amount 1,249,124.99', { ...big, amount: 1_249_124.99 }, 1_249_124.99, 'refer', 'referred'],
    ['amount 1,249,125 (the high-cost-area ceiling)', { ...big, amount: 1_249_125 }, 1_249_125, 'refer', 'referred'],
    ['amount 1,249,125.01', { ...big, amount: 1_249_125.01 }, 1_249_125.01, 'decline', 'declined'],
  ];
  it.each(amount)('%s → %s', (_label, change, value, effect, outcome) => {
    const decision = decide(facts(change), DEFAULT_RULES, AT);
    expect(reason(decision, 'loan_amount')).toMatchObject({ value, effect, threshold: 832_750, referralLimit: 1_249_125, unit: 'USD' });
    expect(decision.outcome).toBe(outcome);
  });
});

describe('rules set by the account', () => {
  const strict = {
    debtToIncome: { approveAtMost: 36, referAtMost: 36 },
    loanToValue: { approveAtMost: 80, referAtMost: 90 },
    creditScore: { approveAtLeast: 700, referAtLeast: 660 },
    loanAmount: { approveAtMost: 500_000, referAtMost: 600_000 },
  };

  it.each([
    ['DTI 36 % passes a 36 % limit', { paymentPlusDebts: 3600 }, 'approved'],
    ['DTI 36.001 % declines when the referral limit equals the threshold (no near-miss band)', { paymentPlusDebts: 3600.1 }, 'declined'],
    ['LTV 80.001 % refers under an 80/90 rule', { amount: 80_001 }, 'referred'],
    ['credit score 659 declines under a 700/660 rule', { creditScore: 659 }, 'declined'],
  ] as const)('%s', (_label, change, outcome) => {
    expect(decide(facts(change), strict, AT).outcome).toBe(outcome);
  });
});

describe('missing financial data', () => {
  it('refers, and the financial_data reason lists what is missing', () => {
    const decision = decide(facts({ annualIncome: null, propertyValue: null, payment: null }), DEFAULT_RULES, AT);
    expect(decision.outcome).toBe('referred');
    expect(reason(decision, 'financial_data')).toMatchObject({ result: 'fail', effect: 'refer', missing: ['annualIncome', 'propertyValue'] });
    expect(reason(decision, 'debt_to_income')).toMatchObject({ result: 'fail', effect: 'refer', value: null, missing: ['annualIncome'] });
    expect(reason(decision, 'loan_to_value')).toMatchObject({ result: 'fail', effect: 'refer', value: null, missing: ['propertyValue'] });
  });

  it.each(['annualIncome', 'monthlyDebts', 'creditScore', 'propertyValue'] as const)('missing only %s refers', (field) => {
    const decision = decide(facts({ [field]: null }), DEFAULT_RULES, AT);
    expect(decision.outcome).toBe('referred');
    expect(reason(decision, 'financial_data').missing).toEqual([field]);
  });

  it('a miss far beyond a limit still declines when other data is missing', () => {
    const decision = decide(facts({ creditScore: 540, annualIncome: null, payment: null }), DEFAULT_RULES, AT);
    expect(decision.outcome).toBe('declined');
  });

  it('with every field present the financial_data reason passes', () => {
    expect(reason(decide(facts(), DEFAULT_RULES, AT), 'financial_data')).toMatchObject({ result: 'pass', effect: 'approve' });
  });
});

describe('the monthly payment', () => {
  it('a loan the rate sheet refuses to price refers, with a pricing reason carrying the refusal', () => {
    const decision = decide(facts({ payment: { kind: 'refused', code: 'ltv_above_maximum', detail: 'LTV 98 % is above 97 %' } }), DEFAULT_RULES, AT);
    expect(decision.outcome).toBe('referred');
    expect(reason(decision, 'pricing')).toMatchObject({ result: 'fail', effect: 'refer', problemCode: 'ltv_above_maximum' });
    expect(reason(decision, 'debt_to_income')).toMatchObject({ value: null, effect: 'refer' });
  });

  it('no pricing reason is listed when the loan was priced', () => {
    expect(decide(facts(), DEFAULT_RULES, AT).reasons.map((r) => r.rule)).toEqual([
      'financial_data',
      'debt_to_income',
      'loan_to_value',
      'credit_score',
      'loan_amount',
    ]);
  });

  it("the DTI message names the quote's payment when it came from a quote", () => {
    const decision = decide(facts({ payment: { kind: 'payment', monthlyPayment: 2212.24, source: 'quote' } }), DEFAULT_RULES, AT);
    expect(reason(decision, 'debt_to_income').message).toContain("the quote's monthly payment of 2,212.24");
  });

  it('zero income declines on DTI (the ratio is unbounded)', () => {
    const decision = decide(facts({ annualIncome: 0 }), DEFAULT_RULES, AT);
    expect(reason(decision, 'debt_to_income')).toMatchObject({ value: null, effect: 'decline' });
    expect(decision.outcome).toBe('declined');
  });
});

describe('ratios', () => {
  it.each([
    [2212.24, 650, 120_000, 28.622],
    [3650, 650, 120_000, 43],
    [1000, 0, 36_000, 33.333],
    [1000, 0, 18_000, 66.667],
  ])('DTI of payment %s + debts %s on income %s is %s %', (payment, debts, income, expected) => {
    expect(debtToIncomePercent(payment, debts, income)).toBe(expected);
  });

  it.each([
    [350_000, 450_000, 77.778],
    [97_000, 100_000, 97],
    [1, 3, 33.333],
    [2, 3, 66.667],
  ])('LTV of %s on %s is %s %', (amount, value, expected) => {
    expect(loanToValuePercent(amount, value)).toBe(expected);
  });
});

describe('properties of the decision', () => {
  const anyFacts = fc.record({
    amount: fc.integer({ min: 1_000, max: 3_000_000 }),
    propertyValue: fc.option(fc.integer({ min: 1_000, max: 5_000_000 }), { nil: null }),
    annualIncome: fc.option(fc.integer({ min: 0, max: 2_000_000 }), { nil: null }),
    monthlyDebts: fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: null }),
    creditScore: fc.option(fc.integer({ min: 300, max: 850 }), { nil: null }),
    monthlyPayment: fc.integer({ min: 1, max: 30_000 }),
  });
  const toFacts = ({ monthlyPayment, ...f }: { monthlyPayment: number } & Omit<UnderwritingFacts, 'payment'>): UnderwritingFacts => ({
    ...f,
    payment: f.annualIncome === null || f.monthlyDebts === null ? null : { kind: 'payment', monthlyPayment, source: 'pricing' },
  });
  const rank = { approved: 0, referred: 1, declined: 2 } as const;

  it('a rule passes exactly when its effect is approve, and the outcome follows the worst effect', () => {
    fc.assert(
      fc.property(anyFacts, (f) => {
        const decision = decide(toFacts(f), DEFAULT_RULES, AT);
        for (const r of decision.reasons) expect(r.result === 'pass').toBe(r.effect === 'approve');
        expect(decision.outcome).toBe(outcomeOf(decision.reasons));
        expect(decision.decidedAt).toBe(AT);
        expect(decision.decidedBy).toBe('underwriting_rules');
      }),
    );
  });

  it('approval needs every field: an application missing any is never approved', () => {
    fc.assert(
      fc.property(anyFacts, (f) => {
        const facts = toFacts(f);
        const missing = [facts.annualIncome, facts.monthlyDebts, facts.creditScore, facts.propertyValue].some((v) => v === null);
        if (missing) expect(decide(facts, DEFAULT_RULES, AT).outcome).not.toBe('approved');
      }),
    );
  });

  it('a better credit score never makes the outcome worse', () => {
    fc.assert(
      fc.property(anyFacts, fc.integer({ min: 0, max: 200 }), (f, raise) => {
        if (f.creditScore === null) return;
        const before = decide(toFacts(f), DEFAULT_RULES, AT).outcome;
        const after = decide(toFacts({ ...f, creditScore: Math.min(850, f.creditScore + raise) }), DEFAULT_RULES, AT).outcome;
        expect(rank[after]).toBeLessThanOrEqual(rank[before]);
      }),
    );
  });

  it('more income never makes the outcome worse', () => {
    fc.assert(
      fc.property(anyFacts, fc.integer({ min: 0, max: 500_000 }), (f, more) => {
        if (f.annualIncome === null) return;
        const before = decide(toFacts(f), DEFAULT_RULES, AT).outcome;
        const after = decide(toFacts({ ...f, annualIncome: f.annualIncome + more }), DEFAULT_RULES, AT).outcome;
        expect(rank[after]).toBeLessThanOrEqual(rank[before]);
      }),
    );
  });
});

describe('judge', () => {
  it.each([
    ['max', 43, 50, 43, 'approve'],
    ['max', 43, 50, 50, 'refer'],
    ['max', 43, 50, 50.0001, 'decline'],
    ['min', 620, 580, 620, 'approve'],
    ['min', 620, 580, 580, 'refer'],
    ['min', 620, 580, 579.999, 'decline'],
  ] as const)('%s rule %s/%s judges %s as %s', (direction, threshold, referral, value, effect) => {
    expect(judge(direction, threshold, referral, value)).toBe(effect);
  });
});

describe('checkRules', () => {
  it('accepts the defaults', () => {
    expect(checkRules(DEFAULT_RULES)).toEqual([]);
  });

  it('refuses a referral limit on the wrong side of its threshold, naming where', () => {
    const broken = {
      ...DEFAULT_RULES,
      debtToIncome: { approveAtMost: 45, referAtMost: 44 },
      creditScore: { approveAtLeast: 620, referAtLeast: 640 },
    };
    expect(checkRules(broken).map((p) => p.pointer)).toEqual(['/debtToIncome/referAtMost', '/creditScore/referAtLeast']);
  });
});

describe('judge', () => {
  // The decimal.js comparison judge made, kept as the reference it must equal.
  const reference = (direction: 'max' | 'min', threshold: number, referralLimit: number, value: number) => {
    const v = new Decimal(value);
    if (direction === 'max') return v.lte(threshold) ? 'approve' : v.lte(referralLimit) ? 'refer' : 'decline';
    return v.gte(threshold) ? 'approve' : v.gte(referralLimit) ? 'refer' : 'decline';
  };
  it('decides as the comparison of decimals did, for any numbers', () => {
    const number = fc.oneof(fc.double({ noNaN: true }), fc.integer({ min: 0, max: 100_000 }).map((t) => t / 1000), fc.constantFrom(0, -0, 43, 43.0001));
    fc.assert(
      fc.property(fc.constantFrom('max' as const, 'min' as const), number, number, number, (direction, threshold, referralLimit, value) => {
        expect(judge(direction, threshold, referralLimit, value)).toBe(reference(direction, threshold, referralLimit, value));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('debtToIncomePercent and loanToValuePercent', () => {
  // The decimal.js computations they were, kept as the reference they must equal bit for bit.
  const reference = {
    dti: (payment: number, debts: number, income: number) =>
      income <= 0
        ? null
        : new Decimal(payment).plus(debts).dividedBy(new Decimal(income).dividedBy(12)).times(100).toDecimalPlaces(3, Decimal.ROUND_HALF_UP).toNumber(),
    ltv: (amount: number, value: number) => new Decimal(amount).dividedBy(value).times(100).toDecimalPlaces(3, Decimal.ROUND_HALF_UP).toNumber(),
  };
  const money = fc.oneof(
    fc.integer({ min: 0, max: 100_000_000_000 }).map((c) => c / 100),
    fc.integer({ min: 0, max: 2_000_000 }).map((c) => c / 100),
    fc.double({ min: 0, max: 1e12, noNaN: true }),
  );
  it('give what decimal.js gave, for any amounts', () => {
    fc.assert(
      fc.property(money, money, money, (a, b, c) => {
        expect(Object.is(debtToIncomePercent(a, b, c), reference.dti(a, b, c))).toBe(true);
        if (b > 0) expect(Object.is(loanToValuePercent(a, b), reference.ltv(a, b))).toBe(true);
      }),
      { numRuns: 30_000 },
    );
  });
  it('give what decimal.js gave at exact halves and next to them', () => {
    // 1,200,000 · s / i = k + ½ exactly: i = 2,400,000 · s / (2k + 1), with s a multiple of 2k + 1.
    for (const k of [0, 1, 7, 4_999, 37_123, 999_999]) {
      for (const step of [1, 3, 11]) {
        const s = (2 * k + 1) * step;
        const income = (2_400_000 * step) / 1; // cents
        for (const delta of [-2, -1, 0, 1, 2]) {
          const i = income + delta;
          const args = [s / 100, 0, i / 100] as const;
          expect(Object.is(debtToIncomePercent(...args), reference.dti(...args)), `${args}`).toBe(true);
          expect(Object.is(loanToValuePercent(s / 100, i / 100), reference.ltv(s / 100, i / 100)), `${args}`).toBe(true);
        }
      }
    }
    // Halves whose monthly income (income / 12) decimal.js must round: 1,200,000 · j·t / (800,000 · t) = 1.5 · j, j odd.
    for (const j of [1, 5, 7, 333, 12_345]) {
      for (const t of [1, 2, 7, 1_000_001]) {
        const args = [(j * t) / 100, 0, (800_000 * t) / 100] as const;
        expect(Object.is(debtToIncomePercent(...args), reference.dti(...args)), `${args}`).toBe(true);
      }
    }
    // LTV halves with a quotient decimal.js rounds: 100,000 · a / v = k + ½ for v = 3 · 2^7 · 5^... : v = 600,000 · t / 3, a = (2k+1) · t.
    for (const k of [0, 4, 1_234]) {
      for (const t of [1, 2, 5]) {
        const v = 200_000 * t;
        const a = ((2 * k + 1) * t) / 1;
        expect(Object.is(loanToValuePercent(a / 100, v / 100), reference.ltv(a / 100, v / 100)), `${a} ${v}`).toBe(true);
      }
    }
  });
});
