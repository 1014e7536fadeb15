import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

/** A clock the test moves by hand, so expiry can be checked without waiting. */
class ManualClock implements Clock {
  current = new Date('2026-11-21T18:30:00.000Z');
  now(): Date {
    return new Date(this.current);
  }
}

let app: TestApp;
let account: TestAccount;
const clock = new ManualClock();

beforeAll(async () => {
  app = await startTestApp({ clock });
  account = await app.newAccount();
});
afterAll(() => app.close());

describe('createQuote', () => {
  it('prices 350,000 over 30 years with the default sheet and returns every figure of the quote', async () => {
    const { data, response } = await account.member.POST('/v1/quotes', {
      body: { amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      amount: 350000,
      term: 30,
      currency: 'USD',
      propertyValue: 437500,
      creditScore: 742,
      interestRate: 6.5,
      apr: 6.611,
      monthlyPayment: 2212.24,
      numberOfPayments: 360,
      finalPayment: 2209.89,
      totalInterest: 446404.05,
      totalOfPayments: 796404.05,
      amountFinanced: 346005,
      financeCharge: 450399.05,
      ltv: 80,
      lockPeriodDays: 30,
      createdAt: '2026-11-21T18:30:00.000Z',
      expiresAt: '2026-12-21T18:30:00.000Z',
    });
    expect(data!.quoteId).toMatch(/^qte-[0-9a-z]{26}$/);
    expect(data!.fees).toEqual([
      { name: 'origination', amount: 3500, prepaidFinanceCharge: true },
      { name: 'appraisal', amount: 650, prepaidFinanceCharge: false },
      { name: 'underwriting', amount: 495, prepaidFinanceCharge: true },
    ]);
  });

  it('takes an amount with two decimals such as 1,000.29 (multipleOf 0.01 would refuse 0.29 in binary floating point)', async () => {
    const { data, response } = await account.client.POST('/v1/quotes', { body: { amount: 1000.29, term: 5 } });
    expect(response.status).toBe(201);
    expect(data!.amount).toBe(1000.29);
    expect(data!.fees[0]).toEqual({ name: 'origination', amount: 10, prepaidFinanceCharge: true }); // 10.0029 → 10.00
  });

  it('refuses an amount with three decimals with 400 pointing at /amount', async () => {
    const { error, response } = await account.client.POST('/v1/quotes', { body: { amount: 350000.005, term: 30 } });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/amount' }] });
  });

  it('refuses a term of 360 with a message that says years', async () => {
    const { error, response } = await account.client.POST('/v1/quotes', { body: { amount: 350000, term: 360 } });
    expect(response.status).toBe(400);
    expect(error!.errors![0]).toMatchObject({ pointer: '/term' });
    expect(error!.errors![0]!.message).toContain('years');
    expect(error!.detail).toContain('years');
  });

  it('refuses an amount outside 1,000 to 50,000,000 with 422 amount_out_of_bounds', async () => {
    for (const amount of [999.99, 50000000.01]) {
      const { error, response } = await account.client.POST('/v1/quotes', { body: { amount, term: 30 } });
      expect(response.status).toBe(422);
      expect(error).toMatchObject({ code: 'amount_out_of_bounds' });
      expect(error!.detail).toContain('1,000.00 to 50,000,000.00');
    }
  });

  it('refuses an LTV above 97 % with 422 ltv_above_maximum', async () => {
    const { error, response } = await account.client.POST('/v1/quotes', { body: { amount: 98000, term: 30, propertyValue: 100000 } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'ltv_above_maximum', errors: [{ pointer: '/propertyValue' }] });
    expect(error!.detail).toContain('98 %');
  });

  it('refuses a term the account’s sheet does not price with 422 term_not_priced', async () => {
    const lender = await app.newAccount('Two Terms Bank');
    const { data: current } = await lender.client.GET('/v1/pricing');
    const put = await lender.client.PUT('/v1/pricing', {
      body: { ...current!.rateSheet, baseRates: [{ minTermYears: 15, maxTermYears: 15, rate: 5.5 }, { minTermYears: 30, maxTermYears: 30, rate: 6 }] },
    });
    expect(put.response.status).toBe(200);
    const { error, response } = await lender.client.POST('/v1/quotes', { body: { amount: 200000, term: 20 } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'term_not_priced' });
    expect(error!.detail).toContain('15, 30 years');
  });

  it('replays the same quote for a retried Idempotency-Key', async () => {
    const headers = { 'Idempotency-Key': 'quote-retry-1' };
    const first = await account.client.POST('/v1/quotes', { body: { amount: 420000, term: 25 }, headers });
    const second = await account.client.POST('/v1/quotes', { body: { amount: 420000, term: 25 }, headers });
    expect(first.response.status).toBe(201);
    expect(second.response.status).toBe(201);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect(second.data).toEqual(first.data);
  });

  it('replays a retried Idempotency-Key whose body has its keys in another order and other whitespace', async () => {
    const send = (text: string) =>
      app.fetch('/v1/quotes', {
        method: 'POST',
        headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'quote-retry-order-1' },
        body: text,
      });
    const first = await send('{"amount":410000,"term":20,"propertyValue":500000}');
    const second = await send('{\n  "propertyValue": 500000,\n  "term": 20,\n  "amount": 410000\n}');
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(await first.json());
    // a different body with the same key is still refused
    const other = await send('{"term":20,"amount":410001,"propertyValue":500000}');
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('60 quotes at once (PostgreSQL shares INSERTs between them): each 201 is readable at once, with its own figures', async () => {
    const amounts = Array.from({ length: 60 }, (_, i) => 100_000 + i * 1000);
    await Promise.all(
      amounts.map(async (amount) => {
        const { data, response } = await account.client.POST('/v1/quotes', { body: { amount, term: 30 } });
        expect(response.status).toBe(201);
        const read = await account.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: data!.quoteId } } });
        expect(read.response.status).toBe(200);
        expect(read.data).toEqual(data);
        expect(read.data!.amount).toBe(amount);
      }),
    );
  });

  it('needs an API key (401 without one)', async () => {
    const { response } = await app.anonymous.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    expect(response.status).toBe(401);
  });
});

