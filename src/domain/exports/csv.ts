/**
 * CSV export: RFC 4180 (cells with the delimiter, quotes, CR or LF quoted, quotes doubled, CRLF
 * line ends), UTF-8, byte for byte as csv-stringify writes it (csv-stringify writes the header;
 * rows are written by CsvWriter itself, and a property test holds them to csv-stringify's).
 *
 * Formula injection (OWASP, "CSV Injection"): a spreadsheet runs a cell that begins with `=`, `+`,
 * `-` or `@` (and, through some programs, a tab, CR or LF) as a formula, so an applicant named
 * `=HYPERLINK(...)` could attack whoever opens the file. Text cells that begin so get a leading
 * `'`, which spreadsheets show rather than run; the full-width forms of those characters too,
 * since some programs normalise them. Numbers (amounts, scores) are ours, never neutralised.
 */
import { stringify } from 'csv-stringify/sync';
import type { components } from '../../../generated/api.d.ts';
import { centsToDecimal, formatCents, integerDigits, type AmountStyle } from './amounts.ts';
import { EXPORT_FIELDS, fieldValue, type ExportSource, type FieldDefinition, type FieldKind } from './fields.ts';

export type CsvFormatOptions = components['schemas']['CsvFormatOptions'];
export type DateFormat = NonNullable<CsvFormatOptions['dateFormat']>;
type BooleanFormat = NonNullable<CsvFormatOptions['booleanFormat']>;

/**
 * The characters that make a text cell look like a formula, as `startsLikeFormula` tests them
 * (PostgreSQL's CSV export writes the same test in SQL from this list).
 */
export const FORMULA_STARTS: readonly string[] = ['=', '+', '-', '@', '\t', '\r', '\n', '\uff1d', '\uff0b', '\uff0d', '\uff20'];

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
      return integerDigits(Math.floor(Date.parse(iso) / 1000));
  }
}

/** The kinds as small integers, for the switch that writes a cell. */
const TEXT = 0;
const MONEY = 1;
const INTEGER = 2;
const BOOLEAN = 3;
const TIMESTAMP = 4;
const KIND_CODES: Record<FieldKind, number> = { text: TEXT, money: MONEY, integer: INTEGER, boolean: BOOLEAN, timestamp: TIMESTAMP };

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

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Writes the header (when the layout has one) and then batches of rows, each batch one string of
 * whole lines, byte for byte what csv-stringify writes for the same cells (a property test
 * compares them): RFC 4180, a cell quoted when it holds the delimiter, a quote, CR or LF, quotes
 * doubled inside.
 *
 * Everything a column needs is decided once, in the constructor, so a row is one loop over the
 * columns with a switch on the kind: no call through a per-column function (V8 cannot inline
 * those, and they cost about as much as writing the cell), and no csv-stringify call per row that
 * needs quoting (it normalises its options on every call: about 9 us a row). A row is checked only
 * in the columns that can need quoting; when one does, the row is written again with every cell
 * checked, as csv-stringify would.
 */
export class CsvWriter {
  private readonly layout: CsvLayout;
  /** Per column: the field's index in the catalogue, its kind's code, whether it can need quoting. */
  private readonly fields: readonly number[];
  private readonly kinds: readonly number[];
  private readonly checked: readonly boolean[];
  /** Matches a cell that needs quoting. */
  private readonly needsQuotes: RegExp;
  private readonly yes: string;
  private readonly no: string;

  constructor(layout: CsvLayout) {
    this.layout = layout;
    this.fields = layout.columns.map((column) => column.field.index);
    this.kinds = layout.columns.map((column) => KIND_CODES[column.field.kind]);
    this.checked = layout.columns.map((column) => mayNeedQuotes(column.field, layout));
    this.needsQuotes = new RegExp(`["\r\n]|${escapeRegExp(layout.delimiter)}`);
    [this.yes, this.no] = BOOLEAN_TEXT[layout.booleanFormat];
  }

  begin(): string {
    const bom = this.layout.byteOrderMark ? '\uFEFF' : '';
    if (!this.layout.includeHeader) return bom;
    return bom + stringify([this.layout.columns.map((column) => neutraliseFormula(column.header))], csvStringifyOptions(this.layout));
  }

  /** The text of column `c`'s cell in `row`, before quoting. */
  cell(row: ExportSource, c: number): string {
    const value = fieldValue(row, this.fields[c]!);
    if (value === null) return '';
    switch (this.kinds[c]) {
      case TEXT:
        return neutraliseFormula(value as string);
      case MONEY: {
        const style = this.layout.amountStyle;
        return style === null ? centsToDecimal(value as number) : formatCents(value as number, style);
      }
      case BOOLEAN:
        return value ? this.yes : this.no;
      case TIMESTAMP:
        return formatTimestamp(value as string, this.layout.dateFormat);
      default:
        return String(value);
    }
  }

  batch(rows: readonly ExportSource[]): string {
    const { checked, needsQuotes } = this;
    const delimiter = this.layout.delimiter;
    const columns = checked.length;
    let out = '';
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const lineStart = out;
      let quoted = false;
      for (let c = 0; c < columns; c++) {
        const cell = this.cell(row, c);
        if (checked[c] && needsQuotes.test(cell)) {
          quoted = true;
          break;
        }
        // With one column an empty cell would be an empty line, which CSV readers skip: "" keeps the record.
        out += c === 0 ? (columns === 1 && cell === '' ? '""' : cell) : delimiter + cell;
      }
      out = quoted ? lineStart + this.quotedLine(row) : out + '\r\n';
    }
    return out;
  }

  /** A line whose cells are each quoted when they need it (a row that has a cell needing it: rare). */
  private quotedLine(row: ExportSource): string {
    const columns = this.checked.length;
    let line = '';
    for (let c = 0; c < columns; c++) {
      const cell = this.cell(row, c);
      const written = this.needsQuotes.test(cell) ? '"' + cell.replaceAll('"', '""') + '"' : cell;
      line += c === 0 ? written : this.layout.delimiter + written;
    }
    return line + '\r\n';
  }

  end(): string {
    return '';
  }
}

/** The cells of one row, as text, in the layout's column order. */
export function csvCells(layout: CsvLayout): (row: ExportSource) => string[] {
  const writer = new CsvWriter(layout);
  return (row) => layout.columns.map((_, c) => writer.cell(row, c));
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
