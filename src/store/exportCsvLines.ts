/**
 * The CSV export on PostgreSQL, written by PostgreSQL: one `COPY (SELECT …) TO STDOUT` whose one
 * column is each record's whole line, byte for byte what CsvWriter (src/domain/exports/csv.ts)
 * writes for the same record, so the service forwards bytes and turns no row into values (see
 * docs/operators/postgresql-performance.md). A test exports awkward records both ways and
 * compares the bytes (test/api/exports/csvParity.test.ts).
 *
 * What each cell mirrors of CsvWriter:
 * - text: NULL as empty; a cell starting like a formula (FORMULA_STARTS) gets a leading `'`;
 * - amounts: integer cents as the shortest exact decimal (`trim_scale` of cents × 0.01:
 *   `350000.5`, `350000`, `-0.05`). Custom amount styles (separators, two decimals) are not
 *   written here: those exports keep the cursor (`exportCsvLines` answers null);
 * - timestamps: UTC, milliseconds truncated as the store reads them, in the layout's date format;
 * - booleans in the layout's words; integers in decimal;
 * - quoting: a line with a text cell holding the delimiter, a quote, CR or LF is written again
 *   with each such cell quoted, quotes doubled (as CsvWriter does: one test per line, not per
 *   cell); a one-column layout writes an empty cell as `""`; lines end with CRLF.
 *
 * COPY takes no bound parameters, so the export's values (account, bounds, filters, currency)
 * are written into the statement as literals, escaped by the driver's `escapeLiteral`.
 */
import pg from 'pg';
import { FORMULA_STARTS, type CsvLayout, type DateFormat } from '../domain/exports/csv.ts';
import type { ExportFieldName, FieldKind } from '../domain/exports/fields.ts';
import { latestVerificationJoin, type ExportQuery } from './exportRecords.ts';
import type { Store } from './store.ts';

const literal = (value: string): string => pg.escapeLiteral(value);

/** Where each field is read from: `a` the application, `v` its latest verification; null for the currency (the query's). */
const SOURCES: Record<ExportFieldName, string | null> = {
  mortgageId: 'a.id',
  status: 'a.status',
  'applicant.name': 'a.applicant_name',
  'applicant.email': 'a.applicant_email',
  'applicant.amount': 'a.amount_cents',
  'applicant.annualIncome': 'a.annual_income_cents',
  'applicant.monthlyDebts': 'a.monthly_debts_cents',
  'applicant.creditScore': 'a.credit_score',
  term: 'a.term_years',
  propertyValue: 'a.property_value_cents',
  currency: null,
  quoteId: 'a.quote_id',
  createdAt: 'a.created_at',
  submittedAt: 'a.submitted_at',
  decidedAt: 'a.decided_at',
  withdrawnAt: 'a.withdrawn_at',
  updatedAt: 'a.updated_at',
  'bankVerification.verified': 'v.verified',
  'bankVerification.accountMask': 'v.account_mask',
  'bankVerification.checkedAt': 'v.checked_at',
};

/** to_char patterns of the date formats (unixSeconds is arithmetic). MS truncates, as the store's reading does. */
const TO_CHAR: Record<Exclude<DateFormat, 'unixSeconds'>, string> = {
  iso8601: 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"',
  date: 'YYYY-MM-DD',
  dateTime: 'YYYY-MM-DD HH24:MI:SS',
};

const BOOLEAN_WORDS = { trueFalse: ['true', 'false'], yesNo: ['yes', 'no'], oneZero: ['1', '0'] } as const;

/** The formula starts as code points: `ascii()` of a text is its first one (0 when empty), an integer to compare. */
const FORMULA_CODES = FORMULA_STARTS.map((c) => c.codePointAt(0)!).join(', ');

/** Where a field is read from for this query: the status through the renames of the caller's version, if any. */
function sourceSql(name: ExportFieldName, query: ExportQuery): string | null {
  const renames = Object.entries(query.statusShownAs ?? {});
  if (name !== 'status' || renames.length === 0) return SOURCES[name];
  return `CASE a.status ${renames.map(([stored, shown]) => `WHEN ${literal(stored)} THEN ${literal(shown)}`).join(' ')} ELSE a.status END`;
}