describe('getQuote', () => {
  it('returns the identical JSON after the rate sheet changes and after the quote expires', async () => {
    const lender = await app.newAccount('Steady Bank');
    const auth = { Authorization: `Bearer ${lender.apiKey}` };
    const created = await app.fetch('/v1/quotes', {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: 350000, term: 30, creditScore: 700 }),
    });
    expect(created.status).toBe(201);
    const createdText = await created.text();
    const quoteId = (JSON.parse(createdText) as { quoteId: string }).quoteId;

    const { data: current } = await lender.client.GET('/v1/pricing');
    await lender.client.PUT('/v1/pricing', {
      body: { ...current!.rateSheet, baseRates: [{ minTermYears: 1, maxTermYears: 40, rate: 9 }], originationFeePercent: 2 },
    });
    const repriced = await lender.client.POST('/v1/quotes', { body: { amount: 350000, term: 30, creditScore: 700 } });
    expect(repriced.data!.interestRate).toBe(9.25);

    clock.current = new Date('2027-03-01T00:00:00.000Z'); // past expiresAt
    try {
      const read = await app.fetch(`/v1/quotes/${quoteId}`, { headers: auth });
      expect(read.status).toBe(200);
      const readText = await read.text();
      expect(readText).toBe(createdText);
      expect(Date.parse((JSON.parse(readText) as { expiresAt: string }).expiresAt)).toBeLessThan(clock.now().getTime());
    } finally {
      clock.current = new Date('2026-11-21T18:30:00.000Z');
    }
  });

  it('answers 404 for another account’s quote, as for an unknown one', async () => {
    const { data } = await account.client.POST('/v1/quotes', { body: { amount: 300000, term: 30 } });
    const other = await app.newAccount('Other Lender');
    const theirs = await other.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: data!.quoteId } } });
    expect(theirs.response.status).toBe(404);
    const unknown = await other.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: 'qte-01jdz8k3n4q2v6x9b7c5t1r0aa' } } });
    expect(unknown.response.status).toBe(404);
    expect(theirs.error!.code).toBe(unknown.error!.code);
  });

  it('refuses a quote id of the wrong shape with 400', async () => {
    const { response } = await account.client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: 'mtg-123' } } });
    expect(response.status).toBe(400);
  });
});

describe('getQuoteSchedule', () => {
  it('lists every payment as JSON, agreeing with the quote’s figures', async () => {
    const { data: quote } = await account.client.POST('/v1/quotes', { body: { amount: 200000, term: 15 } });
    const { data, response } = await account.member.GET('/v1/quotes/{quoteId}/schedule', { params: { path: { quoteId: quote!.quoteId } } });
    expect(response.status).toBe(200);
    if (!data || typeof data === 'string') throw new Error('expected the JSON schedule');
    const payments = data.payments;
    expect(payments).toHaveLength(quote!.numberOfPayments);
    expect(payments.slice(0, -1).every((row) => row.payment === quote!.monthlyPayment)).toBe(true);
    expect(payments.at(-1)).toMatchObject({ number: 180, payment: quote!.finalPayment, balance: 0 });
    const interestCents = payments.reduce((sum, row) => sum + Math.round(row.interest * 100), 0);
    expect(interestCents).toBe(Math.round(quote!.totalInterest * 100));
  });

  it('answers CSV for Accept: text/csv, with the same rows', async () => {
    const { data: quote } = await account.client.POST('/v1/quotes', { body: { amount: 150000, term: 10 } });
    const response = await app.fetch(`/v1/quotes/${quote!.quoteId}/schedule`, {
      headers: { Authorization: `Bearer ${account.apiKey}`, Accept: 'text/csv' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parse(await response.text(), { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(120);
    expect(Object.keys(rows[0]!)).toEqual(['number', 'payment', 'principal', 'interest', 'balance']);
    expect(rows[0]!.payment).toBe(quote!.monthlyPayment.toFixed(2));
    expect(rows.at(-1)!.balance).toBe('0.00');
  });

  it('answers 404 for another account’s quote', async () => {
    const { data: quote } = await account.client.POST('/v1/quotes', { body: { amount: 150000, term: 10 } });
    const other = await app.newAccount('Curious Lender');
    const { response } = await other.client.GET('/v1/quotes/{quoteId}/schedule', { params: { path: { quoteId: quote!.quoteId } } });
    expect(response.status).toBe(404);
  });
});
