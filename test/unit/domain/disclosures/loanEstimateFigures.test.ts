import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loanEstimateFigures, type LoanEstimateInputs } from '../../../../src/domain/disclosures/loanEstimateFigures.ts';
import { priceLoanFromSheet } from '../../../../src/domain/pricing/quote.ts';
import { DEFAULT_RATE_SHEET } from '../../../../src/domain/pricing/rateSheet.ts';

/**
 * The CFPB's sample Loan Estimate H-24(B) (fixed rate, Ficus Bank, Michael Jones and Mary Stone):
 * $162,000 over 30 years at 3.875 %, sale price $180,000. Page 2: A. Origination Charges $1,802
 * (points $405, application $300, underwriting $1,097); D. Total Loan Costs $5,672; F. Prepaid
 * interest $262 ($17.44 a day for 15 days); G. escrow of homeowner's insurance $100.83 and property
 * taxes $105.30 a month. Mortgage insurance shows as $82 in years 1–7: $82.35 a month (0.61 % a
 * year of the loan amount) is the premium that makes page 3's In 5 Years come out; it ends on the
 * 80th payment, the first whose balance is scheduled to reach 78 % of the $180,000 value.
 */
const H24B: LoanEstimateInputs = {
  amountCents: 16_200_000,
  rateThousandths: 3875,
  termYears: 30,
  loanCostsCents: 567_200,
  prepaidFinanceChargesCents: 180_200 + 26_200,
  prepaidInterestCents: 26_200,
  mortgageInsurance: { monthlyCents: 8235, months: 80 },
  escrowMonthlyCents: 10_083 + 10_530,
};

describe('the CFPB sample Loan Estimate H-24(B)', () => {
  const figures = loanEstimateFigures(H24B);

  it('Loan Terms: $162,000, 3.875 %, monthly principal & interest $761.78 (to the cent)', () => {
    expect(figures.loanAmountCents).toBe(16_200_000);
    expect(figures.interestRateThousandths).toBe(3875);
    expect(figures.monthlyPrincipalAndInterestCents).toBe(76_178);
  });

  it('Projected Payments: years 1–7 $761.78 + 82 + 206 = $1,050; years 8–30 $761.78 + — + 206 = $968', () => {
    expect(figures.projectedPayments).toEqual([
      { fromYear: 1, toYear: 7, principalAndInterestCents: 76_178, mortgageInsuranceDollars: 82, estimatedEscrowDollars: 206, estimatedTotalMonthlyPaymentDollars: 1050 },
      { fromYear: 8, toYear: 30, principalAndInterestCents: 76_178, mortgageInsuranceDollars: null, estimatedEscrowDollars: 206, estimatedTotalMonthlyPaymentDollars: 968 },
    ]);
  });

  it('In 5 Years: $56,582 paid in principal, interest, mortgage insurance and loan costs; $15,773 of principal paid off', () => {
    expect(figures.inFiveYearsTotalPaidDollars).toBe(56_582);
    expect(figures.inFiveYearsPrincipalPaidOffDollars).toBe(15_773);
  });

  it('In 5 Years counts the prepaid interest: without it the total would be $56,320, not the published figure', () => {
    expect(loanEstimateFigures({ ...H24B, prepaidInterestCents: 0 }).inFiveYearsTotalPaidDollars).toBe(56_320);
  });

  it('TIP: 69.448 % by the three-decimal rule of 1026.37(o)(4)(ii); the sample prints 69.45 %, the same figure to two decimals', () => {
    expect(figures.totalInterestPercentageThousandths).toBe(69_448);
    expect(Math.round(figures.totalInterestPercentageThousandths / 10) / 100).toBe(69.45);
    // Without the prepaid interest it would be 69.286 %: the sample counts it, as 37(l)(3) says.
    expect(figures.totalInterestCents).toBe(11_224_370);
  });

  it('APR: the finance charge read from page 2 (A + prepaid interest, MI to 78 %) gives 4.285 %, not the published 4.274 %', () => {
    expect(figures.amountFinancedCents).toBe(15_993_600);
    expect(figures.aprThousandths).toBe(4285);
  });

  it('APR: 4.274 % is reproduced only with a fitted finance charge (prepaid finance charges $1,802 = section A alone, MI on 81 payments)', () => {
    const fitted = loanEstimateFigures({ ...H24B, prepaidFinanceChargesCents: 180_200, mortgageInsurance: { monthlyCents: 8235, months: 81 } });
    expect(fitted.aprThousandths).toBe(4274);
  });
});

