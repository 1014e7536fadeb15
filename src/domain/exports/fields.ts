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
  kind: FieldKind;
  /** The object the field sits in (`applicant`), or null for a top-level field. */
  parent: 'applicant' | 'bankVerification' | null;
  /** The key inside the parent (or the record). */
  key: string;
  /** The raw value: cents for money, ISO 8601 text for timestamps. */
  get(row: ExportSource): FieldValue;
}

const bank = (row: ExportSource) => row.bankVerification;

export const EXPORT_FIELDS: readonly FieldDefinition[] = [
  { name: 'mortgageId', kind: 'text', parent: null, key: 'mortgageId', get: (r) => r.mortgageId },
  { name: 'status', kind: 'text', parent: null, key: 'status', get: (r) => r.status },
  { name: 'applicant.name', kind: 'text', parent: 'applicant', key: 'name', get: (r) => r.applicantName },
  { name: 'applicant.email', kind: 'text', parent: 'applicant', key: 'email', get: (r) => r.applicantEmail },
  { name: 'applicant.amount', kind: 'money', parent: 'applicant', key: 'amount', get: (r) => r.amountCents },
  { name: 'applicant.annualIncome', kind: 'money', parent: 'applicant', key: 'annualIncome', get: (r) => r.annualIncomeCents },
  { name: 'applicant.monthlyDebts', kind: 'money', parent: 'applicant', key: 'monthlyDebts', get: (r) => r.monthlyDebtsCents },
  { name: 'applicant.creditScore', kind: 'integer', parent: 'applicant', key: 'creditScore', get: (r) => r.creditScore },
  { name: 'term', kind: 'integer', parent: null, key: 'term', get: (r) => r.termYears },
  { name: 'propertyValue', kind: 'money', parent: null, key: 'propertyValue', get: (r) => r.propertyValueCents },
  { name: 'currency', kind: 'text', parent: null, key: 'currency', get: (r) => r.currency },
  { name: 'quoteId', kind: 'text', parent: null, key: 'quoteId', get: (r) => r.quoteId },
  { name: 'createdAt', kind: 'timestamp', parent: null, key: 'createdAt', get: (r) => r.createdAt },
  { name: 'submittedAt', kind: 'timestamp', parent: null, key: 'submittedAt', get: (r) => r.submittedAt },
  { name: 'decidedAt', kind: 'timestamp', parent: null, key: 'decidedAt', get: (r) => r.decidedAt },
  { name: 'withdrawnAt', kind: 'timestamp', parent: null, key: 'withdrawnAt', get: (r) => r.withdrawnAt },
  { name: 'updatedAt', kind: 'timestamp', parent: null, key: 'updatedAt', get: (r) => r.updatedAt },
  { name: 'bankVerification.verified', kind: 'boolean', parent: 'bankVerification', key: 'verified', get: (r) => bank(r)?.verified ?? null },
  { name: 'bankVerification.accountMask', kind: 'text', parent: 'bankVerification', key: 'accountMask', get: (r) => bank(r)?.accountMask ?? null },
  { name: 'bankVerification.checkedAt', kind: 'timestamp', parent: 'bankVerification', key: 'checkedAt', get: (r) => bank(r)?.checkedAt ?? null },
];

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
