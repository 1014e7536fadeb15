import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_SHEET, hasAtMostDecimals, rateSheetFormIssues, rateSheetRuleIssues, type RateSheet } from '../../../../src/domain/pricing/rateSheet.ts';
import { negativeRateIssues, prepaidChargeIssues } from '../../../reference/pricing/rateSheetRules.ts';

const sheet = (changes: Partial<RateSheet>): RateSheet => ({ ...structuredClone(DEFAULT_RATE_SHEET), ...changes });
const pointers = (issues: Array<{ pointer: string }>) => issues.map((issue) => issue.pointer);

describe('the default rate sheet', () => {
  it('keeps every rule and prices every whole term from 1 to 40 years', () => {
    expect(rateSheetFormIssues(DEFAULT_RATE_SHEET)).toEqual([]);
    expect(rateSheetRuleIssues(DEFAULT_RATE_SHEET)).toEqual([]);
    for (let term = 1; term <= 40; term++) {
      expect(DEFAULT_RATE_SHEET.baseRates.filter((b) => b.minTermYears <= term && term <= b.maxTermYears)).toHaveLength(1);
    }
  });
});

describe('hasAtMostDecimals', () => {
  it.each([
    [0.29, 2, true],
    [4.35, 2, true],
    [350000.57, 2, true],
    [1000.005, 2, false],
    [6.125, 3, true],
    [6.1255, 3, false],
  ])('%d has at most %d decimals: %s (decided on the decimal form, not by binary remainders)', (value, places, expected) => {
    expect(hasAtMostDecimals(value, places)).toBe(expected);
  });
});

describe('rateSheetFormIssues', () => {
  it('points at a rate with more than three decimals and an amount with more than two', () => {
    const issues = rateSheetFormIssues(
      sheet({
        baseRates: [{ minTermYears: 1, maxTermYears: 40, rate: 6.1255 }],
        flatFees: [{ name: 'appraisal', amount: 650.005, prepaidFinanceCharge: false }],
      }),
    );
    expect(pointers(issues)).toEqual(['/baseRates/0/rate', '/flatFees/0/amount']);
  });
});

