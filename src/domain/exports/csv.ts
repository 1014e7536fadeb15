/**
 * CSV export: RFC 4180 (cells with the delimiter, quotes, CR or LF quoted, quotes doubled, CRLF
 * line ends), UTF-8, written by csv-stringify; this module decides only what text goes into each
 * cell.
 *
 * Formula injection (OWASP, "CSV Injection"): a spreadsheet runs a cell that begins with `=`, `+`,
 * `-` or `@` (and, through some programs, a tab, CR or LF) as a formula, so an applicant named
 * `=HYPERLINK(...)` could attack whoever opens the file. Text cells that begin so get a leading
 * `'`, which spreadsheets show rather than run; the full-width forms of those characters too,
 * since some programs normalise them. Numbers (amounts, scores) are ours, never neutralised.
 */
import { stringify } from 'csv-stringify/sync';
import type { components } from '../../../generated/api.d.ts';
import { centsToDecimal, formatCents, type AmountStyle } from './amounts.ts';
import { EXPORT_FIELDS, type ExportSource, type FieldDefinition } from './fields.ts';

export type CsvFormatOptions = components['schemas']['CsvFormatOptions'];
export type DateFormat = NonNullable<CsvFormatOptions['dateFormat']>;
export type BooleanFormat = NonNullable<CsvFormatOptions['booleanFormat']>;

/** True when a spreadsheet could take a text cell beginning with this character for a formula. */
function startsLikeFormula(text: string): boolean {
  switch (text.charCodeAt(0)) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // tab
    case 0x0d: // CR
    case 0x0a: // LF
    case 0xff1d: // full-width =
    case 0xff0b: // full-width +
    case 0xff0d: // full-width -
    case 0xff20: // full-width @
      return true;
    default:
      return false;
  }
}

/** `=SUM(A1)` → `'=SUM(A1)`; any other text unchanged. */
export function neutraliseFormula(text: string): string {
  return startsLikeFormula(text) ? "'" + text : text;
}

/** Everything that decides how records become CSV. */
export interface CsvLayout {
  delimiter: string;
  includeHeader: boolean;
  columns: ReadonlyArray<{ field: FieldDefinition; header: string }>;
  dateFormat: DateFormat;
  /** null: amounts as JSON writes them (`350000.5`). */
  amountStyle: AmountStyle | null;
  booleanFormat: BooleanFormat;
  byteOrderMark: boolean;
}

/** The built-in `csv` format: comma, header row, the selected fields headed by their names. */
export function builtInCsvLayout(fields: readonly FieldDefinition[]): CsvLayout {
  return {
    delimiter: ',',
    includeHeader: true,
    columns: fields.map((field) => ({ field, header: field.name })),
    dateFormat: 'iso8601',
    amountStyle: null,
    booleanFormat: 'trueFalse',
    byteOrderMark: false,
  };
}

export type CompleteCsvOptions = Required<Omit<CsvFormatOptions, 'columns'>> & Pick<CsvFormatOptions, 'columns'>;

/** The options with every default filled in (each column's header too); `columns` stays absent when absent (every field). */
export function completeCsvOptions(options: CsvFormatOptions = {}): CompleteCsvOptions {
  return {
    delimiter: options.delimiter ?? ',',
    includeHeader: options.includeHeader ?? true,
    ...(options.columns ? { columns: options.columns.map((c) => ({ field: c.field, header: c.header ?? c.field })) } : {}),
    dateFormat: options.dateFormat ?? 'iso8601',
    decimalSeparator: options.decimalSeparator ?? '.',
    thousandsSeparator: options.thousandsSeparator ?? '',
    moneyDecimals: options.moneyDecimals ?? 'minimal',
    booleanFormat: options.booleanFormat ?? 'trueFalse',
    byteOrderMark: options.byteOrderMark ?? false,
  };
}

/** Business rules the schema cannot say: the problems found, empty when the options are usable. */
export function csvOptionsProblems(options: CsvFormatOptions): string[] {
  const complete = completeCsvOptions(options);
  const problems: string[] = [];
  if (complete.thousandsSeparator !== '' && complete.thousandsSeparator === complete.decimalSeparator) {
    problems.push(`thousandsSeparator and decimalSeparator are both "${complete.decimalSeparator}": amounts could not be read back`);
  }
  return problems;
}

/** The layout a custom CSV format's options describe. */
export function customCsvLayout(options: CsvFormatOptions): CsvLayout {
  const complete = completeCsvOptions(options);
  const columns = complete.columns
    ? complete.columns.map((column) => {
        const field = EXPORT_FIELDS.find((f) => f.name === column.field);
        if (!field) throw new Error(`unknown export field ${column.field}`);
        return { field, header: column.header ?? field.name };
      })
    : EXPORT_FIELDS.map((field) => ({ field, header: field.name }));
  const plain = complete.decimalSeparator === '.' && complete.thousandsSeparator === '' && complete.moneyDecimals === 'minimal';
  return {
    delimiter: complete.delimiter,
    includeHeader: complete.includeHeader,
    columns,
    dateFormat: complete.dateFormat,
    amountStyle: plain
      ? null
      : { decimalSeparator: complete.decimalSeparator, thousandsSeparator: complete.thousandsSeparator, decimals: complete.moneyDecimals },
    booleanFormat: complete.booleanFormat,
    byteOrderMark: complete.byteOrderMark,
  };
}

