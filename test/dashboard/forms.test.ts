/** Forms as request bodies: fields named by JSON pointers, typed by the operation's request schema, checked by the contract. */
import { describe, expect, it } from 'vitest';
import { decodeForm, fieldErrors } from '../../src/dashboard/forms.ts';
import { contractIssues, requestSchema } from '../../src/dashboard/validation.ts';

const form = (pairs: Array<[string, string]>) => new URLSearchParams(pairs);

describe('decodeForm', () => {
  it('types values by the schema, leaves out blank fields and ignores fields that are no pointer', () => {
    const { body } = decodeForm(form([['_csrf', 't'], ['/amount', '350,000.50'], ['/term', '30'], ['/propertyValue', ''], ['/creditScore', 'seven hundred']]), requestSchema('createQuote'));
    expect(body).toEqual({ amount: 350000.5, term: 30, creditScore: 'seven hundred' });
    // The contract then says what the API would: the text is not a number.
    expect(contractIssues('createQuote', body)).toEqual([{ pointer: '/creditScore', message: 'must be integer,null' }]);
  });

  it('repeated fields make an array where the schema wants one (checkboxes), else the last value counts', () => {
    const { body } = decodeForm(form([['/url', 'https://x.test/a'], ['/events', 'application.approved'], ['/events', 'document.uploaded']]), requestSchema('createWebhook'));
    expect(body).toEqual({ url: 'https://x.test/a', events: ['application.approved', 'document.uploaded'] });
  });

  it('drops blank rows of a table (a hidden false of an unticked checkbox is blank) and maps pointers back to the fields shown', () => {
    const { body, fieldOf } = decodeForm(
      form([
        ['/flatFees/0/name', 'appraisal'], ['/flatFees/0/amount', '500'], ['/flatFees/0/prepaidFinanceCharge', 'false'], ['/flatFees/0/prepaidFinanceCharge', 'true'],
        ['/flatFees/1/name', ''], ['/flatFees/1/amount', ''], ['/flatFees/1/prepaidFinanceCharge', 'false'],
        ['/flatFees/2/name', 'Bad Name'], ['/flatFees/2/amount', '10'], ['/flatFees/2/prepaidFinanceCharge', 'false'],
      ]),
      requestSchema('updatePricing'),
    );
    expect(body).toEqual({ flatFees: [{ name: 'appraisal', amount: 500, prepaidFinanceCharge: true }, { name: 'Bad Name', amount: 10, prepaidFinanceCharge: false }] });
    expect(fieldOf('/flatFees/1/name')).toBe('/flatFees/2/name');
    expect(fieldOf('/flatFees/0/amount')).toBe('/flatFees/0/amount');
    const issues = contractIssues('updatePricing', body).filter((i) => i.pointer.startsWith('/flatFees'));
    expect(fieldErrors(issues, fieldOf)).toEqual({ '/flatFees/2/name': 'must match pattern "^[a-z][a-z0-9_]{0,39}$"' });
  });

  it('refuses field names that walk into a prototype, a row that is not a number, and a field inside a value; builds objects without a prototype', () => {
    const schema = requestSchema('updatePricing');
    for (const name of ['/__proto__/polluted', '/constructor/prototype/polluted', '/flatFees/0/prototype', '/flatFees/__proto__/name', '/a//b']) {
      expect(() => decodeForm(form([[name, 'yes']]), schema), name).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    }
    for (const row of ['x', '1000']) {
      expect(() => decodeForm(form([['/flatFees/0/name', 'a'], [`/flatFees/${row}/name`, 'b']]), schema), row).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    }
    expect(() => decodeForm(form([['/baseRates', 'x'], ['/baseRates/0/rate', '1']]), schema)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const { body } = decodeForm<{ flatFees: object[] }>(form([['/flatFees/0/name', 'appraisal']]), schema);
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect(Object.getPrototypeOf(body.flatFees[0])).toBeNull();
  });

  it("a text field breaking the text rule gets the API's own message beside it", () => {
    // (A form cannot carry an unpaired surrogate: form encoding, like URLSearchParams, makes it U+FFFD.)
    for (const name of ['a\u0000b', 'a\u001bb', 'a\nb']) {
      const { body } = decodeForm(form([['/name', name], ['/role', 'member']]), requestSchema('createApiKey'));
      expect(fieldErrors(contractIssues('createApiKey', body))).toEqual({ '/name': 'must not contain control characters (U+0000–U+001F) or unpaired surrogates' });
    }
  });

  it('the contract check gives the API 400 pointers and words', () => {
    expect(contractIssues('createApiKey', { role: 'owner' })).toEqual([
      { pointer: '/name', message: 'is required' },
      { pointer: '/role', message: 'must be one of: "admin", "member"' },
    ]);
  });
});
