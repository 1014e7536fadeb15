import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { EXPORT_FIELDS, type ExportSource } from '../../../../src/domain/exports/fields.ts';
import { contentDisposition, createExportWriter, mediaOf, type ExportFormatSpec, type ExportWriter } from '../../../../src/domain/exports/formats.ts';
import { exportSource } from './arbitraries.ts';
import { parseStrictXml, child } from './strictXml.ts';

/** Writes `rows` in batches of the given sizes, as the stream does. */
function writeInBatches(writer: ExportWriter, rows: ExportSource[], sizes: number[]): string {
  let out = writer.begin();
  let i = 0;
  for (const size of sizes) {
    if (i >= rows.length) break;
    out += writer.batch(rows.slice(i, i + size));
    i += size;
  }
  out += writer.batch(rows.slice(i));
  return out + writer.end();
}

const batches = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 6 });

describe('export writers', () => {
  it('json: one well-formed {"data":[…]} document however the rows are batched', () => {
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 8 }), batches, (rows, sizes) => {
        const parsed = JSON.parse(writeInBatches(createExportWriter({ base: 'json' }, null, ''), rows, sizes)) as { data: Array<{ mortgageId: string }> };
        expect(parsed.data.map((r) => r.mortgageId)).toEqual(rows.map((r) => r.mortgageId));
      }),
    );
    expect(writeInBatches(createExportWriter({ base: 'json' }, null, ''), [], [])).toBe('{"data":[]}\n');
  });

  it('ndjson: one record a line, each line ending in \\n, nothing for no rows', () => {
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 8 }), batches, (rows, sizes) => {
        const text = writeInBatches(createExportWriter({ base: 'ndjson' }, null, ''), rows, sizes);
        const lines = text.split('\n');
        expect(lines.pop()).toBe('');
        expect(lines.map((line) => (JSON.parse(line) as { mortgageId: string }).mortgageId)).toEqual(rows.map((r) => r.mortgageId));
      }),
    );
    expect(writeInBatches(createExportWriter({ base: 'ndjson' }, null, ''), [], [])).toBe('');
  });

  it('csv: the header once, then one row per record, however the rows are batched', () => {
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 8 }), batches, (rows, sizes) => {
        const text = writeInBatches(createExportWriter({ base: 'csv', custom: null }, null, ''), rows, sizes);
        const records = parse(text) as string[][];
        expect(records[0]).toEqual(EXPORT_FIELDS.map((f) => f.name));
        expect(records.slice(1).map((r) => r[0])).toEqual(rows.map((r) => r.mortgageId));
      }),
    );
  });

  it('mismo: one well-formed MESSAGE however the rows are batched, dated by the export', () => {
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 5 }), batches, (rows, sizes) => {
        const message = parseStrictXml(writeInBatches(createExportWriter({ base: 'mismo' }, null, '2026-11-23T12:00:00.000Z'), rows, sizes));
        expect(child(message, 'DEAL_SETS', 'DEAL_SET', 'DEALS').children).toHaveLength(rows.length);
        expect(child(message, 'ABOUT_VERSIONS', 'ABOUT_VERSION', 'CreatedDatetime').text).toBe('2026-11-23T12:00:00.000Z');
      }),
    );
  });
});

describe('mediaOf and contentDisposition', () => {
  it.each([
    [{ base: 'json' }, 'application/json; charset=utf-8', 'json'],
    [{ base: 'ndjson' }, 'application/x-ndjson; charset=utf-8', 'ndjson'],
    [{ base: 'csv', custom: null }, 'text/csv; charset=utf-8; header=present', 'csv'],
    [{ base: 'csv', custom: { includeHeader: false } }, 'text/csv; charset=utf-8; header=absent', 'csv'],
    [{ base: 'mismo' }, 'application/xml; charset=utf-8', 'xml'],
  ] as Array<[ExportFormatSpec, string, string]>)('%o is sent as %s, saved as .%s', (spec, contentType, extension) => {
    const media = mediaOf(spec);
    expect(media).toEqual({ contentType, extension });
    expect(contentDisposition('2026-11-21T23:59:59.999Z', media)).toBe(`attachment; filename="mortgages-2026-11-21.${extension}"`);
  });
});
