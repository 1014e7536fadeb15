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

  it('says which field it refused and why, naming a long field by its first 100 characters', () => {
    const schema = requestSchema('updatePricing');
    const refusal = (pairs: Array<[string, string]>) => {
      try {
        decodeForm(form(pairs), schema);
      } catch (err) {
        return err as { detail: string; facts: { errors: Array<{ pointer: string; message: string }> } };
      }
      throw new Error('the form was not refused');
    };
    expect(refusal([['/__proto__/x', 'y']]).detail).toBe('The form field "/__proto__/x" uses a reserved name.');
    expect(refusal([['/a//b', 'y']]).detail).toBe('The form field "/a//b" has an empty segment.');
    expect(refusal([['/flatFees/0/name', 'a'], ['/flatFees/x/name', 'b']]).detail).toBe('The form field "/flatFees/x/name" names a row that is not a number.');
    expect(refusal([['/baseRates', 'x'], ['/baseRates/0/rate', '1']]).detail).toBe('The form field "/baseRates/0/rate" sets a value inside another field.');
    const long = `/constructor/${'x'.repeat(300)}`;
    const cut = refusal([[long, 'y']]);
    expect(cut.detail).toBe(`The form field "${long.slice(0, 100)}…" uses a reserved name.`);
    expect(cut.facts.errors).toEqual([{ pointer: `${long.slice(0, 100)}…`, message: 'is not a field of this form' }]);
    const exact = `/constructor/${'x'.repeat(100 - '/constructor/'.length)}`;
    expect(refusal([[exact, 'y']]).detail).toBe(`The form field "${exact}" uses a reserved name.`);
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
      { pointer: '/role', message: 'must be one of: "admin", "member", "restricted"' },
    ]);
  });
});

describe('decodeForm, over a schema of its own', () => {
  const schema = {
    type: 'object',
    properties: {
      amount: { type: 'number' },
      count: { type: ['integer', 'null'] },
      enabled: { type: 'boolean' },
      note: { type: 'string' },
      choice: { anyOf: [{ type: 'boolean' }, { type: 'string' }] },
      tags: { type: 'array', items: { type: 'integer' } },
      nested: { allOf: [{ type: 'object', properties: { inner: { type: 'number' } } }] },
      either: { oneOf: [{ type: 'object', properties: { flag: { type: 'boolean' } } }] },
      rows: { type: 'array', items: { type: 'object', properties: { n: { type: 'number' }, on: { type: 'boolean' }, label: { type: 'string' } } } },
    },
  };

  it('types numbers (commas, signs, decimals, space around), booleans (true/on/false) by the schema, through anyOf, allOf and oneOf', () => {
    const { body } = decodeForm(
      form([
        ['/amount', ' -1,234.5 '], ['/count', '7'], ['/enabled', 'on'], ['/note', ' 12 '], ['/choice', 'false'],
        ['/nested/inner', '2.50'], ['/either/flag', 'true'], ['/tags', '1'], ['/tags', ' '], ['/tags', '3'],
      ]),
      schema,
    );
    expect(body).toEqual({ amount: -1234.5, count: 7, enabled: true, note: ' 12 ', choice: false, nested: { inner: 2.5 }, either: { flag: true }, tags: [1, 3] });
  });

  it('leaves text that is no number or boolean as it was sent, for the schema check to refuse', () => {
    const { body } = decodeForm(form([['/amount', '1.2.3'], ['/count', '1e3'], ['/enabled', 'yes'], ['/choice', 'maybe'], ['/tags', 'x']]), schema);
    expect(body).toEqual({ amount: '1.2.3', count: '1e3', enabled: 'yes', choice: 'maybe', tags: ['x'] });
    expect(decodeForm(form([['/amount', '.5'], ['/count', '5.']]), schema).body).toEqual({ amount: '.5', count: '5.' });
    expect(decodeForm(form([['/enabled', 'false'], ['/amount', '0']]), schema).body).toEqual({ enabled: false, amount: 0 });
    // Text fields keep "true", "on" and "false" as text; a value of spaces only is blank.
    expect(decodeForm(form([['/note', 'on'], ['/amount', '   ']]), schema).body).toEqual({ note: 'on' });
    expect(decodeForm(form([['/note', 'false']]), schema).body).toEqual({ note: 'false' });
  });

  it('builds rows of a table by index, drops blank ones, and maps each pointer of a kept row back to its field', () => {
    const { body, fieldOf } = decodeForm(
      form([
        ['/rows/0/n', ''], ['/rows/0/on', 'false'],
        ['/rows/1/n', '5'], ['/rows/1/on', 'false'],
        ['/rows/2/label', ''],
        ['/rows/3/n', '6'], ['/rows/3/on', 'false'], ['/rows/3/on', 'true'],
      ]),
      schema,
    );
    expect(body).toEqual({ rows: [{ n: 5, on: false }, { n: 6, on: true }] });
    expect(fieldOf('/rows/0/n')).toBe('/rows/1/n');
    expect(fieldOf('/rows/1')).toBe('/rows/3');
    expect(fieldOf('/rows/1/on')).toBe('/rows/3/on');
    expect(fieldOf('/rows')).toBe('/rows');
    expect(fieldOf('/amount')).toBe('/amount');
  });

  it('a row kept at its own index keeps its pointers; an empty form is an empty body', () => {
    const { body, fieldOf } = decodeForm(form([['/rows/0/n', '1'], ['/rows/1/n', '2']]), schema);
    expect(body).toEqual({ rows: [{ n: 1 }, { n: 2 }] });
    expect(fieldOf('/rows/1/n')).toBe('/rows/1/n');
    expect(decodeForm(form([]), schema).body).toEqual({});
    expect(decodeForm(form([['/unknown/deep', 'x']]), schema).body).toEqual({ unknown: { deep: 'x' } });
    // Only a segment of digits alone is an index (of any length); "a1" and "1a" are names.
    expect(decodeForm(form([['/unknown/a1', 'x'], ['/other/1a', 'y']]), schema).body).toEqual({ unknown: { a1: 'x' }, other: { '1a': 'y' } });
    const rows = decodeForm(form(Array.from({ length: 12 }, (_, i): [string, string] => [`/rows/${i}/n`, String(i)])), schema);
    expect(rows.body).toEqual({ rows: Array.from({ length: 12 }, (_, i) => ({ n: i })) });
    const tenth = decodeForm(form([['/rows/10/n', '7']]), schema);
    expect(tenth.body).toEqual({ rows: [{ n: 7 }] });
    expect(tenth.fieldOf('/rows/0/n')).toBe('/rows/10/n');
  });
});

describe('fieldErrors', () => {
  it('puts each issue beside its field, several on one field joined with "; "', () => {
    expect(fieldErrors([{ pointer: '/a', message: 'is required' }, { pointer: '/b', message: 'too big' }, { pointer: '/a', message: 'must be number' }])).toEqual({
      '/a': 'is required; must be number',
      '/b': 'too big',
    });
    expect(fieldErrors(undefined)).toEqual({});
    expect(fieldErrors([{ pointer: '/x/0', message: 'm' }], (p) => p.replace('/0', '/4'))).toEqual({ '/x/4': 'm' });
  });
});
