/**
 * The contract as the running service sees it: the bundled spec (generated/openapi.json, written
 * by `npm run generate`) read and parsed once, and the one way to build an Ajv instance that
 * validates its schemas (JSON Schema 2020-12, the ajv-formats formats, and the OpenAPI formats
 * int32/int64/float/double/byte/binary/password accepted as annotations).
 *
 * The file is what partners get at /openapi.json: a normal bundle that keeps named components and
 * `$ref`s (client generators need the names). Code that wants plain schemas (the event catalog,
 * tests compiling a response schema) gets the document dereferenced here, in memory.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Document } from 'openapi-backend';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const BUNDLED_SPEC_URL = new URL('../../generated/openapi.json', import.meta.url);

/** Formats OpenAPI defines on top of JSON Schema: annotations only, never a reason to refuse. */
export const OPENAPI_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'] as const;

let dereferenced: Document | undefined;

/**
 * The bundled spec with every `$ref` replaced by what it points at, a fresh copy for each caller:
 * the file is read, parsed and dereferenced once, and each caller gets its own deep copy
 * (openapi-backend changes the document it is given). A component used in several places is one
 * shared object in the copy, so it stays small.
 */
export function loadBundledSpec(): Document {
  dereferenced ??= dereference(JSON.parse(readFileSync(BUNDLED_SPEC_URL, 'utf8'))) as Document;
  return structuredClone(dereferenced);
}

type JsonValue = unknown;

/**
 * Replaces every local `$ref` (`#/components/...`, the only kind a bundle holds) with its target,
 * itself dereferenced. Each target is resolved once and shared by everything that refers to it.
 * A `$ref` that points outside the document, or into a cycle, is an error: the bundle has neither.
 */
export function dereference<T>(document: T): T {
  const resolved = new Map<string, JsonValue>();
  const resolving = new Set<string>();

  const target = (ref: string): JsonValue => {
    if (!ref.startsWith('#/')) throw new Error(`cannot dereference ${ref}: only local references are bundled`);
    let node: JsonValue = document;
    for (const token of ref.slice(2).split('/')) {
      const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
      node = node !== null && typeof node === 'object' ? (node as Record<string, JsonValue>)[key] : undefined;
      if (node === undefined) throw new Error(`cannot dereference ${ref}: nothing there`);
    }
    return node;
  };

  const walk = (node: JsonValue): JsonValue => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const object = node as Record<string, JsonValue>;
    const ref = object.$ref;
    if (typeof ref === 'string') {
      let value = resolved.get(ref);
      if (value === undefined) {
        if (resolving.has(ref)) throw new Error(`cannot dereference ${ref}: it refers to itself`);
        resolving.add(ref);
        value = walk(target(ref));
        resolving.delete(ref);
        resolved.set(ref, value);
      }
      // OpenAPI 3.1 allows keywords beside a $ref (a description); they win over the target's.
      const { $ref: _ref, ...beside } = object;
      return Object.keys(beside).length === 0 ? value : { ...(value as object), ...(walk(beside) as object) };
    }
    return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, walk(value)]));
  };

  return walk(document) as T;
}

/**
 * How request bodies are checked against the spec, wherever they come from (the API's edge, the
 * dashboard's forms): every error reported, with its schema (`verbose`: a message names the
 * value's `x-unit`), and the schema's defaults filled in, so both give the same words and the use
 * cases get the same body.
 */
export const REQUEST_VALIDATION_OPTIONS = { strict: false, allErrors: true, verbose: true, useDefaults: true } as const satisfies Options;

/**
 * An Ajv for the spec's schemas: 2020-12, ajv-formats, and the OpenAPI formats. `strict` is off
 * unless `options` turn it on (the spec's schemas carry OpenAPI keywords such as `example`).
 * Usable as openapi-backend's `customizeAjv: (_ajv, options) => createAjv(options)`.
 */
export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, ...options });
  addFormats(ajv);
  for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true);
  return ajv;
}
