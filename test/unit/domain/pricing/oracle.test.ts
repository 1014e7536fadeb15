/**
 * The production pricing (scaled integers; the APR in doubles, in integer fixed point near a
 * rounding boundary) against the oracle, the decimal.js pricing in test/reference/pricing/: every
 * figure a quote publishes, and every message a refusal gives, must be the same, bit for bit, over
 * the whole input space the contract allows (amounts 0.01 to 999,999,999.99, note rates 0 to 50 %
 * with three decimals, terms 1 to 40 years, fees, LTV and credit-score bands).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthlyPaymentFromSheet, priceLoanFromSheet, type PricingOutcome } from '../../../../src/domain/pricing/quote.ts';
import { DEFAULT_RATE_SHEET, rateSheetFormIssues, rateSheetRuleIssues, type RateSheet } from '../../../../src/domain/pricing/rateSheet.ts';
import { majorUnits, percent } from '../../../../src/domain/pricing/units.ts';
import { refusalError } from '../../../../src/services/pricing.ts';
import {
  monthlyPaymentFromSheet as oraclePaymentFromSheet,
  priceLoanFromSheet as oraclePriceLoan,
  type PricingOutcome as OracleOutcome,
} from '../../../reference/pricing/quote.ts';
import { refusalProblem, type RefusalProblem } from '../../../reference/pricing/refusal.ts';

type Outcome = { ok: true; published: Record<string, unknown> } | { ok: false; problem: RefusalProblem } | { threw: string };

/** What the API publishes of a production outcome: the JSON numbers of services/pricing.ts, or the problem a refusal becomes. */
function publish(run: () => PricingOutcome): Outcome {
  let outcome: PricingOutcome;
  try {
    outcome = run();
  } catch (err) {
    return { threw: String(err) };
  }
  if (!outcome.ok) {
    const error = refusalError(outcome.refusal);
    const errors = (error.facts as { errors?: RefusalProblem['errors'] }).errors ?? [];
    return { ok: false, problem: { code: error.code, detail: error.detail, errors } };
  }
  const loan = outcome.loan;
  return {
    ok: true,
    published: {
      amount: majorUnits(loan.amountCents),
      term: loan.term,
      propertyValue: loan.propertyValueCents === null ? null : majorUnits(loan.propertyValueCents),
      creditScore: loan.creditScore,
      interestRate: percent(loan.interestRateThousandths),
      apr: percent(loan.aprThousandths),
      monthlyPayment: majorUnits(loan.monthlyPaymentCents),
      numberOfPayments: loan.numberOfPayments,
      finalPayment: majorUnits(loan.finalPaymentCents),
      totalInterest: majorUnits(loan.totalInterestCents),
      totalOfPayments: majorUnits(loan.totalOfPaymentsCents),
      fees: loan.fees.map((fee) => ({ name: fee.name, amount: majorUnits(fee.amountCents), prepaidFinanceCharge: fee.prepaidFinanceCharge })),
      amountFinanced: majorUnits(loan.amountFinancedCents),
      financeCharge: majorUnits(loan.financeChargeCents),
      ltv: loan.ltvThousandths === null ? null : percent(loan.ltvThousandths),
      lockPeriodDays: loan.lockPeriodDays,
      quoteValidityDays: loan.quoteValidityDays,
    },
  };
}

/** The same of the oracle, as services/pricing.ts published it before (Decimal.toNumber()). */
function publishOracle(run: () => OracleOutcome): Outcome {
  let outcome: OracleOutcome;
  try {
    outcome = run();
  } catch (err) {
    return { threw: String(err) };
  }
  if (!outcome.ok) return { ok: false, problem: refusalProblem(outcome.refusal) };
  const loan = outcome.loan;
  return {
    ok: true,
    published: {
      amount: loan.amount.toNumber(),
      term: loan.term,
      propertyValue: loan.propertyValue ? loan.propertyValue.toNumber() : null,
      creditScore: loan.creditScore,
      interestRate: loan.interestRate.toNumber(),
      apr: loan.apr.toNumber(),
      monthlyPayment: loan.monthlyPayment.toNumber(),
      numberOfPayments: loan.numberOfPayments,
      finalPayment: loan.finalPayment.toNumber(),
      totalInterest: loan.totalInterest.toNumber(),
      totalOfPayments: loan.totalOfPayments.toNumber(),
      fees: loan.fees.map((fee) => ({ name: fee.name, amount: fee.amount.toNumber(), prepaidFinanceCharge: fee.prepaidFinanceCharge })),
      amountFinanced: loan.amountFinanced.toNumber(),
      financeCharge: loan.financeCharge.toNumber(),
      ltv: loan.ltv ? loan.ltv.toNumber() : null,
      lockPeriodDays: loan.lockPeriodDays,
      quoteValidityDays: loan.quoteValidityDays,
    },
  };
}

