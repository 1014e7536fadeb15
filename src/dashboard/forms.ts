/**
 * HTML forms as the API's request bodies. A form field is named by the JSON Pointer of the value
 * it sets in the body (`/amount`, `/baseRates/2/rate`), so the API's validation messages, which
 * carry pointers, land beside the field they are about. Values are typed by the request schema of
 * the operation the form stands for (a number field becomes a number; text that is not a number
 * stays text, and the schema check then says "must be number", as the API would).
 */
import type { Context } from 'koa';
import { fail, type FieldIssue } from '../errors.ts';

/** The largest form body the dashboard reads (the rate sheet, the biggest form, is a few KiB). */
const FORM_LIMIT_BYTES = 64 * 1024;

/** Reads an `application/x-www-form-urlencoded` body (415 for anything else, 413 past the limit). */
export async function readForm(koa: Context): Promise<URLSearchParams> {
  if (!koa.is('application/x-www-form-urlencoded')) throw fail.unsupportedMediaType('Dashboard forms are sent as application/x-www-form-urlencoded.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of koa.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) throw new DashboardFormTooLarge();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export class DashboardFormTooLarge extends Error {
  constructor() {
    super(`The form is larger than ${FORM_LIMIT_BYTES} bytes.`);
  }
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/** The schema at `segments` below `schema` (through properties, items and the first branch of combinators). */
function schemaAt(schema: Schema | undefined, segments: string[]): Schema | undefined {
  let node = schema;
  for (const segment of segments) {
    if (!node) return undefined;
    node = node.properties?.[segment] ?? node.items ?? [...(node.allOf ?? []), ...(node.anyOf ?? []), ...(node.oneOf ?? [])].map((s) => schemaAt(s, [segment])).find(Boolean);
  }
  return node;
}

function typesOf(schema: Schema | undefined): string[] {
  if (!schema) return [];
  const own = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  return [...own, ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap(typesOf)];
}

const NUMBER = /^-?\d+(\.\d+)?$/;

/** A field's text as the type the schema wants there; text that does not convert is left as text. */
function typed(raw: string, schema: Schema | undefined): unknown {
  const types = typesOf(schema);
  const text = raw.trim();
  if (types.includes('number') || types.includes('integer')) {
    const plain = text.replaceAll(',', '');
    return NUMBER.test(plain) ? Number(plain) : raw;
  }
  if (types.includes('boolean')) return text === 'true' || text === 'on' ? true : text === 'false' ? false : raw;
  return raw;
}

/** A row number a form may name: tables on these pages have tens of rows, never thousands. */
const ROW_INDEX = /^(0|[1-9]\d{0,2})$/;

/** Names that would reach an object's prototype machinery if they were ever walked on a plain object. */
const RESERVED_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

function notAField(name: string, why: string) {
  const shown = name.length > 100 ? `${name.slice(0, 100)}…` : name;
  return fail.validation(`The form field ${JSON.stringify(shown)} ${why}.`, [{ pointer: shown, message: 'is not a field of this form' }]);
}

/** Refuses a field name no form of the dashboard has: reserved names and empty segments. */
function checkFieldName(name: string, segments: string[]): void {
  if (segments.some((segment) => RESERVED_SEGMENTS.has(segment))) throw notAField(name, 'uses a reserved name');
  if (segments.some((segment) => segment === '')) throw notAField(name, 'has an empty segment');
}

export interface DecodedForm<T> {
  body: T;
  /** Turns a pointer into the body back into the name of the field it came from (rows left blank were dropped). */
  fieldOf(pointer: string): string;
}

/**
 * Builds the request body from the fields named by pointers. Blank fields are left out (the
 * schema says whether they were required); a row of an array whose fields are all blank is
 * dropped (unticked checkboxes do not count), so a form can offer empty rows to add. A field repeated (checkboxes of one name) makes
 * an array when the schema wants one there, else its last value counts (a hidden `false` before
 * a checkbox's `true`).
 */
export function decodeForm<T = Record<string, unknown>>(form: URLSearchParams, schema: unknown): DecodedForm<T> {
  // Field names are the client's: every object they name is built without a prototype, so no
  // name (`/__proto__/x`, `/constructor/prototype/x`) can reach a prototype shared by the process.
  const body: Record<string, unknown> = Object.create(null);
  const root = schema as Schema;
  for (const name of new Set(form.keys())) {
    if (!name.startsWith('/')) continue;
    const segments = name.slice(1).split('/');
    checkFieldName(name, segments);
    const fieldSchema = schemaAt(root, segments);
    const values = form.getAll(name);
    let value: unknown;
    if (typesOf(fieldSchema).includes('array')) value = values.filter((v) => v.trim() !== '').map((v) => typed(v, fieldSchema?.items));
    else {
      const last = values.at(-1) ?? '';
      if (last.trim() === '') continue;
      value = typed(last, fieldSchema);
    }
    let node: Record<string, unknown> | unknown[] = body;
    segments.forEach((segment, i) => {
      if (Array.isArray(node) && !ROW_INDEX.test(segment)) throw notAField(name, 'names a row that is not a number');
      const container = node as Record<string, unknown>;
      if (i === segments.length - 1) {
        container[segment] = value;
        return;
      }
      const existing = container[segment];
      if (existing !== undefined && (existing === null || typeof existing !== 'object')) throw notAField(name, 'sets a value inside another field');
      node = (existing ?? (container[segment] = ROW_INDEX.test(segments[i + 1]!) ? [] : Object.create(null))) as Record<string, unknown>;
    });
  }
  // Arrays filled by index: drop the holes (rows left blank), remembering where each row came from.
  const remap = new Map<string, string>();
  const compact = (node: unknown, path: string): unknown => {
    if (Array.isArray(node)) {
      const kept: unknown[] = [];
      node.forEach((item, index) => {
        // A row left blank: nothing, or only unticked checkboxes (their hidden `false`).
        if (item === undefined || (item !== null && typeof item === 'object' && Object.values(item).every((v) => v === false))) return;
        if (String(kept.length) !== String(index)) remap.set(`${path}/${kept.length}`, `${path}/${index}`);
        kept.push(compact(item, `${path}/${index}`));
      });
      return kept;
    }
    if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) (node as Record<string, unknown>)[key] = compact(value, `${path}/${key}`);
    }
    return node;
  };
  compact(body, '');
  return {
    body: body as T,
    fieldOf(pointer) {
      const segments = pointer.split('/');
      for (let end = segments.length; end > 1; end--) {
        const prefix = segments.slice(0, end).join('/');
        const original = remap.get(prefix);
        if (original) return [original, ...segments.slice(end)].join('/');
      }
      return pointer;
    },
  };
}

/** Field messages by field name, for a form to show beside its fields. */
export type FieldErrors = Record<string, string>;

export function fieldErrors(issues: readonly FieldIssue[] | undefined, fieldOf: (pointer: string) => string = (p) => p): FieldErrors {
  const errors: FieldErrors = Object.create(null);
  for (const issue of issues ?? []) {
    const field = fieldOf(issue.pointer);
    errors[field] = errors[field] ? `${errors[field]}; ${issue.message}` : issue.message;
  }
  return errors;
}
