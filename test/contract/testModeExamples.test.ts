/**
 * The spec's examples are test-mode examples, so what a partner sees from the mock is what test
 * mode answers: every example value anywhere in the published document (operation examples, named
 * examples, schema examples) uses test keys (`mos_test_…`), says `livemode: false`, carries bank
 * tokens of the test-mode sandbox bank only, and bank account numbers of the documented test values.
 * (That the examples' decisions are what test mode decides is test/api/testMode.test.ts.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testValues } from '../../src/contract/testValues.ts';
import { PROJECT_ROOT } from '../helpers/server.ts';

type Json = Record<string, any>;

const published: Json = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'generated', 'openapi.json'), 'utf8'));
const TEST_MODE_BANK_TOKEN = /^bnk_tok_testmodesandbox00000000000_/;

/** Every value given as an example, with the path of keys that leads to it (through the example's own keys too). */
function exampleValues(): Array<{ at: string[]; value: unknown }> {
  const found: Array<{ at: string[]; value: unknown }> = [];
  const collect = (value: unknown, at: string[]) => {
    if (Array.isArray(value)) value.forEach((v, i) => collect(v, [...at, String(i)]));
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) collect(v, [...at, k]);
    else found.push({ at, value });
  };
  const walk = (node: unknown, at: string[]) => {
    if (Array.isArray(node)) return node.forEach((v, i) => walk(v, [...at, String(i)]));
    if (!node || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node as Json)) {
      if (key === 'x-test-values') continue; // the declaration of the test values, not an example
      if (key === 'example') collect(child, [...at, key]);
      else if (key === 'examples' && Array.isArray(child)) collect(child, [...at, key]);
      else if (key === 'examples' && child && typeof child === 'object') {
        for (const [name, entry] of Object.entries(child as Json)) {
          const resolved: Json = typeof entry.$ref === 'string' ? published.components.examples[entry.$ref.split('/').pop()] : entry;
          collect(resolved.value, [...at, key, name]);
        }
      } else if (key === 'value' && at.at(-2) === 'examples' && at.at(-3) === 'components') collect(child, [...at, key]);
      else walk(child, [...at, key]);
    }
  };
  walk(published, []);
  return found;
}

const values = exampleValues();
const where = (at: string[]) => at.join(' › ');

describe("the spec's examples are test-mode examples", () => {
  it('finds the examples (a check of the walk)', () => {
    expect(values.length).toBeGreaterThan(500);
    expect(values.some(({ at }) => at.includes('livemode'))).toBe(true);
  });

  it('every livemode is false', () => {
    const live = values.filter(({ at, value }) => (at.includes('livemode') || at.includes('Livemode')) && typeof value === 'boolean' && value !== false);
    expect(live.map(({ at }) => where(at))).toEqual([]);
  });

  it('every API key is a test key', () => {
    const keys = values.filter(({ value }) => typeof value === 'string' && /^mos_/.test(value));
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter(({ value }) => !String(value).startsWith('mos_test_')).map(({ at, value }) => `${where(at)}: ${String(value)}`)).toEqual([]);
  });

  it('every bank token is one of the test-mode sandbox bank, and every account number a documented test value', () => {
    const tokens = values.filter(({ value }) => typeof value === 'string' && value.startsWith('bnk_tok_'));
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.filter(({ value }) => !TEST_MODE_BANK_TOKEN.test(String(value))).map(({ at }) => where(at))).toEqual([]);

    const documented = new Set(testValues().bankAccounts.map((a) => a.accountNumber));
    const numbers = values.filter(({ at, value }) => typeof value === 'string' && (at.includes('accountNumber') || at.includes('BankAccountNumber')));
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.filter(({ value }) => !documented.has(String(value))).map(({ at, value }) => `${where(at)}: ${String(value)}`)).toEqual([]);
  });
});
