/**
 * The edits of a whole HMDA file: the transmittal sheet's validity edits (V600–V607, V717,
 * V719), every LAR row's (loanEdits.ts, demographicEdits.ts, decisionEdits.ts,
 * conditionalEdits.ts), and the
 * syntactical edits that compare rows (S300–S306). `FileChecker` takes the file a row at a time
 * and keeps only counters and the transmittal sheet, so a file of any length is checked in
 * bounded memory; S305 and S306 (duplicates) compare each row with the others and need the whole
 * file, so `duplicateEdits` runs them over a file the caller holds (a lender's edited file);
 * the service's own export cannot fail them (one row per application, docs/partners/hmda-lar.md).
 */
import { CONDITIONAL_EDITS } from './conditionalEdits.ts';
import { DECISION_EDITS } from './decisionEdits.ts';
import { DEMOGRAPHIC_EDITS } from './demographicEdits.ts';
import { blank, isWhole, type LarEdit, type LarEditContext } from './editKit.ts';
import { EDIT_MESSAGES, type EditCode } from './editMessages.ts';
import { LAR_FIELD_COUNT, TS_FIELD_COUNT, larRecordOf, tsRecordOf, type LarRecord, type TsRecord } from './layout.ts';
import { LOAN_EDITS } from './loanEdits.ts';
import { STATE_FIPS } from './codes.ts';

export interface EditFailure {
  edit: EditCode;
  message: string;
}

function failure(edit: EditCode): EditFailure {
  return { edit, message: EDIT_MESSAGES[edit] };
}

/** Every LAR edit the service implements, in edit-code order. */
export const LAR_EDITS: readonly LarEdit[] = [...LOAN_EDITS, ...DEMOGRAPHIC_EDITS, ...DECISION_EDITS, ...CONDITIONAL_EDITS].sort((a, b) =>
  a.code < b.code ? -1 : a.code > b.code ? 1 : 0,
);

interface TsEdit {
  code: EditCode;
  fails(ts: TsRecord): boolean;
}

export const TS_EDITS: readonly TsEdit[] = [
  { code: 'V600', fails: (ts) => !/^[A-Za-z0-9]{20}$/.test(ts.lei) },
  { code: 'V601', fails: (ts) => [ts.institutionName, ts.contactName, ts.contactEmail, ts.contactStreet, ts.contactCity].some(blank) },
  { code: 'V602', fails: (ts) => ts.calendarQuarter !== '4' },
  { code: 'V603', fails: (ts) => !/^[0-9]{3}-[0-9]{3}-[0-9]{4}$/.test(ts.contactPhone) },
  { code: 'V604', fails: (ts) => !(ts.contactState in STATE_FIPS) },
  { code: 'V605', fails: (ts) => !/^[0-9]{5}(-[0-9]{4})?$/.test(ts.contactZip) },
  { code: 'V606', fails: (ts) => !(isWhole(ts.totalLines) && Number(ts.totalLines) > 0) },
  { code: 'V607', fails: (ts) => !/^[0-9]{2}-[0-9]{7}$/.test(ts.taxId) },
  { code: 'V717', fails: (ts) => !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(ts.contactEmail) },
  { code: 'V719-1', fails: (ts) => !blank(ts.institutionName) && !/[A-Za-z]/.test(ts.institutionName) },
  { code: 'V719-2', fails: (ts) => !blank(ts.lei) && ts.institutionName.toUpperCase() === ts.lei.toUpperCase() },
];

export function transmittalFailures(fields: readonly string[], filingYear: number): EditFailure[] {
  const found: EditFailure[] = [];
  if (fields[0] !== '1') found.push(failure('S300'));
  const ts = tsRecordOf(fields);
  if (ts.calendarYear !== String(filingYear)) found.push(failure('S302'));
  for (const edit of TS_EDITS) if (edit.fails(ts)) found.push(failure(edit.code));
  return found;
}

export function larFailures(record: LarRecord, ctx: LarEditContext): EditFailure[] {
  const found: EditFailure[] = [];
  for (const edit of LAR_EDITS) if (edit.fails(record, ctx)) found.push(failure(edit.code));
  return found;
}

/**
 * Checks a file row by row. `transmittal` first, then `lar` for each row, then `finish`; each
 * returns the failures it found. A row with the wrong number of fields fails S300 as the HMDA
 * platform's parser would refuse it (it cannot be read field by field).
 */
export class FileChecker {
  private lei = '';
  private declared = '';
  private rows = 0;
  private readonly filingYear: number;

  constructor(filingYear: number) {
    this.filingYear = filingYear;
  }

  transmittal(fields: readonly string[]): EditFailure[] {
    if (fields.length !== TS_FIELD_COUNT) return [failure('S300')];
    const ts = tsRecordOf(fields);
    this.lei = ts.lei.toUpperCase();
    this.declared = ts.totalLines;
    return transmittalFailures(fields, this.filingYear);
  }

  lar(fields: readonly string[]): EditFailure[] {
    this.rows++;
    if (fields.length !== LAR_FIELD_COUNT || fields[0] !== '2') return [failure('S300')];
    const record = larRecordOf(fields);
    const found: EditFailure[] = [];
    if (record.lei.toUpperCase() !== this.lei) found.push(failure('S301'));
    found.push(...larFailures(record, { year: this.filingYear }));
    return found;
  }

  /** The failures of the file as a whole (S304: the transmittal sheet's count is the rows'). */
  finish(): EditFailure[] {
    return this.declared === String(this.rows) ? [] : [failure('S304')];
  }
}

/**
 * S305 (a row repeated exactly) and S306 (a ULI repeated where one of its rows is an origination) over a whole file's
 * LAR rows: the indexes (0-based among the LAR rows) of the rows that repeat an earlier one.
 */
export function duplicateEdits(rows: readonly (readonly string[])[]): { row: number; failure: EditFailure }[] {
  const seenRows = new Set<string>();
  /** Each ULI seen, and whether a row with it was an origination. */
  const ulis = new Map<string, boolean>();
  const found: { row: number; failure: EditFailure }[] = [];
  rows.forEach((fields, row) => {
    const line = fields.join('|');
    if (seenRows.has(line)) found.push({ row, failure: failure('S305') });
    seenRows.add(line);
    const record = larRecordOf(fields);
    const uli = record.uli.toUpperCase();
    const originated = record.actionTaken === '1';
    const earlier = ulis.get(uli);
    if (earlier !== undefined && (earlier || originated)) found.push({ row, failure: failure('S306') });
    ulis.set(uli, (earlier ?? false) || originated);
  });
  return found;
}
