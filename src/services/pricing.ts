/**
 * Pricing use cases: price a loan from the account's rate sheet (quotes, and underwriting's
 * debt-to-income check inside its own transaction), read and replace the rate sheet, and make and
 * read quotes. Turns the domain's refusals into errors for callers who asked for a price; underwriting
 * gets them as values.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAudit } from './audit.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { scheduleRows } from '../domain/pricing/amortization.ts';
import { decimalText, fixedTwo, thousandthsText } from '../domain/pricing/decimalText.ts';
import { monthlyPaymentFromSheet, priceLoanFromSheet, type LoanRequest, type PricedLoan, type PricingRefusal } from '../domain/pricing/quote.ts';
import { DEFAULT_RATE_SHEET, rateSheetFormIssues, rateSheetRuleIssues, type RateSheet } from '../domain/pricing/rateSheet.ts';
import { majorUnits, percent, toScaled } from '../domain/pricing/units.ts';
import { AppError, fail } from '../errors.ts';
import { newId } from '../ids.ts';
import { environmentNow } from './environmentClock.ts';
import { findPricingContext, findRateSheet, saveRateSheet, type PricingContextRow } from '../store/pricing.ts';
import { findQuote, insertQuote } from '../store/quotes.ts';
import { autocommit, type SqlExecutor } from '../store/store.ts';

export type Quote = components['schemas']['Quote'];
export type PricingSettings = components['schemas']['PricingSettings'];
export type AmortizationSchedule = components['schemas']['AmortizationSchedule'];

/** A priced loan in the API's units: everything a quote states except its id, its times and its mode. */
export type LoanPricing = Omit<Quote, 'quoteId' | 'createdAt' | 'expiresAt' | 'livemode'>;

const DAY_MS = 86_400_000;

/** The error a pricing refusal is for a caller who asked for a quote or a rate sheet. */
export function refusalError(refusal: PricingRefusal): AppError {
  switch (refusal.kind) {
    case 'form':
      return fail.validation(`${refusal.pointer} ${refusal.message}`, [{ pointer: refusal.pointer, message: refusal.message }]);
    case 'amount_out_of_bounds':
      return fail.refused(
        'amount_out_of_bounds',
        `amount must be from ${formatMoney(refusal.min)} to ${formatMoney(refusal.max)}; got ${formatMoney(refusal.amount)}.`,
        { errors: [{ pointer: '/amount', message: `must be from ${fixedTwo(refusal.min)} to ${fixedTwo(refusal.max)}` }] },
      );
    case 'term_not_priced':
      return fail.refused(
        'term_not_priced',
        `A term of ${refusal.term} years is not priced by this account's rate sheet; priced terms: ${refusal.pricedTerms}.`,
        { errors: [{ pointer: '/term', message: `is not priced (years); priced terms: ${refusal.pricedTerms}` }] },
      );
    case 'ltv_above_maximum': {
      const [ltv, maxLtv] = [thousandthsText(refusal.ltvThousandths), decimalText(refusal.maxLtv)];
      return fail.refused(
        'ltv_above_maximum',
        `The loan-to-value ratio ${ltv} % is above this account's maximum of ${maxLtv} %.`,
        { errors: [{ pointer: '/propertyValue', message: `gives an LTV of ${ltv} %, above the maximum ${maxLtv} %` }] },
      );
    }
  }
}

/** `1234567.5` → "1,234,567.50": the amount's decimal to the cent, thousands grouped. */
function formatMoney(value: number): string {
  const [whole = '0', cents = '00'] = fixedTwo(value).split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}

function toLoanPricing(loan: PricedLoan, currency: string): LoanPricing {
  return {
    amount: majorUnits(loan.amountCents),
    term: loan.term,
    currency,
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
  };
}

/** The sheet a stored row holds, or the default. Stored sheets were validated when they were saved. */
/**
 * Sheets parsed, by the pricing context they were read in. The sql.js engine remembers that
 * context until the sheet changes (see findPricingContext), so a quote for an account with its own
 * sheet parses it once instead of every time; a context read afresh (PostgreSQL) is parsed afresh.
 * Sheets are only read once parsed, as the default one shared by every account is.
 */
