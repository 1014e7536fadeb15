/**
 * What one version change is: the shape of a module under changes/. A change belongs to the
 * version (a date) that introduced it; rendering for an older caller undoes it, newest change first.
 * Handlers and use cases know only the current shapes: changes are applied at the edges (the HTTP
 * response, the event feed, each webhook delivery) and to the contract itself (the frozen bundles).
 */

import type { ExportSource } from '../exports/fields.ts';

/** A JSON value as parsed: a body, a payload, or a part of either. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** An OpenAPI document as parsed JSON (the bundle), edited in place by downgradeSpec. */
export type SpecDocument = { [key: string]: Json };

export interface VersionChange {
  /** The version that introduced the change: a date, `YYYY-MM-DD`. */
  version: string;
  /** A short name, stable across releases (the changelog's anchor). */
  name: string;
  /** For partners: what changed and what a caller on an older version sees instead. */
  description: string;
  /** What the change touches: operationIds, component schema names and event kinds. */
  touches: { operations: string[]; schemas: string[]; events: string[] };
  /**
   * The response body of `operationId` (status 2xx) as the version before this change renders it:
   * the same object when nothing changes, and never edited in place (copy what changes: rewriteObjects).
   */
  downgradeResponse?(operationId: string, body: Json): Json | typeof ABSENT;
  /**
   * An event's payload as the version before this change renders it, or null when that version has
   * no such event (it is then neither delivered nor listed there).
   */
  downgradeEvent?(type: string, payload: Json): Json | null;
  /**
   * One mortgage export record (every format writes from these rows) as the version before this
   * change writes it: the same row when nothing changes, else a copy. Called row by row as the
   * export streams, so it must not look at other rows.
   */
  downgradeExportRecord?(record: ExportSource): ExportSource;
  /**
   * The statuses the version before this change writes as another in exports, when a rename is all
   * the change does to a record: unlike downgradeExportRecord, PostgreSQL's COPY applies it too, so
   * an export in an older version keeps that fast path. (Applied to every other format as well.)
   */
  readonly exportStatusShownAs?: Readonly<Record<string, string>>;
  /**
   * The current statuses an export's `status` filter stands for when a caller on the version before
   * this change sends `status` (a status it knows, or one it lacks: []), so the records it is shown
   * with that status are the ones it gets; undefined when this change leaves the filter alone.
   */
  upgradeStatusFilter?(status: string): readonly string[] | undefined;
  /** The bundled contract as the version before this change publishes it (edited in place). */
  downgradeSpec(spec: SpecDocument): void;
}

/** The object at `pointer` segments of `spec`, or undefined (for changes that edit named components). */
export function specAt(spec: SpecDocument, ...segments: string[]): { [key: string]: Json } | undefined {
  let node: Json | undefined = spec;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = node[segment];
  }
  return node !== null && typeof node === 'object' && !Array.isArray(node) ? node : undefined;
}

/** Removes `values` from the enum of the component schema `name` (a narrowed enum in the older version). */
export function narrowEnum(spec: SpecDocument, name: string, values: readonly string[]): void {
  const schema = specAt(spec, 'components', 'schemas', name);
  if (!schema || !Array.isArray(schema.enum)) throw new Error(`The contract has no enum schema ${name}`);
  schema.enum = schema.enum.filter((value) => !values.includes(value as string));
}

/**
 * `value` with each object replaced by what `rewrite` returns for it (undefined: kept), copying only
 * the objects and arrays on the way to a replaced one: a response body may be an object the handler
 * keeps (a cached record, an example of the spec), and copying a whole body costs more than the
 * change (scripts/bench/versions.ts).
 */
export function rewriteObjects(value: Json, rewrite: (object: { readonly [key: string]: Json }) => { [key: string]: Json } | undefined): Json {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: Json[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item = rewriteObjects(value[i]!, rewrite);
      if (item !== value[i]) (copy ??= value.slice())[i] = item;
    }
    return copy ?? value;
  }
  let copy = rewrite(value);
  for (const key in copy ?? value) {
    const child = (copy ?? value)[key]!;
    if (child === null || typeof child !== 'object') continue;
    const rewritten = rewriteObjects(child, rewrite);
    if (rewritten !== child) (copy ??= { ...value })[key] = rewritten;
  }
  return copy ?? value;
}

/** Every object in `value` (depth first), so a change can rewrite a field wherever a schema appears. */
export function eachObject(value: Json, visit: (object: { [key: string]: Json }) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) eachObject(item, visit);
  } else if (value !== null && typeof value === 'object') {
    visit(value);
    for (const key in value) {
      const child = value[key]!;
      if (child !== null && typeof child === 'object') eachObject(child, visit);
    }
  }
}

/** What a downgrade returns for a resource the older version does not have: the edge answers 404 for it. */
export const ABSENT: unique symbol = Symbol('absent in this version');

/** Every example value of the document (named `examples` and single `example`), so a change can render them in the older shape too. */
export function eachExample(spec: SpecDocument, visit: (value: Json) => void): void {
  eachObject(spec, (object) => {
    if ('example' in object) visit(object.example!);
    const examples = object.examples;
    if (examples === null || typeof examples !== 'object' || Array.isArray(examples)) return;
    for (const name in examples) {
      const example = examples[name];
      if (example !== null && typeof example === 'object' && !Array.isArray(example) && 'value' in example) visit(example.value!);
    }
  });
}
