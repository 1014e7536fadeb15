import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstPeriodBetween } from '../../../../src/domain/disclosures/firstPeriod.ts';
import { loanEstimateFigures, type LoanEstimateInputs } from '../../../../src/domain/disclosures/loanEstimateFigures.ts';
import { mortgageInsurancePaymentsUntilAutomaticTermination } from '../../../../src/domain/disclosures/mortgageInsuranceTermination.ts';
import { scheduleRows } from '../../../../src/domain/pricing/amortization.ts';
import { priceLoanFromSheet } from '../../../../src/domain/pricing/quote.ts';
import { DEFAULT_RATE_SHEET } from '../../../../src/domain/pricing/rateSheet.ts';
import { rootRoundsTo } from '../../../helpers/appendixJ.ts';

/**
 * The CFPB's sample Loan Estimate H-24(B) (fixed rate, Ficus Bank, Michael Jones and Mary Stone):
 * $162,000 over 30 years at 3.875 %, sale price $180,000. Page 1 publishes Loan Costs $5,672 and
 * Other Costs $2,382; page 2 itemizes them (below); G. escrow of homeowner's insurance $100.83 and
 * property taxes $105.30 a month. Mortgage insurance shows as $82 in years 1–7: $82.35 a month is
 * the premium the sample's Closing Disclosure H-25(B) prints for the same loan (and the one that
 * makes page 3's In 5 Years come out); it runs until the Homeowners Protection Act ends it.
 */
interface PageTwoItem {
  name: string;
  cents: number;
  /** Whether 12 CFR 1026.4 makes it a finance charge, and why. */
  financeCharge: boolean;
  rule: string;
}

const H24B_PAGE_TWO: PageTwoItem[] = [
  { name: 'A. points (0.25 %)', cents: 40_500, financeCharge: true, rule: '1026.4(b)(3)' },
  { name: 'A. application fee', cents: 30_000, financeCharge: true, rule: '1026.4(a): 4(c)(1) excludes it only when all applicants pay it, credit or not, which the sample does not say' },
  { name: 'A. underwriting fee', cents: 109_700, financeCharge: true, rule: '1026.4(a), (b)(2)' },
  { name: 'B. appraisal fee', cents: 40_500, financeCharge: false, rule: '1026.4(c)(7)(iv)' },
  { name: 'B. credit report fee', cents: 3000, financeCharge: false, rule: '1026.4(c)(7)(iii)' },
  { name: 'B. flood determination fee', cents: 2000, financeCharge: false, rule: '1026.4(c)(7)(iv): flood-hazard determination before closing; comment 4(c)(7)-3' },
  { name: 'B. flood monitoring fee', cents: 3200, financeCharge: true, rule: 'comment 4(c)(7)-3: determinations during the loan term' },
  { name: 'B. tax monitoring fee', cents: 7500, financeCharge: true, rule: 'comment 4(c)(7)-3: tax-lien status during the loan term' },
  { name: 'B. tax status research fee', cents: 11_000, financeCharge: false, rule: 'comment 4(c)(7)-3: a search for tax liens for the initial decision to grant credit' },
  { name: 'C. pest inspection fee', cents: 13_500, financeCharge: false, rule: '1026.4(c)(7)(iv)' },
  { name: 'C. survey fee', cents: 6500, financeCharge: false, rule: '1026.4(c)(7)(i)' },
  { name: 'C. title – insurance binder', cents: 70_000, financeCharge: false, rule: '1026.4(c)(7)(i)' },
  { name: "C. title – lender's title policy", cents: 53_500, financeCharge: false, rule: '1026.4(c)(7)(i)' },
  { name: 'C. title – settlement agent fee', cents: 50_200, financeCharge: false, rule: '1026.4(a)(2): a closing agent’s fee the creditor neither requires nor shares' },
  { name: 'C. title – title search', cents: 126_100, financeCharge: false, rule: '1026.4(c)(7)(i)' },
];
const H24B_PREPAID_INTEREST = 26_200; // F: $17.44 a day for 15 days; a finance charge (1026.4(b)(1)), prepaid (1026.2(a)(23))
const H24B_LOAN_COSTS = H24B_PAGE_TWO.reduce((sum, item) => sum + item.cents, 0);
const H24B_PREPAID_FINANCE_CHARGES = H24B_PAGE_TWO.filter((item) => item.financeCharge).reduce((sum, item) => sum + item.cents, 0) + H24B_PREPAID_INTEREST;
const H24B_MI_PAYMENTS = mortgageInsurancePaymentsUntilAutomaticTermination(16_200_000, 3875, 30, 18_000_000);

const H24B: LoanEstimateInputs = {
  amountCents: 16_200_000,
  rateThousandths: 3875,
  termYears: 30,
  loanCostsCents: H24B_LOAN_COSTS,
  prepaidFinanceChargesCents: H24B_PREPAID_FINANCE_CHARGES,
  prepaidInterestCents: H24B_PREPAID_INTEREST,
  mortgageInsurance: { monthlyCents: 8235, months: H24B_MI_PAYMENTS },
  escrowMonthlyCents: 10_083 + 10_530,
};