const parsedSheets = new WeakMap<PricingContextRow, RateSheet>();

function sheetOf(context: PricingContextRow): RateSheet {
  if (context.sheetJson === null) return DEFAULT_RATE_SHEET;
  let sheet = parsedSheets.get(context);
  if (sheet === undefined) {
    sheet = JSON.parse(context.sheetJson) as RateSheet;
    parsedSheets.set(context, sheet);
  }
  return sheet;
}

/** The account's rate sheet (or the default), read through `db` so it can run inside a caller's transaction; 404 for an unknown account. */
export async function rateSheetIn(db: SqlExecutor, accountId: string): Promise<RateSheet> {
  const context = await findPricingContext(db, accountId);
  if (!context) throw fail.notFound(`No account ${accountId}.`);
  return sheetOf(context);
}

/**
 * Prices a loan with the account's rate sheet (or the default). Only reads, through `db`, so it can
 * run inside a caller's transaction. Throws 400 (amount with more than two decimals…) or 422
 * problems (`amount_out_of_bounds`, `term_not_priced`, `ltv_above_maximum`); 404 for an unknown account.
 */
async function priceLoan(db: SqlExecutor, accountId: string, request: LoanRequest): Promise<{ loan: PricedLoan; currency: string }> {
  const context = await findPricingContext(db, accountId);
  if (!context) throw fail.notFound(`No account ${accountId}.`);
  const outcome = priceLoanFromSheet(sheetOf(context), request);
  if (!outcome.ok) throw refusalError(outcome.refusal);
  return { loan: outcome.loan, currency: context.currency };
}

/**
 * The monthly payment the account's sheet gives a loan, and nothing else: underwriting needs it for
 * the debt-to-income ratio on every submission, and the APR and schedule would be wasted work there.
 * A refusal of the sheet comes back as a value (underwriting turns it into a failed rule).
 */
export async function priceMonthlyPayment(
  db: SqlExecutor,
  accountId: string,
  request: LoanRequest,
): Promise<{ ok: true; monthlyPayment: number } | { ok: false; refusal: PricingRefusal }> {
  const context = await findPricingContext(db, accountId);
  if (!context) throw fail.notFound(`No account ${accountId}.`);
  const outcome = monthlyPaymentFromSheet(sheetOf(context), request);
  return outcome.ok ? { ok: true, monthlyPayment: majorUnits(outcome.monthlyPaymentCents) } : outcome;
}

/**
 * Prices and stores a quote: the sheet read and the insert share one turn of the store's queue on
 * sql.js (pricing is CPU only, no I/O, so nothing waits on the network while it is held). Its one
 * write needs no transaction around it: on PostgreSQL the INSERT commits on its own, one round trip,
 * shared with the quotes of the same moment (src/store/postgres/groupCommit.ts).
 */
export async function createQuote(ctx: AppContext, accountId: string, request: LoanRequest): Promise<Quote> {
  return autocommit(ctx.store, async (tx) => {
    const { loan, currency } = await priceLoan(tx, accountId, request);
    // The environment's time (a test environment's clock may run ahead): a quote expires on it.
    const now = await environmentNow(ctx, tx, accountId);
    // One copy of the pricing's figures, in the order the API states it, instead of three: copying
    // a 20-field object through rest and spread (figures out of the pricing, then into the record,
    // then with livemode) was a microsecond of each quote's CPU.
    const quote: Quote = {
      quoteId: newId('qte', ctx.clock.now().getTime()),
      ...toLoanPricing(loan, currency),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + loan.quoteValidityDays * DAY_MS).toISOString(),
      livemode: isLivemode(accountId),
    };
    await insertQuote(tx, accountId, quote);
    return quote;
  });
}

/**
 * Prices a loan from the account's sheet without storing a quote: the dashboard's calculator. The
 * figures are the ones createQuote would state, and the schedule the one its quote would have.
 */