/** Bit for bit: the JSON text, and each number's bits (no −0 for 0, no neighbouring double). */
function expectSame(production: Outcome, oracle: Outcome): void {
  expect(JSON.stringify(production)).toBe(JSON.stringify(oracle));
  expect(production).toStrictEqual(oracle);
}

const thousandths = (max: number, min = 0) => fc.integer({ min, max }).map((t) => t / 1000);
const centsAmount = (min: number, max: number) => fc.integer({ min, max }).map((c) => c / 100);

/** A rate sheet anywhere in the contract's space: one base rate 0–30 % for every term, bands of ±10 points, fees. */
const sheets: fc.Arbitrary<RateSheet> = fc
  .record({
    rate: thousandths(30_000),
    ltvAdjustments: fc.tuple(thousandths(500, -500), thousandths(1_000, -250), fc.oneof(thousandths(1_500), thousandths(10_000, -10_000))),
    scoreAdjustments: fc.tuple(fc.oneof(thousandths(3_000), thousandths(10_000, -10_000)), thousandths(1_500), thousandths(500, -250)),
    maxLtv: fc.oneof(fc.constant(97), thousandths(150_000, 1_000)),
    originationFeePercent: thousandths(10_000),
    flatFees: fc.array(fc.record({ amount: centsAmount(0, 100_000_000), prepaidFinanceCharge: fc.boolean() }), { maxLength: 3 }),
  })
  .map(({ rate, ltvAdjustments, scoreAdjustments, maxLtv, originationFeePercent, flatFees }) => ({
    ...DEFAULT_RATE_SHEET,
    baseRates: [{ minTermYears: 1, maxTermYears: 40, rate }],
    ltvAdjustments: [
      { aboveLtv: 0, upToLtv: 60, adjustment: ltvAdjustments[0] },
      { aboveLtv: 60, upToLtv: 80, adjustment: ltvAdjustments[1] },
      { aboveLtv: 80, upToLtv: 150, adjustment: ltvAdjustments[2] },
    ],
    creditScoreAdjustments: [
      { minScore: 300, maxScore: 619, adjustment: scoreAdjustments[0] },
      { minScore: 620, maxScore: 739, adjustment: scoreAdjustments[1] },
      { minScore: 740, maxScore: 850, adjustment: scoreAdjustments[2] },
    ],
    maxLtv,
    minAmount: 0.01,
    maxAmount: 999_999_999.99,
    originationFeePercent,
    flatFees: flatFees.map((fee, k) => ({ name: `fee${k}`, ...fee })),
  }));

/** A quote request over the contract's space, LTV from 10 % to 160 %, and now and then off the sheet. */
const requests = fc.record({
  amount: fc.oneof(
    { weight: 20, arbitrary: centsAmount(100_000, 5_000_000_000) },
    { weight: 4, arbitrary: centsAmount(1, 99_999_999_999) },
    { weight: 1, arbitrary: centsAmount(1, 120_000_000_000) },
  ),
  term: fc.oneof({ weight: 20, arbitrary: fc.integer({ min: 1, max: 40 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 41 }) }),
  ltvPercent: fc.option(fc.integer({ min: 10_000, max: 160_000 }), { nil: null }),
  creditScore: fc.option(fc.integer({ min: 300, max: 850 }), { nil: null }),
});

/** A property value from the LTV, rounded to the cent, so the LTV itself is arbitrary. */
const requestOf = ({ amount, term, ltvPercent, creditScore }: { amount: number; term: number; ltvPercent: number | null; creditScore: number | null }) => ({
  amount,
  term,
  propertyValue: ltvPercent === null ? null : Math.max(1, Math.round((amount * 100_000) / ltvPercent)) / 100,
  creditScore,
});

