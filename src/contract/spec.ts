/**
 * The contract as the running service sees it: the bundled spec (generated/openapi.json, written
 * by `npm run generate`) read and parsed once, and the one way to build an Ajv instance that
 * validates its schemas (JSON Schema 2020-12, the ajv-formats formats, and the OpenAPI formats
 * int32/int64/float/double/byte/binary/password accepted as annotations).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Document } from 'openapi-backend';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const BUNDLED_SPEC_URL = new URL('../../generated/openapi.json', import.meta.url);

/** Formats OpenAPI defines on top of JSON Schema: annotations only, never a reason to refuse. */
export const OPENAPI_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'] as const;

let parsed: Document | undefined;

/**
 * The bundled spec, a fresh copy for each caller: the file is read and parsed once, and each
 * caller gets its own deep copy (openapi-backend dereferences and changes the document it is given).
 */
export function loadBundledSpec(): Document {
  parsed ??= JSON.parse(readFileSync(BUNDLED_SPEC_URL, 'utf8')) as Document;
  return structuredClone(parsed);
}

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
