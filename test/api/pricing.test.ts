import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { DEFAULT_RATE_SHEET } from '../../src/domain/pricing/rateSheet.ts';
import { spec } from '../helpers/contractFetch.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

type RateSheet = components['schemas']['RateSheet'];

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const twoTerms: RateSheet = {
  ...structuredClone(DEFAULT_RATE_SHEET),
  baseRates: [
    { minTermYears: 30, maxTermYears: 30, rate: 6.25 },
    { minTermYears: 15, maxTermYears: 15, rate: 5.625 },
  ],
  flatFees: [{ name: 'processing', amount: 450.5, prepaidFinanceCharge: true }],
  quoteValidityDays: 14,
};

describe('getPricing', () => {
  it('shows the documented default sheet to an account that never set one', async () => {
    const account = await app.newAccount();
    const { data, response } = await account.client.GET('/v1/pricing');
    expect(response.status).toBe(200);
    expect(data).toEqual({ rateSheet: DEFAULT_RATE_SHEET, isDefault: true, updatedAt: null, livemode: true });
  });

  it('the default sheet documented in the contract is the one applied', () => {
    const example = spec.paths['/v1/pricing'].get.responses['200'].content['application/json'].examples.default.value;
    expect(example.rateSheet).toEqual(DEFAULT_RATE_SHEET);
  });

  it('is refused to a member key (403)', async () => {
    const account = await app.newAccount();
    const { error, response } = await account.member.GET('/v1/pricing');
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'forbidden' });
  });
});

describe('updatePricing', () => {
  it('replaces the sheet, which GET then returns and new quotes are priced from', async () => {
    const account = await app.newAccount();
    const put = await account.client.PUT('/v1/pricing', { body: twoTerms });
    expect(put.response.status).toBe(200);
    expect(put.data!.isDefault).toBe(false);
    expect(put.data!.rateSheet.baseRates.map((b) => b.minTermYears)).toEqual([15, 30]); // stored in term order
    const got = await account.client.GET('/v1/pricing');
    expect(got.data).toEqual(put.data);

    const quote = await account.member.POST('/v1/quotes', { body: { amount: 200000, term: 15 } });
    expect(quote.data).toMatchObject({ interestRate: 5.625 });
    expect(quote.data!.fees).toContainEqual({ name: 'processing', amount: 450.5, prepaidFinanceCharge: true });
    expect(Date.parse(quote.data!.expiresAt) - Date.parse(quote.data!.createdAt)).toBe(14 * 86_400_000);
  });

  it('refuses a sheet that breaks its rules whole, with 422 and a pointer per problem, and changes nothing', async () => {
    const account = await app.newAccount();
    const broken: RateSheet = {
      ...structuredClone(DEFAULT_RATE_SHEET),
      baseRates: [
        { minTermYears: 1, maxTermYears: 20, rate: 6 },
        { minTermYears: 15, maxTermYears: 30, rate: 0.1 },
      ],
      ltvAdjustments: [
        { aboveLtv: 0, upToLtv: 60, adjustment: -0.25 },
        { aboveLtv: 70, upToLtv: 97, adjustment: 0.5 },
      ],
    };
    const { error, response } = await account.client.PUT('/v1/pricing', { body: broken });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'invalid_rate_sheet' });
    expect(error!.errors!.map((e) => e.pointer)).toEqual(['/baseRates/1', '/ltvAdjustments/1/aboveLtv', '/baseRates/1/rate']);
    const { data } = await account.client.GET('/v1/pricing');
    expect(data!.isDefault).toBe(true);
  });

  it('refuses a rate with more than three decimals with 400 pointing at it', async () => {
    const account = await app.newAccount();
    const sheet = { ...structuredClone(DEFAULT_RATE_SHEET), maxLtv: 96.5, baseRates: [{ minTermYears: 1, maxTermYears: 40, rate: 6.1255 }] };
    const { error, response } = await account.client.PUT('/v1/pricing', { body: sheet });
    expect(response.status).toBe(400);
    expect(error!.errors).toEqual([{ pointer: '/baseRates/0/rate', message: expect.stringContaining('three decimals') }]);
  });

  it('refuses a sheet with a missing field or an unknown one with 400', async () => {
    const account = await app.newAccount();
    const { maxLtv: _dropped, ...missing } = structuredClone(DEFAULT_RATE_SHEET);
    const res = await app.fetch('/v1/pricing', {
      method: 'PUT',
      headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...missing, surprise: true }),
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: Array<{ pointer: string }> };
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(['/maxLtv', '/surprise']);
  });

  it('is refused to a member key (403)', async () => {
    const account = await app.newAccount();
    const { response } = await account.member.PUT('/v1/pricing', { body: twoTerms });
    expect(response.status).toBe(403);
  });
});