const BOOLEAN_TEXT: Record<BooleanFormat, readonly [string, string]> = {
  trueFalse: ['true', 'false'],
  yesNo: ['yes', 'no'],
  oneZero: ['1', '0'],
};

/** An ISO 8601 UTC timestamp (`2026-11-21T18:30:00.000Z`) in a custom format's date format. */
export function formatTimestamp(iso: string, format: DateFormat): string {
  switch (format) {
    case 'iso8601':
      return iso;
    case 'date':
      return iso.slice(0, 10);
    case 'dateTime':
      return iso.slice(0, 10) + ' ' + iso.slice(11, 19);
    case 'unixSeconds':
      return String(Math.floor(Date.parse(iso) / 1000));
  }
}

type Cell = (row: ExportSource) => string;

function cellWriter(field: FieldDefinition, layout: CsvLayout): Cell {
  const get = field.get;
  switch (field.kind) {
    case 'text':
      return (row) => {
        const value = get(row) as string | null;
        return value === null ? '' : neutraliseFormula(value);
      };
    case 'money': {
      const style = layout.amountStyle;
      return (row) => {
        const cents = get(row) as number | null;
        if (cents === null) return '';
        return style === null ? centsToDecimal(cents) : formatCents(cents, style);
      };
    }
    case 'integer':
      return (row) => {
        const value = get(row);
        return value === null ? '' : String(value);
      };
    case 'boolean': {
      const [yes, no] = BOOLEAN_TEXT[layout.booleanFormat];
      return (row) => {
        const value = get(row);
        return value === null ? '' : value ? yes : no;
      };
    }
    case 'timestamp': {
      const format = layout.dateFormat;
      return (row) => {
        const value = get(row) as string | null;
        return value === null ? '' : formatTimestamp(value, format);
      };
    }
  }
}

/** The cells of one row, as text, in the layout's column order. */
export function csvCells(layout: CsvLayout): (row: ExportSource) => string[] {
  const cells = layout.columns.map((column) => cellWriter(column.field, layout));
  return (row) => cells.map((cell) => cell(row));
}

/** csv-stringify's options for a layout: RFC 4180 line ends, and every CR or LF quoted. */
export function csvStringifyOptions(layout: CsvLayout) {
  // csv-stringify quotes only cells holding the configured record delimiter once one is set;
  // quote_record_delimiter makes it quote cells with a lone CR or LF too, as RFC 4180 needs.
  // With one column, an empty cell would be an empty line, which CSV readers skip: the record
  // would vanish. Quoting empty cells ("") keeps it.
  return {
    delimiter: layout.delimiter,
    record_delimiter: 'windows',
    quote_record_delimiter: true,
    quoted_empty: layout.columns.length === 1,
    eof: true,
  } as const;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Writes the header (when the layout has one) and then batches of rows, each batch one string of
 * whole lines.
 *
 * csv-stringify does all the quoting. It costs about half a microsecond per cell, though, which
 * made it most of an export's time; so a row none of whose cells holds the delimiter, a quote, CR
 * or LF (the rows csv-stringify would write without a single quote) is written by joining its
 * cells, and every other row goes through csv-stringify. A property test checks that the output
 * is byte for byte csv-stringify's.
 */
/**
 * Whether a column's cells can hold a character csv-stringify quotes for. Only text can hold a
 * quote, CR or LF; of the rest only an amount can hold the delimiter (a decimal comma in a comma
 * CSV); numbers, booleans and the date formats are made of digits, letters and `-.:TZ `.
 */
function mayNeedQuotes(field: FieldDefinition, layout: CsvLayout): boolean {
  if (field.kind === 'text') return true;
  const style = layout.amountStyle;
  return field.kind === 'money' && style !== null && (style.decimalSeparator === layout.delimiter || style.thousandsSeparator === layout.delimiter);
}

export class CsvWriter {
  private readonly cells: Cell[];
  private readonly checked: boolean[];
  private readonly options: ReturnType<typeof csvStringifyOptions>;
  private readonly layout: CsvLayout;
  /** Matches a cell that csv-stringify would quote. */
  private readonly needsQuotes: RegExp;

  constructor(layout: CsvLayout) {
    this.layout = layout;
    this.cells = layout.columns.map((column) => cellWriter(column.field, layout));
    this.checked = layout.columns.map((column) => mayNeedQuotes(column.field, layout));
    this.needsQuotes = new RegExp(`["\r\n]|${escapeRegExp(layout.delimiter)}`);
    this.options = csvStringifyOptions(layout);
  }

  begin(): string {
    const bom = this.layout.byteOrderMark ? '\uFEFF' : '';
    if (!this.layout.includeHeader) return bom;
    return bom + stringify([this.layout.columns.map((column) => neutraliseFormula(column.header))], this.options);
  }

  batch(rows: readonly ExportSource[]): string {
    const { cells, checked, needsQuotes } = this;
    const delimiter = this.layout.delimiter;
    let out = '';
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      let line = '';
      let plain = true;
      for (let c = 0; c < cells.length; c++) {
        const cell = cells[c]!(row);
        if (checked[c] && needsQuotes.test(cell)) {
          plain = false;
          break;
        }
        line += c === 0 ? cell : delimiter + cell;
      }
      if (plain && line === '' && cells.length === 1) line = '""'; // as quoted_empty: keep the record
      out += plain ? line + '\r\n' : stringify([cells.map((cell) => cell(row))], this.options);
    }
    return out;
  }

  end(): string {
    return '';
  }
}