describe('the production pricing against the oracle', () => {
  it('publishes every figure of every quote exactly as the oracle does', () => {
    fc.assert(
      fc.property(sheets, requests, (sheet, r) => {
        const request = requestOf(r);
        expectSame(publish(() => priceLoanFromSheet(sheet, request)), publishOracle(() => oraclePriceLoan(sheet, request)));
      }),
      { numRuns: 1500 },
    );
  });

  it('publishes the default sheet’s quotes exactly as the oracle does', () => {
    fc.assert(
      fc.property(requests, (r) => {
        const request = requestOf(r);
        expectSame(publish(() => priceLoanFromSheet(DEFAULT_RATE_SHEET, request)), publishOracle(() => oraclePriceLoan(DEFAULT_RATE_SHEET, request)));
      }),
      { numRuns: 500, examples: [[{ amount: 350_000, term: 30, ltvPercent: 80_000, creditScore: 742 }]] },
    );
  });

  it('gives underwriting the monthly payment the oracle gives, and the same refusals', () => {
    fc.assert(
      fc.property(sheets, requests, (sheet, r) => {
        const request = requestOf(r);
        const production = monthlyPaymentFromSheet(sheet, request);
        const oracle = oraclePaymentFromSheet(sheet, request);
        expect(production.ok ? majorUnits(production.monthlyPaymentCents) : refusalError(production.refusal).detail).toStrictEqual(
          oracle.ok ? oracle.monthlyPayment.toNumber() : refusalProblem(oracle.refusal).detail,
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses what the oracle refused, with the same messages', () => {
    const request = { amount: 350_000, term: 30, propertyValue: 437_500, creditScore: 742 };
    const cases: Array<[RateSheet, typeof request]> = [
      [DEFAULT_RATE_SHEET, { ...request, amount: 999.99 }],
      [DEFAULT_RATE_SHEET, { ...request, amount: 50_000_000.01 }],
      [DEFAULT_RATE_SHEET, { ...request, amount: 1_234_567_890.12 }],
      [DEFAULT_RATE_SHEET, { ...request, amount: 350_000.005 }],
      [DEFAULT_RATE_SHEET, { ...request, amount: 1e21 }],
      [DEFAULT_RATE_SHEET, { ...request, term: 0 }],
      [DEFAULT_RATE_SHEET, { ...request, propertyValue: 0.001 }],
      [DEFAULT_RATE_SHEET, { ...request, propertyValue: 300_000 }], // LTV 116.667
      [DEFAULT_RATE_SHEET, { ...request, amount: 999_999_999.99, propertyValue: 0.01 }], // LTV of ten trillion percent
      [{ ...DEFAULT_RATE_SHEET, maxLtv: 96.125, minAmount: 0.01, maxAmount: 999_999_999.99 }, { ...request, propertyValue: 364_000 }],
      [{ ...DEFAULT_RATE_SHEET, minAmount: 1_000.5, maxAmount: 2_500_000.25 }, { ...request, amount: 1_000.49 }],
      [DEFAULT_RATE_SHEET, { ...request, creditScore: 299 }],
      [{ ...DEFAULT_RATE_SHEET, baseRates: [{ minTermYears: 15, maxTermYears: 15, rate: 5.5 }] }, request],
    ];
    for (const [sheet, r] of cases) {
      const production = publish(() => priceLoanFromSheet(sheet, r));
      expect(production).toMatchObject({ ok: false });
      expectSame(production, publishOracle(() => oraclePriceLoan(sheet, r)));
    }
  });
});

/** A sheet that keeps every rule and quotes the whole contract: 0.01 to 999,999,999.99, every term, LTV to 150 %. */
const WIDEST: RateSheet = {
  ...DEFAULT_RATE_SHEET,
  maxLtv: 150,
  minAmount: 0.01,
  maxAmount: 999_999_999.99,
  originationFeePercent: 10,
  flatFees: [{ name: 'appraisal', amount: 1_000_000, prepaidFinanceCharge: false }],
  ltvAdjustments: [{ aboveLtv: 0, upToLtv: 150, adjustment: 10 }],
  creditScoreAdjustments: [{ minScore: 300, maxScore: 850, adjustment: 10 }],
};

describe('every input the contract allows', () => {
  it('is priced, with no fallback: the widest sheet, at its extremes, states what the oracle states', () => {
    expect([...rateSheetFormIssues(WIDEST), ...rateSheetRuleIssues(WIDEST)]).toEqual([]);
    for (const rate of [0, 0.001, 30]) {
      const sheet = { ...WIDEST, baseRates: [{ minTermYears: 1, maxTermYears: 40, rate }] };
      for (const amount of [0.01, 0.02, 1_000, 999_999_999.99]) {
        for (const term of [1, 40]) {
          // Without a property value and a score, and with both at their worst: LTV 150 %, score 300 (+20 points).
          for (const [propertyValue, creditScore] of [[null, null], [Math.ceil(amount / 0.015) / 100, 300]]) {
            const request = { amount, term, propertyValue, creditScore };
            const production = publish(() => priceLoanFromSheet(sheet, request));
            expect(production, JSON.stringify({ rate, ...request })).toMatchObject({ ok: true });
            expectSame(production, publishOracle(() => oraclePriceLoan(sheet, request)));
          }
        }
      }
    }
  });

  it('is priced or refused, never failed, on any sheet that keeps the rules', () => {
    fc.assert(
      fc.property(sheets, requests, (sheet, r) => {
        const request = requestOf(r);
        fc.pre(request.amount <= 999_999_999.99 && request.term >= 1 && request.term <= 40 && (request.propertyValue ?? 1) <= 999_999_999.99);
        fc.pre(rateSheetRuleIssues(sheet).length === 0);
        const outcome = priceLoanFromSheet(sheet, request);
        if (!outcome.ok) expect(['amount_out_of_bounds', 'ltv_above_maximum']).toContain(outcome.refusal.kind);
      }),
      { numRuns: 1000 },
    );
  });
});
