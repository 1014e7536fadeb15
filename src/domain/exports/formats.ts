/**
 * Export formats: the built-in ones (`json`, `ndjson`, `csv`) and the bases of custom ones
 * (`csv` with its own layout, `mismo`), what each is sent as, and the writer that turns batches of
 * rows into text. A writer is made per export and keeps what it needs between batches (whether a
 * JSON record already went out, for the comma).
 */
import { CsvWriter, builtInCsvLayout, customCsvLayout, type CsvFormatOptions, type CsvLayout } from './csv.ts';
import { EXPORT_FIELDS, type ExportSource, type FieldDefinition } from './fields.ts';
import { JsonRecords } from './json.ts';
import { mismoDeal, mismoEpilogue, mismoPrologue } from './mismo.ts';

export const BUILT_IN_FORMATS = ['json', 'ndjson', 'csv'] as const;
export type BuiltInFormat = (typeof BUILT_IN_FORMATS)[number];

/** The form of a custom format's name (the spec's ExportFormatName). */
const FORMAT_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

export function isExportFormatName(name: string): boolean {
  return FORMAT_NAME.test(name);
}

export function isBuiltInFormat(name: string): name is BuiltInFormat {
  return (BUILT_IN_FORMATS as readonly string[]).includes(name);
}

/** What an export writes, once the `format` parameter is resolved. */
export type ExportFormatSpec =
  | { base: 'json' }
  | { base: 'ndjson' }
  | { base: 'csv'; custom: CsvFormatOptions | null }
  | { base: 'mismo' };

/** A custom format's definition as it is stored. */
export interface CustomFormatDefinition {
  base: 'csv' | 'mismo';
  csv: CsvFormatOptions | null;
}

export function specOfCustomFormat(format: CustomFormatDefinition): ExportFormatSpec {
  return format.base === 'csv' ? { base: 'csv', custom: format.csv ?? {} } : { base: 'mismo' };
}

/** True when the format writes the fields a caller selects (custom formats define their own). */
export function acceptsFieldSelection(spec: ExportFormatSpec): boolean {
  return spec.base === 'json' || spec.base === 'ndjson' || (spec.base === 'csv' && spec.custom === null);
}

export interface ExportMedia {
  contentType: string;
  extension: string;
}

export function mediaOf(spec: ExportFormatSpec): ExportMedia {
  switch (spec.base) {
    case 'json':
      return { contentType: 'application/json; charset=utf-8', extension: 'json' };
    case 'ndjson':
      return { contentType: 'application/x-ndjson; charset=utf-8', extension: 'ndjson' };
    case 'csv': {
      // RFC 4180's optional `header` parameter tells a reader whether the first line names columns.
      const header = spec.custom !== null && spec.custom.includeHeader === false ? 'absent' : 'present';
      return { contentType: `text/csv; charset=utf-8; header=${header}`, extension: 'csv' };
    }
    case 'mismo':
      return { contentType: 'application/xml; charset=utf-8', extension: 'xml' };
  }
}

/** `attachment; filename="mortgages-2026-11-21.csv"`, dated by the export's start (UTC). */
export function contentDisposition(startedAt: string, media: ExportMedia): string {
  return `attachment; filename="mortgages-${startedAt.slice(0, 10)}.${media.extension}"`;
}

/** Turns an export into text: the opening, then each batch of rows, then the closing. */
export interface ExportWriter {
  begin(): string;
  batch(rows: readonly ExportSource[]): string;
  end(): string;
}

class JsonWriter implements ExportWriter {
  private readonly records: JsonRecords;
  private first = true;
  constructor(fields: readonly FieldDefinition[]) {
    this.records = new JsonRecords(fields);
  }
  begin(): string {
    return '{"data":[';
  }
  batch(rows: readonly ExportSource[]): string {
    let out = '';
    for (const row of rows) {
      out = this.records.append(out + (this.first ? '\n' : ',\n'), row);
      this.first = false;
    }
    return out;
  }
  end(): string {
    return this.first ? ']}\n' : '\n]}\n';
  }
}

class NdjsonWriter implements ExportWriter {
  private readonly records: JsonRecords;
  constructor(fields: readonly FieldDefinition[]) {
    this.records = new JsonRecords(fields);
  }
  begin(): string {
    return '';
  }
  batch(rows: readonly ExportSource[]): string {
    let out = '';
    for (const row of rows) out = this.records.append(out, row) + '\n';
    return out;
  }
  end(): string {
    return '';
  }
}

class MismoWriter implements ExportWriter {
  private readonly createdAt: string;
  constructor(createdAt: string) {
    this.createdAt = createdAt;
  }
  begin(): string {
    return mismoPrologue(this.createdAt);
  }
  batch(rows: readonly ExportSource[]): string {
    let out = '';
    for (const row of rows) out += mismoDeal(row);
    return out;
  }
  end(): string {
    return mismoEpilogue();
  }
}

/**
 * The writer of one export. `fields` is the caller's selection for the formats that accept one
 * (every field, in the record's order, when the caller named none); `startedAt` dates the MISMO
 * message.
 */
export function createExportWriter(spec: ExportFormatSpec, fields: readonly FieldDefinition[] | null, startedAt: string): ExportWriter {
  const selected = fields ?? EXPORT_FIELDS;
  switch (spec.base) {
    case 'json':
      return new JsonWriter(selected);
    case 'ndjson':
      return new NdjsonWriter(selected);
    case 'csv':
      return new CsvWriter(layoutOfCsv(spec, selected));
    case 'mismo':
      return new MismoWriter(startedAt);
  }
}

/** The CSV layout of a CSV export (built-in with the selected fields, or custom), null for other formats. */
export function csvLayoutOf(spec: ExportFormatSpec, fields: readonly FieldDefinition[] | null): CsvLayout | null {
  return spec.base === 'csv' ? layoutOfCsv(spec, fields ?? EXPORT_FIELDS) : null;
}

function layoutOfCsv(spec: { custom: CsvFormatOptions | null }, fields: readonly FieldDefinition[]): CsvLayout {
  return spec.custom === null ? builtInCsvLayout(fields) : customCsvLayout(spec.custom);
}
