/**
 * Mortgage application records. Amounts are INTEGER cents in the table and numbers in major
 * units in the record; the decision is kept as JSON (decision_json), null until one is made.
 */
import { forUpdate, type SqlExecutor } from './store.ts';
import { toPage, type Page, type PageRequest } from './pagination.ts';
import type { ApplicationStatus } from '../domain/applications/stateMachine.ts';
import type { Decision } from '../domain/underwriting/decision.ts';
import { fromCents, fromCentsOrNull, toCents, toCentsOrNull } from '../domain/applications/money.ts';

export interface ApplicationRecord {
  mortgageId: string;
  accountId: string;
  status: ApplicationStatus;
  applicantName: string;
  applicantEmail: string | null;
  /** The loan amount, major units. */
  amount: number;
  annualIncome: number | null;
  monthlyDebts: number | null;
  creditScore: number | null;
  termYears: number;
  propertyValue: number | null;
  quoteId: string | null;
  decision: Decision | null;
  submittedAt: string | null;
  decidedAt: string | null;
  withdrawnAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** An `applications` row as SQL returns it (the export reads the same columns). */
interface ApplicationRow {
  id: string;
  account_id: string;
  status: ApplicationStatus;
  applicant_name: string;
  applicant_email: string | null;
  amount_cents: number;
  annual_income_cents: number | null;
  monthly_debts_cents: number | null;
  credit_score: number | null;
  term_years: number;
  property_value_cents: number | null;
  quote_id: string | null;
  decision_json: string | null;
  submitted_at: string | null;
  decided_at: string | null;
  withdrawn_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  'id, account_id, status, applicant_name, applicant_email, amount_cents, annual_income_cents, monthly_debts_cents, ' +
  'credit_score, term_years, property_value_cents, quote_id, decision_json, submitted_at, decided_at, withdrawn_at, ' +
  'created_at, updated_at';

const toRecord = (row: ApplicationRow): ApplicationRecord => ({
  mortgageId: row.id,
  accountId: row.account_id,
  status: row.status,
  applicantName: row.applicant_name,
  applicantEmail: row.applicant_email,
  amount: fromCents(row.amount_cents),
  annualIncome: fromCentsOrNull(row.annual_income_cents),
  monthlyDebts: fromCentsOrNull(row.monthly_debts_cents),
  creditScore: row.credit_score,
  termYears: row.term_years,
  propertyValue: fromCentsOrNull(row.property_value_cents),
  quoteId: row.quote_id,
  decision: row.decision_json === null ? null : (JSON.parse(row.decision_json) as Decision),
  submittedAt: row.submitted_at,
  decidedAt: row.decided_at,
  withdrawnAt: row.withdrawn_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toParams = (a: ApplicationRecord) => [
  a.status,
  a.applicantName,
  a.applicantEmail,
  toCents(a.amount),
  toCentsOrNull(a.annualIncome),
  toCentsOrNull(a.monthlyDebts),
  a.creditScore,
  a.termYears,
  toCentsOrNull(a.propertyValue),
  a.quoteId,
  a.decision === null ? null : JSON.stringify(a.decision),
  a.submittedAt,
  a.decidedAt,
  a.withdrawnAt,
  a.updatedAt,
];

export async function insertApplication(tx: SqlExecutor, a: ApplicationRecord): Promise<void> {
  await tx.run(
    `INSERT INTO applications (id, account_id, created_at, status, applicant_name, applicant_email, amount_cents,
       annual_income_cents, monthly_debts_cents, credit_score, term_years, property_value_cents, quote_id, decision_json,
       submitted_at, decided_at, withdrawn_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [a.mortgageId, a.accountId, a.createdAt, ...toParams(a)],
  );
}

/**
 * Writes every mutable field of `a`, but only while the row still has status `expectedStatus`:
 * returns false when another request moved the application first.
 */
export async function updateApplication(tx: SqlExecutor, a: ApplicationRecord, expectedStatus: ApplicationStatus): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE applications SET status = ?, applicant_name = ?, applicant_email = ?, amount_cents = ?, annual_income_cents = ?,
       monthly_debts_cents = ?, credit_score = ?, term_years = ?, property_value_cents = ?, quote_id = ?, decision_json = ?,
       submitted_at = ?, decided_at = ?, withdrawn_at = ?, updated_at = ?
     WHERE account_id = ? AND id = ? AND status = ?`,
    [...toParams(a), a.accountId, a.mortgageId, expectedStatus],
  );
  return changes === 1;
}

/** An application of this account, or undefined: another account's is indistinguishable from none. */
export async function findApplication(db: SqlExecutor, accountId: string, mortgageId: string): Promise<ApplicationRecord | undefined> {
  const row = await db.get<ApplicationRow>(`SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND id = ?`, [accountId, mortgageId]);
  return row && toRecord(row);
}

/**
 * The application, locked until the transaction ends (PostgreSQL `FOR UPDATE`): for a write that
 * depends on its status without changing it (a document on a live application), so a concurrent
 * transition waits and then sees the write, instead of slipping in between. sql.js runs one
 * transaction at a time, so a plain read is enough there.
 */
export async function findApplicationForUpdate(tx: SqlExecutor, accountId: string, mortgageId: string): Promise<ApplicationRecord | undefined> {
  const lock = forUpdate(tx);
  const row = await tx.get<ApplicationRow>(`SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND id = ?${lock}`, [accountId, mortgageId]);
  return row && toRecord(row);
}

/** The account's applications, newest first, optionally of one status. */
export async function listApplications(
  db: SqlExecutor,
  accountId: string,
  filter: { status?: ApplicationStatus | undefined },
  page: PageRequest,
): Promise<Page<ApplicationRecord>> {
  const after = page.afterId ?? null;
  const rows = filter.status
    ? await db.all<ApplicationRow>(
        `SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND status = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
        [accountId, filter.status, after, after, page.limit + 1],
      )
    : await db.all<ApplicationRow>(
        `SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
        [accountId, after, after, page.limit + 1],
      );
  return toPage(rows.map(toRecord), page.limit, (a) => a.mortgageId);
}
