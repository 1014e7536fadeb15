/**
 * The text rule, declared in the contract: every string a client can send (request bodies, path,
 * query and header parameters of the published bundle) is either closed (`enum`, `const`), typed
 * by a `format` (date-time, email, uri, binary), an identifier-like pattern that admits printable
 * ASCII only, or free text carrying one of the two patterns of src/domain/text/textRule.ts. Webhook
 * payloads and responses are outputs and are not walked.
 */
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../src/contract/spec.ts';
import { MULTI_LINE_TEXT, SINGLE_LINE_TEXT } from '../../src/domain/text/textRule.ts';
import { label, parameters, spec, specOperations } from './harness.ts';

type Json = Record<string, any>;

interface StringField {
  where: string;
  schema: Json;
}

function typesOf(schema: Json): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === 'string' ? [schema.type] : [];
}

/** Every schema that admits strings, reached from `schema` through properties, items and combinators. */
function stringFields(schema: Json | undefined, where: string, into: StringField[] = [], seen = new Set<Json>()): StringField[] {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return into;
  seen.add(schema);
  if (typesOf(schema).includes('string')) into.push({ where, schema });
  for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) stringFields(child, `${where}/${name}`, into, seen);
  if (schema.items && typeof schema.items === 'object') stringFields(schema.items, `${where}/0`, into, seen);
  for (const [i, item] of ((schema.prefixItems ?? []) as Json[]).entries()) stringFields(item, `${where}/${i}`, into, seen);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') stringFields(schema.additionalProperties, `${where}/*`, into, seen);
  // Combinator branches are walked for the properties they add. A `not` (holderName's "not
  // blank") only narrows what the field's own pattern admits, so it is not walked.
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    for (const branch of (schema[keyword] ?? []) as Json[]) stringFields(branch, where, into, seen);
  }
  return into;
}

function requestSideStrings(): StringField[] {
  const fields: StringField[] = [];
  for (const op of specOperations()) {
    for (const where of ['path', 'query', 'header', 'cookie'] as const) {
      for (const param of parameters(op, where)) stringFields(param.schema, `${label(op)} ${where} parameter ${param.name}`, fields);
    }
    for (const [mediaType, media] of Object.entries((op.operation.requestBody?.content ?? {}) as Record<string, Json>)) {
      stringFields(media.schema, `${label(op)} ${mediaType} body `, fields);
    }
  }
  return fields;
}

const PRINTABLE_ASCII = (code: number | undefined) => code !== undefined && code >= 0x20 && code <= 0x7e;

/** The code point an escape at `pattern[i]` (a backslash) stands for, or a class letter; `next` is the index after it. */
function readEscape(pattern: string, i: number): { code?: number; set?: string; next: number } {
  const c = pattern[i + 1]!;
  const hex = (digits: string) => (/^[0-9A-Fa-f]+$/.test(digits) ? parseInt(digits, 16) : undefined);
  if (c === 'x') return { code: hex(pattern.slice(i + 2, i + 4)), next: i + 4 };
  if (c === 'u' && pattern[i + 2] === '{') {
    const close = pattern.indexOf('}', i);
    return { code: hex(pattern.slice(i + 3, close)), next: close + 1 };
  }
  if (c === 'u') return { code: hex(pattern.slice(i + 2, i + 6)), next: i + 6 };
  if ('dwbB'.includes(c)) return { set: c, next: i + 2 }; // ASCII digits and word characters; word boundaries
  if ('DWsSpPc0nrtfv'.includes(c)) return { set: c, next: i + 2 }; // negated or whitespace classes, control escapes: not an allow-list
  if (/[1-9]/.test(c)) return { set: 'backreference', next: i + 2 };
  return { code: c.codePointAt(0), next: i + 2 }; // an escaped literal: \. \- \/ \$ …
}

/**
 * Whether a pattern is an allow-list of printable ASCII (identifiers, codes, dates, cursors):
 * anchored at both ends, with no `.`, no negated class, no whitespace or negated escape, and
 * every character, range end and escape in the printable range U+0020 to U+007E.
 */
export function admitsOnlyPrintableAscii(pattern: string): boolean {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return false;
  const allowedSet = (set: string) => 'dwbB'.includes(set) || set === 'backreference';
  const end = pattern.length - 1;
  let i = 1;
  while (i < end) {
    const c = pattern[i]!;
    if (c === '\\') {
      const escape = readEscape(pattern, i);
      if (escape.set !== undefined ? !allowedSet(escape.set) : !PRINTABLE_ASCII(escape.code)) return false;
      i = escape.next;
    } else if (c === '[') {
      if (pattern[i + 1] === '^') return false;
      i++;
      while (i < end && pattern[i] !== ']') {
        if (pattern[i] === '\\') {
          const escape = readEscape(pattern, i);
          if (escape.set !== undefined ? !'dw'.includes(escape.set) : !PRINTABLE_ASCII(escape.code)) return false;
          i = escape.next;
        } else {
          // A range's ends are checked one by one: the printable range is contiguous.
          if (!PRINTABLE_ASCII(pattern.codePointAt(i))) return false;
          i += pattern.codePointAt(i)! > 0xffff ? 2 : 1;
        }
      }
      if (pattern[i] !== ']') return false;
      i++;
    } else if (c === '.') {
      return false;
    } else {
      if (!PRINTABLE_ASCII(pattern.codePointAt(i))) return false;
      i++;
    }
  }
  return true;
}