describe('the CFPB sample Loan Estimate H-24(B)', () => {
  const figures = loanEstimateFigures(H24B);

  it('page 2 adds up to page 1: Loan Costs $5,672; the finance charges among them (A $1,802, flood and tax monitoring $107) and prepaid interest make $2,171', () => {
    expect(H24B_LOAN_COSTS).toBe(567_200);
    expect(H24B_PREPAID_FINANCE_CHARGES).toBe(180_200 + 3200 + 7500 + 26_200);
  });

  it('mortgage insurance runs 80 payments: the 80th is the first to bring the balance to 78 % of $180,000 ($140,400)', () => {
    expect(H24B_MI_PAYMENTS).toBe(80);
    const rows = scheduleRows(16_200_000, 3875, 30);
    expect(rows[78]!.balanceCents).toBeGreaterThan(14_040_000);
    expect(rows[79]!.balanceCents).toBeLessThanOrEqual(14_040_000);
  });

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

  it('TIP: 69.448 % by the three-decimal rule of 1026.37(o)(4)(ii) as amended in 2017; the 2014 sample prints 69.45 %, the same figure to two decimals', () => {
    expect(figures.totalInterestPercentageThousandths).toBe(69_448);
    expect(Math.round(figures.totalInterestPercentageThousandths / 10) / 100).toBe(69.45);
    // Without the prepaid interest it would be 69.286 %: the sample counts it, as 37(l)(3) says.
    expect(figures.totalInterestCents).toBe(11_224_370);
    // With the Closing Disclosure's $279.04 it would be 69.458 % (69.46 %, the CD's figure): the LE's $262 is the one that gives 69.45 %.
    expect(loanEstimateFigures({ ...H24B, prepaidInterestCents: 27_904 }).totalInterestPercentageThousandths).toBe(69_458);
  });

  it('APR 4.274 %, the published figure: page 2 read under 1026.4 ($2,171), insurance on 80 payments, and the term from consummation on 4/15/2013 to the first payment on 6/1/2013 (one month and 16 odd days)', () => {
    // The sample does not print its closing date; the same loan's Closing Disclosure H-25(B) closes
    // on 4/15/2013 with interest paid to 5/1/2013, so the first payment, in arrears, is due 6/1/2013.
    // Appendix J (b)(2): the term begins at consummation, not where the interest paid at closing ends.
    const atClosing = loanEstimateFigures({ ...H24B, firstPeriod: firstPeriodBetween('2013-04-15', '2013-06-01') });
    expect(atClosing.amountFinancedCents).toBe(16_200_000 - 217_100);
    expect(atClosing.aprThousandths).toBe(4274);
  });

  it('APR with the other readings of the dates: 4.275 % from 4/16/2013 (the 15 days of page 2’s prepaid interest), 4.291 % for a regular first period', () => {
    expect(loanEstimateFigures({ ...H24B, firstPeriod: firstPeriodBetween('2013-04-16', '2013-06-01') }).aprThousandths).toBe(4275);
    expect(figures.aprThousandths).toBe(4291);
    // The nearest other readings of page 2, regular first period: section A alone ($1,802) 4.271 %; A and prepaid interest ($2,064) 4.285 %.
    const aprWith = (prepaidFinanceChargesCents: number) => loanEstimateFigures({ ...H24B, prepaidFinanceChargesCents }).aprThousandths;
    expect([aprWith(180_200), aprWith(206_400)]).toEqual([4271, 4285]);
  });
});

/**
 * The CFPB's sample Closing Disclosure H-25(B) for the same loan publishes what the Loan Estimate
 * does not: Amount Financed $162,000.00, Finance Charge $118,830.27, Total of Payments $285,803.36,
 * APR 4.174 %, TIP 69.46 %, mortgage insurance $82.35 a month in years 1–7, prepaid interest $279.04.
 * Its finance charge is the note's interest ($112,243.70) and $6,586.57 of insurance premiums, and
 * its amount financed is the whole loan amount: it counts no prepaid finance charge (not even the
 * points, which 1026.4(b)(3) makes one). From those published inputs its APR comes out exactly.
 */