/** One cell's text before quoting, never NULL. */
function cellSql(name: ExportFieldName, kind: FieldKind, layout: CsvLayout, query: ExportQuery): string {
  const source = sourceSql(name, query);
  const currency = query.currency;
  if (source === null) return literal(FORMULA_STARTS.some((c) => currency.startsWith(c)) ? "'" + currency : currency);
  switch (kind) {
    case 'text':
      return `CASE WHEN ${source} IS NULL THEN '' WHEN ascii(${source}) IN (${FORMULA_CODES}) THEN '''' || ${source} ELSE ${source} END`;
    case 'money':
      return `coalesce(trim_scale(${source} * 0.01)::text, '')`;
    case 'integer':
      return `coalesce(${source}::text, '')`;
    case 'boolean': {
      const [yes, no] = BOOLEAN_WORDS[layout.booleanFormat];
      return `CASE WHEN ${source} IS NULL THEN '' WHEN ${source} = 1 THEN ${literal(yes)} ELSE ${literal(no)} END`;
    }
    case 'timestamp':
      return layout.dateFormat === 'unixSeconds'
        ? `coalesce(floor(extract(epoch FROM ${source}))::bigint::text, '')`
        : `coalesce(to_char(${source} AT TIME ZONE 'UTC', ${literal(TO_CHAR[layout.dateFormat])}), '')`;
  }
}

/** The WHERE clause of the export's applications, values as literals. */
function whereSql(query: ExportQuery, upToId: string): string {
  let sql = `a.account_id = ${literal(query.accountId)} AND a.id <= ${literal(upToId)}`;
  if (query.statuses !== undefined) sql += query.statuses.length === 0 ? ' AND 1 = 0' : ` AND a.status IN (${query.statuses.map(literal).join(', ')})`;
  if (query.createdFrom !== undefined) sql += ` AND a.created_at >= ${literal(query.createdFrom)}::timestamptz`;
  if (query.createdTo !== undefined) sql += ` AND a.created_at < ${literal(query.createdTo)}::timestamptz`;
  return sql;
}

/**
 * The SELECT of the export's lines, oldest first, or null when PostgreSQL does not write this
 * layout (custom amount styles).
 */
function csvLinesSelect(query: ExportQuery, layout: CsvLayout): string | null {
  if (query.upToId === null || layout.amountStyle !== null) return null;
  const delimiter = literal(layout.delimiter);
  const cells = layout.columns.map((column) => cellSql(column.field.name, column.field.kind, layout, query));
  // concat_ws builds a line in one piece (a chain of || copies it once per cell); no cell is NULL, so none is skipped.
  const plain = cells.length === 1 ? `CASE WHEN ${cells[0]} = '' THEN '""' ELSE ${cells[0]} END` : `concat_ws(${delimiter}, ${cells.join(', ')})`;
  // Only text can hold a quote, CR, LF or the delimiter: amounts here are digits, `-` and one `.`, the rest digits, letters and `-.:TZ `.
  const text = layout.columns.flatMap((column) => (column.field.kind === 'text' ? [sourceSql(column.field.name, query) ?? literal(query.currency)] : []));
  const needsQuotes = literal(`["\r\n${layout.delimiter}]`);
  let line = plain;
  if (text.length > 0) {
    const quoted = cells.map((cell, c) => (layout.columns[c]!.field.kind === 'text' ? `CASE WHEN ${cell} ~ ${needsQuotes} THEN '"' || replace(${cell}, '"', '""') || '"' ELSE ${cell} END` : cell));
    // One test per line on the stored values (concat skips NULLs): the `'` a formula start gets is no reason to quote.
    line = `CASE WHEN concat(${text.join(', ')}) ~ ${needsQuotes} THEN concat_ws(${delimiter}, ${quoted.join(', ')}) ELSE ${plain} END`;
  }
  return `SELECT ${line} || E'\\r\\n'
FROM applications a ${latestVerificationJoin(literal(query.accountId), literal(query.upToId))}
WHERE ${whereSql(query, query.upToId)}
ORDER BY a.id`;
}

/**
 * The export's lines as PostgreSQL writes them, a chunk of whole lines at a time with their count;
 * null when this store or this layout takes the row-by-row path (exportBatches and CsvWriter).
 */
export function exportCsvLines(store: Store, query: ExportQuery, layout: CsvLayout): AsyncGenerator<{ bytes: Buffer; rows: number }> | null {
  if (!store.copyText) return null;
  const select = csvLinesSelect(query, layout);
  return select === null ? null : store.copyText(select);
}