describe('rateSheetRuleIssues', () => {
  it('refuses overlapping term bands but allows gaps (an unpriced term)', () => {
    const overlapping = sheet({
      baseRates: [
        { minTermYears: 1, maxTermYears: 15, rate: 5.5 },
        { minTermYears: 15, maxTermYears: 30, rate: 6 },
      ],
    });
    expect(pointers(rateSheetRuleIssues(overlapping))).toEqual(['/baseRates/1']);
    const gappy = sheet({
      baseRates: [
        { minTermYears: 15, maxTermYears: 15, rate: 5.5 },
        { minTermYears: 30, maxTermYears: 30, rate: 6 },
      ],
    });
    expect(rateSheetRuleIssues(gappy)).toEqual([]);
  });

  it('refuses a term band whose bounds are reversed', () => {
    expect(pointers(rateSheetRuleIssues(sheet({ baseRates: [{ minTermYears: 30, maxTermYears: 10, rate: 6 }] })))).toEqual(['/baseRates/0']);
  });

  it('refuses LTV bands with a gap, an overlap, a start above 0, or an end below maxLtv', () => {
    const issues = rateSheetRuleIssues(
      sheet({
        maxLtv: 97,
        ltvAdjustments: [
          { aboveLtv: 5, upToLtv: 60, adjustment: 0 },
          { aboveLtv: 65, upToLtv: 80, adjustment: 0 },
          { aboveLtv: 75, upToLtv: 90, adjustment: 0 },
        ],
      }),
    );
    expect(pointers(issues)).toEqual(['/ltvAdjustments/0/aboveLtv', '/ltvAdjustments/1/aboveLtv', '/ltvAdjustments/2/aboveLtv', '/ltvAdjustments/2/upToLtv']);
    expect(issues[1]!.message).toMatch(/gap/);
    expect(issues[2]!.message).toMatch(/overlaps/);
  });

  it('refuses credit-score bands that leave scores uncovered or overlap', () => {
    const issues = rateSheetRuleIssues(
      sheet({
        creditScoreAdjustments: [
          { minScore: 300, maxScore: 650, adjustment: 1 },
          { minScore: 640, maxScore: 700, adjustment: 0.5 },
          { minScore: 720, maxScore: 800, adjustment: 0 },
        ],
      }),
    );
    expect(pointers(issues)).toEqual(['/creditScoreAdjustments/1/minScore', '/creditScoreAdjustments/2/minScore', '/creditScoreAdjustments/2/maxScore']);
  });

  it('refuses a sheet whose lowest adjustments would make a rate negative', () => {
    const issues = rateSheetRuleIssues(
      sheet({
        baseRates: [
          { minTermYears: 1, maxTermYears: 10, rate: 0.2 },
          { minTermYears: 11, maxTermYears: 40, rate: 6 },
        ],
      }),
    );
    // 0.2 − 0.25 (LTV ≤ 60) + 0 (score ≥ 740) < 0
    expect(pointers(issues)).toEqual(['/baseRates/0/rate']);
  });

  it('refuses minAmount above maxAmount, a repeated or reserved fee name, and fees that consume the smallest loan', () => {
    expect(pointers(rateSheetRuleIssues(sheet({ minAmount: 60_000_000 })))).toEqual(['/minAmount']);
    const fees = rateSheetRuleIssues(
      sheet({
        flatFees: [
          { name: 'origination', amount: 10, prepaidFinanceCharge: true },
          { name: 'appraisal', amount: 10, prepaidFinanceCharge: false },
          { name: 'appraisal', amount: 20, prepaidFinanceCharge: false },
        ],
      }),
    );
    expect(pointers(fees)).toEqual(['/flatFees/0/name', '/flatFees/2/name']);
    const consuming = rateSheetRuleIssues(sheet({ minAmount: 1000, flatFees: [{ name: 'processing', amount: 995, prepaidFinanceCharge: true }] }));
    expect(pointers(consuming)).toEqual(['/flatFees']); // 995 + 1 % of 1,000 = 1,005 ≥ 1,000
  });

  it('words the negative-rate and prepaid-charge issues as the oracle did, to the thousandth and the cent', () => {
    const thousandths = (min: number, max: number) => fc.integer({ min, max }).map((t) => t / 1000);
    fc.assert(
      fc.property(
        fc.array(thousandths(0, 30_000), { minLength: 1, maxLength: 3 }),
        fc.array(thousandths(-10_000, 10_000), { minLength: 1, maxLength: 3 }),
        fc.array(thousandths(-10_000, 10_000), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 99_999_999_999 }).map((c) => c / 100),
        thousandths(0, 10_000),
        fc.array(fc.record({ amount: fc.integer({ min: 0, max: 100_000_000 }).map((c) => c / 100), prepaidFinanceCharge: fc.boolean() }), { maxLength: 20 }),
        (rates, ltvAdjustments, scoreAdjustments, minAmount, originationFeePercent, fees) => {
          const candidate = sheet({
            baseRates: rates.map((rate, k) => ({ minTermYears: k + 1, maxTermYears: k + 1, rate })),
            ltvAdjustments: ltvAdjustments.map((adjustment, k) => ({ aboveLtv: k * 10, upToLtv: k === ltvAdjustments.length - 1 ? 150 : (k + 1) * 10, adjustment })),
            creditScoreAdjustments: scoreAdjustments.map((adjustment, k) => ({ minScore: 300 + k, maxScore: k === scoreAdjustments.length - 1 ? 850 : 300 + k, adjustment })),
            minAmount,
            maxAmount: 999_999_999.99,
            originationFeePercent,
            flatFees: fees.map((fee, k) => ({ name: `fee${k}`, ...fee })),
          });
          const issues = rateSheetRuleIssues(candidate).filter((issue) => issue.pointer === '/flatFees' || /^\/baseRates\/\d+\/rate$/.test(issue.pointer));
          expect(issues).toEqual([...negativeRateIssues(candidate), ...prepaidChargeIssues(candidate)]);
        },
      ),
      { numRuns: 1000 },
    );
    expect(rateSheetRuleIssues(sheet({ baseRates: [{ minTermYears: 1, maxTermYears: 40, rate: 0.125 }] }))[0]!.message).toBe(
      'with the lowest LTV and credit-score adjustments gives a negative rate (-0.125 %)',
    );
    expect(rateSheetRuleIssues(sheet({ minAmount: 1000, flatFees: [{ name: 'processing', amount: 995.5, prepaidFinanceCharge: true }] }))[0]!.message).toBe(
      'the prepaid finance charges (1005.50) consume the whole of a minAmount loan (1000.00)',
    );
  });
});