describe('the CFPB sample Closing Disclosure H-25(B), the same loan at closing', () => {
  const closing = loanEstimateFigures({ ...H24B, prepaidFinanceChargesCents: 0, prepaidInterestCents: 27_904 });

  it('APR 4.174 % from its published amount financed ($162,000.00) and $82.35 of insurance on the 80 payments the Act allows, over a regular first period', () => {
    expect(closing.amountFinancedCents).toBe(16_200_000);
    expect(closing.aprThousandths).toBe(4174);
    // Over its own dates (4/15/2013 to 6/1/2013) the same inputs give 4.158 %: its page 5 was worked with a regular first period.
    expect(loanEstimateFigures({ ...H24B, prepaidFinanceChargesCents: 0, prepaidInterestCents: 27_904, firstPeriod: firstPeriodBetween('2013-04-15', '2013-06-01') }).aprThousandths).toBe(4158);
  });

  it('the finance charge: interest $112,243.70 and 80 premiums ($6,588.00) are $1.43 more than the published $118,830.27; 79 premiums would be $80.92 less', () => {
    const published = 11_883_027;
    expect(closing.totalInterestCents + 80 * 8235 - published).toBe(143);
    expect(published - (closing.totalInterestCents + 79 * 8235)).toBe(8092);
  });

  it('TIP 69.458 % with its prepaid interest of $279.04: the published 69.46 % to two decimals', () => {
    expect(closing.totalInterestPercentageThousandths).toBe(69_458);
    expect(Math.round(closing.totalInterestPercentageThousandths / 10) / 100).toBe(69.46);
  });
});

describe('mortgage insurance until automatic termination', () => {
  it('no payment carries it when the loan starts at or below 78 % of the value', () => {
    expect(mortgageInsurancePaymentsUntilAutomaticTermination(14_040_000, 3875, 30, 18_000_000)).toBe(0);
    expect(mortgageInsurancePaymentsUntilAutomaticTermination(14_040_001, 3875, 30, 18_000_000)).toBe(1);
  });

  it('is the first payment whose scheduled balance is at or below 78 %, for any fixed-rate loan', () => {
    fc.assert(
      fc.property(fc.integer({ min: 5_000_000, max: 100_000_000 }), fc.integer({ min: 0, max: 12_000 }), fc.constantFrom(10, 15, 20, 30), fc.integer({ min: 79, max: 100 }), (amount, rate, term, ltv) => {
        const value = Math.ceil((amount * 100) / ltv);
        const k = mortgageInsurancePaymentsUntilAutomaticTermination(amount, rate, term, value);
        const rows = scheduleRows(amount, rate, term);
        const threshold = Math.floor((value * 78) / 100);
        return k >= 1 && rows[k - 1]!.balanceCents <= threshold && (k === 1 || rows[k - 2]!.balanceCents > threshold);
      }),
      { numRuns: 25 },
    );
  });

  it('refuses an original value that is not whole cents ≥ 1', () => {
    expect(() => mortgageInsurancePaymentsUntilAutomaticTermination(16_200_000, 3875, 30, 0)).toThrow(RangeError);
    expect(() => mortgageInsurancePaymentsUntilAutomaticTermination(16_200_000, 3875, 30, 1.5)).toThrow(RangeError);
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

  it('mortgage insurance for the whole term (or longer) shows in one column, and every payment, the last included, carries it in the APR', () => {
    const rows = scheduleRows(H24B.amountCents, H24B.rateThousandths, H24B.termYears);
    const [level, last] = [rows[0]!.paymentCents, rows.at(-1)!.paymentCents];
    for (const months of [360, 480]) {
      const figures = loanEstimateFigures({ ...H24B, mortgageInsurance: { monthlyCents: 8235, months } });
      expect(figures.projectedPayments).toHaveLength(1);
      expect(figures.projectedPayments[0]).toMatchObject({ fromYear: 1, toYear: 30, mortgageInsuranceDollars: 82 });
      const runs = [
        { amountCents: level + 8235, count: 359 },
        { amountCents: last + 8235, count: 1 },
      ];
      expect(rootRoundsTo(runs, figures.amountFinancedCents, figures.aprThousandths)).toBe(true);
      expect(rootRoundsTo(runs, figures.amountFinancedCents, figures.aprThousandths, { fullMonths: 1, oddDays: 16 })).toBe(false);
      const odd = loanEstimateFigures({ ...H24B, mortgageInsurance: { monthlyCents: 8235, months }, firstPeriod: { fullMonths: 1, oddDays: 16 } });
      expect(rootRoundsTo(runs, odd.amountFinancedCents, odd.aprThousandths, { fullMonths: 1, oddDays: 16 })).toBe(true);
    }
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

  it('an odd first period moves only the APR, with or without mortgage insurance: odd days and later first payments lower it', () => {
    for (const mortgageInsurance of [null, H24B.mortgageInsurance]) {
      const regular = loanEstimateFigures({ ...H24B, mortgageInsurance });
      const odd = loanEstimateFigures({ ...H24B, mortgageInsurance, firstPeriod: { fullMonths: 1, oddDays: 16 } });
      const later = loanEstimateFigures({ ...H24B, mortgageInsurance, firstPeriod: { fullMonths: 2, oddDays: 16 } });
      expect({ ...odd, aprThousandths: regular.aprThousandths }).toEqual(regular);
      expect(odd.aprThousandths).toBeLessThan(regular.aprThousandths);
      expect(later.aprThousandths).toBeLessThan(odd.aprThousandths);
      // One month is the regular first period, however it is given.
      expect(loanEstimateFigures({ ...H24B, mortgageInsurance, firstPeriod: { fullMonths: 1, oddDays: 0 } }).aprThousandths).toBe(regular.aprThousandths);
    }
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