describe('loanEstimateFigures from a quote', () => {
  it('states the quote’s own APR when the prepaid finance charges are the quote’s and nothing else is known', () => {
    const outcome = priceLoanFromSheet(DEFAULT_RATE_SHEET, { amount: 350_000, term: 30, propertyValue: 437_500, creditScore: 742 });
    if (!outcome.ok) throw new Error('refused');
    const loan = outcome.loan;
    const prepaid = loan.fees.filter((f) => f.prepaidFinanceCharge).reduce((sum, f) => sum + f.amountCents, 0);
    const figures = loanEstimateFigures({
      amountCents: loan.amountCents,
      rateThousandths: loan.interestRateThousandths,
      termYears: loan.term,
      loanCostsCents: loan.fees.reduce((sum, f) => sum + f.amountCents, 0),
      prepaidFinanceChargesCents: prepaid,
      prepaidInterestCents: 0,
      mortgageInsurance: null,
      escrowMonthlyCents: null,
    });
    expect(figures.aprThousandths).toBe(loan.aprThousandths);
    expect(figures.monthlyPrincipalAndInterestCents).toBe(loan.monthlyPaymentCents);
    expect(figures.totalInterestCents).toBe(loan.totalInterestCents);
    expect(figures.projectedPayments).toEqual([
      { fromYear: 1, toYear: 30, principalAndInterestCents: 221_224, mortgageInsuranceDollars: null, estimatedEscrowDollars: null, estimatedTotalMonthlyPaymentDollars: 2212 },
    ]);
  });

  it('mortgage insurance for the whole term shows in one column', () => {
    const figures = loanEstimateFigures({ ...H24B, mortgageInsurance: { monthlyCents: 8235, months: 360 } });
    expect(figures.projectedPayments).toHaveLength(1);
    expect(figures.projectedPayments[0]).toMatchObject({ fromYear: 1, toYear: 30, mortgageInsuranceDollars: 82 });
  });

  it('mortgage insurance raises the APR and never lowers it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 1, max: 360 }), (monthly, months) => {
        const without = loanEstimateFigures({ ...H24B, mortgageInsurance: null }).aprThousandths;
        return loanEstimateFigures({ ...H24B, mortgageInsurance: { monthlyCents: monthly, months } }).aprThousandths >= without;
      }),
      { numRuns: 25 },
    );
  });

  it('refuses inputs that are not whole cents, negative, or a finance charge as large as the loan', () => {
    expect(() => loanEstimateFigures({ ...H24B, amountCents: 0 })).toThrow(RangeError);
    expect(() => loanEstimateFigures({ ...H24B, loanCostsCents: 1.5 })).toThrow(RangeError);
    expect(() => loanEstimateFigures({ ...H24B, prepaidInterestCents: -1 })).toThrow(RangeError);
    expect(() => loanEstimateFigures({ ...H24B, prepaidFinanceChargesCents: H24B.amountCents })).toThrow(RangeError);
    expect(() => loanEstimateFigures({ ...H24B, escrowMonthlyCents: Number.NaN })).toThrow(RangeError);
    expect(() => loanEstimateFigures({ ...H24B, mortgageInsurance: { monthlyCents: 1, months: -1 } })).toThrow(RangeError);
  });
});
