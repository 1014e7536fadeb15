/**
 * The export record: what one mortgage application looks like in an export, field by field.
 * Every format (JSON, NDJSON, CSV, custom CSV, MISMO) writes from the same `ExportSource` rows
 * through this one catalogue, so the formats cannot disagree about a field.
 *
 * The interface document leaves the export record open (section 2.5); the spec's `ExportRecord`
 * and `ExportFieldName` define it, and this catalogue must list exactly those names, in that order
 * (a unit test compares them).
 */
import type { components } from '../../../generated/api.d.ts';

export type ExportFieldName = components['schemas']['ExportFieldName'];
import type { ApplicationStatus } from '../applications/stateMachine.ts';

export type { ApplicationStatus };

/** One application as the store reads it for an export: amounts still in integer cents. */
export interface ExportSource {
  mortgageId: string;
  status: ApplicationStatus;
  applicantName: string;
  applicantEmail: string | null;
  amountCents: number;
  annualIncomeCents: number | null;
  monthlyDebtsCents: number | null;
  creditScore: number | null;
  termYears: number;
  propertyValueCents: number | null;
  /** ISO 4217 code of the account's currency. */
  currency: string;
  quoteId: string | null;
  createdAt: string;
  submittedAt: string | null;
  decidedAt: string | null;
  withdrawnAt: string | null;
  updatedAt: string;
  /** The latest bank verification of the application, or null when none was made. */
  bankVerification: { verified: boolean; accountMask: string; checkedAt: string } | null;
}

/**
 * What kind of value a field holds, which decides how each format writes it: `text` is
 * neutralised in CSV, `money` is integer cents written as a decimal in major units, `timestamp`
 * follows a custom format's date format.
 */
export type FieldKind = 'text' | 'money' | 'integer' | 'boolean' | 'timestamp';

export type FieldValue = string | number | boolean | null;

export interface FieldDefinition {
  name: ExportFieldName;
  /** The field's place in EXPORT_FIELDS, which `fieldValue` reads it by. */
  index: number;
  kind: FieldKind;
  /** The object the field sits in (`applicant`), or null for a top-level field. */
  parent: 'applicant' | 'bankVerification' | null;
  /** The key inside the parent (or the record). */
  key: string;
}

/**
 * The raw value of the field at `index` in EXPORT_FIELDS. The one place that says where each
 * field comes from: a writer looping over its columns reads every cell through
 * this one switch instead of calling a different function per column, a call V8 cannot inline
 * and that cost about as much as writing the cell.
 */
export function fieldValue(row: ExportSource, index: number): FieldValue {
  switch (index) {
    case 0:
      return row.mortgageId;
    case 1:
      return row.status;
    case 2:
      return row.applicantName;
    case 3:
      return row.applicantEmail;
    case 4:
      return row.amountCents;
    case 5:
      return row.annualIncomeCents;
    case 6:
      return row.monthlyDebtsCents;
    case 7:
      return row.creditScore;
    case 8:
      return row.termYears;
    case 9:
      return row.propertyValueCents;
    case 10:
      return row.currency;
    case 11:
      return row.quoteId;
    case 12:
      return row.createdAt;
    case 13:
      return row.submittedAt;
    case 14:
      return row.decidedAt;
    case 15:
      return row.withdrawnAt;
    case 16:
      return row.updatedAt;
    case 17:
      return row.bankVerification === null ? null : row.bankVerification.verified;
    case 18:
      return row.bankVerification === null ? null : row.bankVerification.accountMask;
    case 19:
      return row.bankVerification === null ? null : row.bankVerification.checkedAt;
    default:
      throw new RangeError(`no export field at ${index}`);
  }
}

/** The catalogue in record order; each entry's place is the index `fieldValue` reads it by. */
const CATALOGUE: ReadonlyArray<Pick<FieldDefinition, 'name' | 'kind' | 'parent' | 'key'>> = [
  { name: 'mortgageId', kind: 'text', parent: null, key: 'mortgageId' },
  { name: 'status', kind: 'text', parent: null, key: 'status' },
  { name: 'applicant.name', kind: 'text', parent: 'applicant', key: 'name' },
  { name: 'applicant.email', kind: 'text', parent: 'applicant', key: 'email' },
  { name: 'applicant.amount', kind: 'money', parent: 'applicant', key: 'amount' },
  { name: 'applicant.annualIncome', kind: 'money', parent: 'applicant', key: 'annualIncome' },
  { name: 'applicant.monthlyDebts', kind: 'money', parent: 'applicant', key: 'monthlyDebts' },
  { name: 'applicant.creditScore', kind: 'integer', parent: 'applicant', key: 'creditScore' },
  { name: 'term', kind: 'integer', parent: null, key: 'term' },
  { name: 'propertyValue', kind: 'money', parent: null, key: 'propertyValue' },
  { name: 'currency', kind: 'text', parent: null, key: 'currency' },
  { name: 'quoteId', kind: 'text', parent: null, key: 'quoteId' },
  { name: 'createdAt', kind: 'timestamp', parent: null, key: 'createdAt' },
  { name: 'submittedAt', kind: 'timestamp', parent: null, key: 'submittedAt' },
  { name: 'decidedAt', kind: 'timestamp', parent: null, key: 'decidedAt' },
  { name: 'withdrawnAt', kind: 'timestamp', parent: null, key: 'withdrawnAt' },
  { name: 'updatedAt', kind: 'timestamp', parent: null, key: 'updatedAt' },
  { name: 'bankVerification.verified', kind: 'boolean', parent: 'bankVerification', key: 'verified' },
  { name: 'bankVerification.accountMask', kind: 'text', parent: 'bankVerification', key: 'accountMask' },
  { name: 'bankVerification.checkedAt', kind: 'timestamp', parent: 'bankVerification', key: 'checkedAt' },
];

export const EXPORT_FIELDS: readonly FieldDefinition[] = CATALOGUE.map((field, index) => ({ ...field, index }));

export const EXPORT_FIELD_NAMES: readonly ExportFieldName[] = EXPORT_FIELDS.map((field) => field.name);

const BY_NAME = new Map<string, FieldDefinition>(EXPORT_FIELDS.map((field) => [field.name, field]));

export function fieldByName(name: string): FieldDefinition | undefined {
  return BY_NAME.get(name);
}

/** True when the parent object of a field is null in this row (so the whole object is written as null). */
export function parentIsNull(parent: FieldDefinition['parent'], row: ExportSource): boolean {
  return parent === 'bankVerification' && row.bankVerification === null;
}

export type FieldListResult = { ok: true; fields: FieldDefinition[] } | { ok: false; unknown: string[] };

/**
 * Parses the `fields` query parameter: comma-separated flattened names, blanks around names
 * ignored, a repeated name kept once (where it first appears). Names the catalogue does not
 * know, empty ones included, are returned so the caller can name them all in one answer.
 */
export function parseFieldList(value: string): FieldListResult {
  const fields: FieldDefinition[] = [];
  const unknown: string[] = [];
  const seen = new Set<string>();
  for (const raw of value.split(',')) {
    const name = raw.trim();
    const field = BY_NAME.get(name);
    if (!field) {
      if (!unknown.includes(name)) unknown.push(name);
    } else if (!seen.has(name)) {
      seen.add(name);
      fields.push(field);
    }
  }
  return unknown.length > 0 ? { ok: false, unknown } : { ok: true, fields };
}
