/**
 * Quotes, stored with every figure they were made with (money as integer cents, percentages as
 * decimal text), so a quote reads back as the identical JSON however the rate sheet changes.
 */
import { Decimal } from 'decimal.js';
import type { components } from '../../generated/api.d.ts';
import type { SqlExecutor } from './store.ts';

/** A stored quote as the API shows it, less `livemode` (the owner's mode, added by the use case). */
export type QuoteRecord = Omit<components['schemas']['Quote'], 'livemode'>;
type Quote = QuoteRecord;
type QuoteFee = components['schemas']['QuoteFee'];

interface QuoteRow {
  id: string;
  amount_cents: number;
  term_years: number;
  currency: string;
  property_value_cents: number | null;
  credit_score: number | null;
  interest_rate: string;
  apr: string;
  monthly_payment_cents: number;
  number_of_payments: number;
  final_payment_cents: number;
  total_interest_cents: number;
  total_of_payments_cents: number;
  amount_financed_cents: number;
  finance_charge_cents: number;
  ltv: string | null;
  fees: string;
  lock_period_days: number;
  created_at: string;
  expires_at: string;
}

interface StoredFee {
  name: string;
  amountCents: number;
  prepaidFinanceCharge: boolean;
}

/**
 * Major units (at most two decimals) to integer cents, exactly, without a decimal per figure: the
 * nearest double to a decimal with at most two places, × 100, lies within far less than 0.5 of
 * that integer, and the integer / 100 is that same double again; any other number fails the check
 * (the same numbers decimal.js found to have more than two decimals).
 */
export function cents(amount: number): number {
  const value = Math.round(amount * 100);
  if (!(Math.abs(value) <= 2 ** 50) || value / 100 !== amount) throw new RangeError(`${amount} has more than two decimals`);
  return value;
}

/** Integer cents to the JSON number in major units that prints as the same decimal (the double nearest to cents / 100). */
export const major = (amountCents: number): number => amountCents / 100;

/**
 * A percentage's decimal text, as decimal.js wrote it: the number's shortest form, which is what
 * decimal.js reads, printed the same way between 1e-7 and 1e21 (beyond, the two notations differ).
 */
export function percentText(value: number): string {
  return value === 0 || (Math.abs(value) >= 1e-6 && Math.abs(value) < 1e21) ? String(value) : new Decimal(value).toString();
}

const COLUMNS = `id, amount_cents, term_years, currency, property_value_cents, credit_score, interest_rate, apr,
  monthly_payment_cents, number_of_payments, final_payment_cents, total_interest_cents, total_of_payments_cents,
  amount_financed_cents, finance_charge_cents, ltv, fees, lock_period_days, created_at, expires_at`;

export async function insertQuote(tx: SqlExecutor, accountId: string, quote: Quote): Promise<void> {
  const fees: StoredFee[] = quote.fees.map((fee) => ({ name: fee.name, amountCents: cents(fee.amount), prepaidFinanceCharge: fee.prepaidFinanceCharge }));
  await tx.run(
    `INSERT INTO quotes (id, account_id, amount_cents, term_years, currency, property_value_cents, credit_score,
       interest_rate, apr, monthly_payment_cents, number_of_payments, final_payment_cents, total_interest_cents,
       total_of_payments_cents, amount_financed_cents, finance_charge_cents, ltv, fees, lock_period_days, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      quote.quoteId,
      accountId,
      cents(quote.amount),
      quote.term,
      quote.currency,
      quote.propertyValue === null ? null : cents(quote.propertyValue),
      quote.creditScore,
      percentText(quote.interestRate),
      percentText(quote.apr),
      cents(quote.monthlyPayment),
      quote.numberOfPayments,
      cents(quote.finalPayment),
      cents(quote.totalInterest),
      cents(quote.totalOfPayments),
      cents(quote.amountFinanced),
      cents(quote.financeCharge),
      quote.ltv === null ? null : percentText(quote.ltv),
      JSON.stringify(fees),
      quote.lockPeriodDays,
      quote.createdAt,
      quote.expiresAt,
    ],
  );
}

function toQuote(row: QuoteRow): Quote {
  const fees = (JSON.parse(row.fees) as StoredFee[]).map(
    (fee): QuoteFee => ({ name: fee.name, amount: major(fee.amountCents), prepaidFinanceCharge: fee.prepaidFinanceCharge }),
  );
  return {
    quoteId: row.id,
    amount: major(row.amount_cents),
    term: row.term_years,
    currency: row.currency,
    propertyValue: row.property_value_cents === null ? null : major(row.property_value_cents),
    creditScore: row.credit_score,
    interestRate: Number(row.interest_rate),
    apr: Number(row.apr),
    monthlyPayment: major(row.monthly_payment_cents),
    numberOfPayments: row.number_of_payments,
    finalPayment: major(row.final_payment_cents),
    totalInterest: major(row.total_interest_cents),
    totalOfPayments: major(row.total_of_payments_cents),
    fees,
    amountFinanced: major(row.amount_financed_cents),
    financeCharge: major(row.finance_charge_cents),
    ltv: row.ltv === null ? null : Number(row.ltv),
    lockPeriodDays: row.lock_period_days,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** A quote of this account, or undefined: another account's quote is indistinguishable from none. */
export async function findQuote(db: SqlExecutor, accountId: string, quoteId: string): Promise<Quote | undefined> {
  const row = await db.get<QuoteRow>(`SELECT ${COLUMNS} FROM quotes WHERE account_id = ? AND id = ?`, [accountId, quoteId]);
  return row && toQuote(row);
}