export async function calculateLoan(
  ctx: AppContext,
  accountId: string,
  request: LoanRequest,
): Promise<{ pricing: LoanPricing; schedule: AmortizationSchedule['payments'] }> {
  const { loan, currency } = await ctx.store.read((db) => priceLoan(db, accountId, request));
  const pricing = toLoanPricing(loan, currency);
  return { pricing, schedule: scheduleOf(pricing) };
}

/**
 * Every payment of a loan at its note rate, from the same integer walk that produced its figures
 * (a quote's amount has at most two decimals and its rate three, so both are exact integers here).
 */
function scheduleOf(loan: { amount: number; interestRate: number; term: number }): AmortizationSchedule['payments'] {
  return scheduleRows(toScaled(loan.amount, 2), toScaled(loan.interestRate, 3), loan.term).map((row) => ({
    number: row.number,
    payment: majorUnits(row.paymentCents),
    principal: majorUnits(row.principalCents),
    interest: majorUnits(row.interestCents),
    balance: majorUnits(row.balanceCents),
  }));
}

/** A quote of this account, as it was made; another account's quote is 404. */
export async function getQuote(ctx: AppContext, accountId: string, quoteId: string): Promise<Quote> {
  const quote = await ctx.store.read((db) => findQuote(db, accountId, quoteId));
  if (!quote) throw fail.notFound(`No quote ${quoteId} in this account.`);
  return { ...quote, livemode: isLivemode(accountId) };
}

/**
 * The quote's schedule. Rebuilt from the quote's own stored amount, rate and term (never from the
 * current sheet), with the same arithmetic that produced its figures, so it always agrees with them.
 */
export async function getQuoteSchedule(ctx: AppContext, accountId: string, quoteId: string): Promise<AmortizationSchedule> {
  const quote = await getQuote(ctx, accountId, quoteId);
  return { quoteId: quote.quoteId, currency: quote.currency, payments: scheduleOf(quote), livemode: quote.livemode };
}

export async function getPricingSettings(ctx: AppContext, accountId: string): Promise<PricingSettings> {
  const stored = await ctx.store.read((db) => findRateSheet(db, accountId));
  const livemode = isLivemode(accountId);
  if (!stored) return { rateSheet: structuredClone(DEFAULT_RATE_SHEET), isDefault: true, updatedAt: null, livemode };
  return { rateSheet: JSON.parse(stored.sheetJson) as RateSheet, isDefault: false, updatedAt: stored.updatedAt, livemode };
}

/** Replaces the account's sheet, whole or not at all: 400 for form problems, 422 for broken rules, each with pointers. */
export async function setRateSheet(ctx: AppContext, accountId: string, sheet: RateSheet): Promise<PricingSettings> {
  const form = rateSheetFormIssues(sheet);
  if (form.length > 0) {
    throw fail.validation(`The rate sheet is not valid: ${form[0]!.pointer} ${form[0]!.message}` + more(form.length), form);
  }
  const rules = rateSheetRuleIssues(sheet);
  if (rules.length > 0) {
    throw fail.refused(
      'invalid_rate_sheet',
      `The rate sheet breaks its rules: ${rules[0]!.pointer} ${rules[0]!.message}` + more(rules.length) + '. Nothing was changed.',
      { errors: rules },
    );
  }
  const updatedAt = ctx.clock.now().toISOString();
  const normalized: RateSheet = {
    ...sheet,
    baseRates: [...sheet.baseRates].sort((a, b) => a.minTermYears - b.minTermYears),
  };
  await ctx.store.transaction(async (tx) => {
    const previous = await findRateSheet(tx, accountId);
    await saveRateSheet(tx, accountId, JSON.stringify(normalized), updatedAt);
    // The sheet before: the stored one, or the built-in default the account was priced from.
    const before = previous ? (JSON.parse(previous.sheetJson) as RateSheet) : DEFAULT_RATE_SHEET;
    await recordAudit(tx, ctx, { accountId, action: 'pricing.updated', target: { type: 'pricing', id: null }, change: { before, after: normalized } });
  });
  return { rateSheet: normalized, isDefault: false, updatedAt, livemode: isLivemode(accountId) };
}

function more(count: number): string {
  return count > 1 ? ` (and ${count - 1} more)` : '';
}