/** Why a request-side string breaks the text rule, or undefined when it keeps it. */
function textRuleGap(schema: Json): string | undefined {
  if (schema.enum !== undefined || schema.const !== undefined) return undefined;
  const pattern = schema.pattern as string | undefined;
  if (pattern === undefined) {
    return schema.format !== undefined ? undefined : `free text without a pattern: add pattern '${SINGLE_LINE_TEXT}' (src/domain/text/textRule.ts)`;
  }
  if (pattern === SINGLE_LINE_TEXT || admitsOnlyPrintableAscii(pattern)) return undefined;
  if (pattern === MULTI_LINE_TEXT) {
    return /multi-line|line break/i.test(String(schema.description ?? ''))
      ? undefined
      : 'the multi-line text rule on a field whose description does not say it may hold line breaks';
  }
  return `pattern ${JSON.stringify(pattern)} is neither a text rule of src/domain/text/textRule.ts nor an allow-list of printable ASCII`;
}

describe('every string a client sends keeps the text rule', () => {
  const fields = requestSideStrings();

  it('the walk reaches the request-side strings (free text and identifiers alike)', () => {
    const where = fields.map((f) => f.where);
    for (const expected of ['/applicant/name', '/holderName', '/note', '/description', '/csv/columns/0/header', 'query parameter cursor', 'path parameter mortgageId']) {
      expect(where.some((w) => w.endsWith(expected)), expected).toBe(true);
    }
  });

  it('each is closed, has a format, an allow-list pattern or one of the two text rules', () => {
    const gaps = fields.flatMap(({ where, schema }) => {
      const gap = textRuleGap(schema);
      return gap ? [`${where}: ${gap}`] : [];
    });
    expect(gaps, `fix these in openapi/ and run npm run generate:\n  - ${gaps.join('\n  - ')}`).toEqual([]);
  });

  it('the contract states the rule once, in its description, with both patterns', () => {
    expect(spec.info.description).toContain('## Text fields');
    expect(spec.info.description).toContain(SINGLE_LINE_TEXT);
    expect(spec.info.description).toContain(MULTI_LINE_TEXT);
  });
});

describe('the text rules, as the edge compiles them (Ajv, Unicode mode)', () => {
  const ajv = createAjv();
  const single = ajv.compile({ type: 'string', pattern: SINGLE_LINE_TEXT });
  const multi = ajv.compile({ type: 'string', pattern: MULTI_LINE_TEXT });

  it.each([
    { what: 'plain text', value: 'Jane Doe', single: true, multi: true },
    { what: 'the empty string', value: '', single: true, multi: true },
    { what: 'accents and other scripts', value: 'Zoë Ångström-Łukasiewicz, 李小龍, Ωμέγα', single: true, multi: true },
    { what: 'an emoji (a valid surrogate pair)', value: 'Harbor Lending 🏠', single: true, multi: true },
    { what: 'DEL and C1 controls (not C0)', value: 'a\u007Fb\u0085c', single: true, multi: true },
    { what: 'a tab', value: 'a\tb', single: false, multi: true },
    { what: 'a line feed', value: 'first line\nsecond line', single: false, multi: true },
    { what: 'a carriage return and line feed', value: 'first line\r\nsecond line', single: false, multi: true },
    { what: 'NUL', value: 'Jane\u0000Doe', single: false, multi: false },
    { what: 'U+001F', value: 'a\u001Fb', single: false, multi: false },
    { what: 'a vertical tab', value: 'a\u000Bb', single: false, multi: false },
    { what: 'a form feed', value: 'a\u000Cb', single: false, multi: false },
    { what: 'an escape (terminal control)', value: '\u001B[31mred', single: false, multi: false },
    { what: 'a lone high surrogate', value: 'Jane\uD800Doe', single: false, multi: false },
    { what: 'a lone low surrogate', value: 'Jane\uDFFF', single: false, multi: false },
    { what: 'a pair written backwards', value: '\uDE00\uD83D', single: false, multi: false },
  ])('$what: single-line $single, multi-line $multi', ({ value, single: singleOk, multi: multiOk }) => {
    expect(single(value)).toBe(singleOk);
    expect(multi(value)).toBe(multiOk);
  });
});

describe('allow-list patterns', () => {
  it('recognises the identifier-like patterns of the contract and refuses the rest', () => {
    for (const pattern of ['^mtg-[0-9a-z]{26}$', '^[\\x21-\\x7E]+$', '^[A-Za-z., ]+$', '^[A-Za-z0-9_-]+$', '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2}))?$']) {
      expect(admitsOnlyPrintableAscii(pattern), pattern).toBe(true);
    }
    for (const pattern of ['\\S', '^.*$', '^[^<>]*$', '^\\S+$', '^[\\x00-\\x7F]+$', '^[a-z\\s]+$', '^[a-zé]+$', '^[a-z]+', '^a\\$']) {
      expect(admitsOnlyPrintableAscii(pattern), pattern).toBe(false);
    }
  });
});
