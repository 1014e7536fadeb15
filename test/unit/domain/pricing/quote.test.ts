import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthlyPaymentFromSheet, priceLoanFromSheet, type PricedLoan, type PricingOutcome } from '../../../../src/domain/pricing/quote.ts';
import { DEFAULT_RATE_SHEET, type RateSheet } from '../../../../src/domain/pricing/rateSheet.ts';

function priced(outcome: PricingOutcome): PricedLoan {
  if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome.refusal)}`);
  return outcome.loan;
}

describe('priceLoanFromSheet', () => {
  it('prices 350,000 over 30 years at 80 % LTV and a 742 score from the default sheet', () => {
    const loan = priced(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 350_000, term: 30, propertyValue: 437_500, creditScore: 742 }));
    expect(loan.interestRateThousandths).toBe(6500); // 6.500 base, LTV 80 → 0, score 742 → 0
    expect(loan.ltvThousandths).toBe(80_000);
    expect(loan.monthlyPaymentCents).toBe(221_224);
    expect(loan.numberOfPayments).toBe(360);
    expect(loan.fees.map((f) => [f.name, f.amountCents, f.prepaidFinanceCharge])).toEqual([
      ['origination', 350_000, true],
      ['appraisal', 65_000, false],
      ['underwriting', 49_500, true],
    ]);
    // Amount financed: 350,000 − 3,500 − 495 (the appraisal is not a finance charge).
    expect(loan.amountFinancedCents).toBe(34_600_500);
    expect(loan.financeChargeCents).toBe(loan.totalOfPaymentsCents - loan.amountFinancedCents);
    expect(loan.aprThousandths).toBe(6611);
  });

  it('adds the LTV and credit-score band adjustments to the base rate of the term', () => {
    // 16–20 years: 6.125; LTV 90.000 (above 80 up to 90): +0.25; score 650: +0.75.
    const loan = priced(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 270_000, term: 20, propertyValue: 300_000, creditScore: 650 }));
    expect(loan.ltvThousandths).toBe(90_000);
    expect(loan.interestRateThousandths).toBe(7125);
  });

  it('applies no LTV or credit adjustment when neither is given, and states ltv as null', () => {
    const loan = priced(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 350_000, term: 15 }));
    expect(loan.interestRateThousandths).toBe(5875);
    expect(loan.ltvThousandths).toBeNull();
    expect(loan.propertyValueCents).toBeNull();
    expect(loan.creditScore).toBeNull();
  });

  it('refuses an amount outside the sheet’s bounds', () => {
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 999.99, term: 30 })).toMatchObject({ ok: false, refusal: { kind: 'amount_out_of_bounds' } });
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 50_000_000.01, term: 30 })).toMatchObject({ ok: false, refusal: { kind: 'amount_out_of_bounds' } });
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 50_000_000, term: 30 }).ok).toBe(true);
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 1_000, term: 30 }).ok).toBe(true);
  });

  it('refuses a term the sheet does not price, naming the priced terms', () => {
    const sheet: RateSheet = { ...DEFAULT_RATE_SHEET, baseRates: [{ minTermYears: 15, maxTermYears: 15, rate: 5.5 }, { minTermYears: 30, maxTermYears: 30, rate: 6 }] };
    expect(priceLoanFromSheet(sheet, { amount: 200_000, term: 20 })).toMatchObject({
      ok: false,
      refusal: { kind: 'term_not_priced', term: 20, pricedTerms: '15, 30 years' },
    });
  });

  it('refuses an LTV above the maximum, and takes one exactly at it', () => {
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 97_001, term: 30, propertyValue: 100_000 })).toMatchObject({
      ok: false,
      refusal: { kind: 'ltv_above_maximum' },
    });
    expect(priced(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 97_000, term: 30, propertyValue: 100_000 })).interestRateThousandths).toBe(7000);
  });

  it('refuses an amount with more than two decimals as a form problem pointing at /amount', () => {
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 350_000.005, term: 30 })).toMatchObject({
      ok: false,
      refusal: { kind: 'form', pointer: '/amount' },
    });
    expect(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 350_000.29, term: 30 }).ok).toBe(true);
  });

  it('APR is at least the interest rate for every quote of the default sheet (its fees are prepaid finance charges)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100_000, max: 5_000_000_000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.option(fc.integer({ min: 300, max: 850 }), { nil: null }),
        (cents, term, creditScore) => {
          const loan = priced(priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: cents / 100, term, creditScore }));
          expect(loan.aprThousandths).toBeGreaterThanOrEqual(loan.interestRateThousandths);
          expect(loan.totalOfPaymentsCents).toBe(loan.amountCents + loan.totalInterestCents);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('monthlyPaymentFromSheet', () => {
  it('gives the same payment as the full pricing, and refuses what it refuses', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 500, max: 60_000_000 }),
        fc.integer({ min: 0, max: 41 }),
        fc.option(fc.integer({ min: 10_000, max: 80_000_000 }), { nil: null }),
        fc.option(fc.integer({ min: 300, max: 850 }), { nil: null }),
        (amount, term, propertyValue, creditScore) => {
          const request = { amount, term, propertyValue, creditScore };
          const full = priceLoanFromSheet(DEFAULT_RATE_SHEET, request);
          const fast = monthlyPaymentFromSheet(DEFAULT_RATE_SHEET, request);
          if (full.ok) {
            expect(fast.ok).toBe(true);
            expect(fast.ok && fast.monthlyPaymentCents).toBe(full.loan.monthlyPaymentCents);
          } else {
            expect(fast).toEqual({ ok: false, refusal: full.refusal });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
