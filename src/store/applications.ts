/**
 * Mortgage application records. Amounts are INTEGER cents in the table and numbers in major
 * units in the record; the decision is kept as JSON (decision_json), null until one is made.
 */
import { forUpdate, type SqlExecutor, type SqlValue } from './store.ts';
import { toPage, type Page, type PageRequest } from './pagination.ts';
import type { ApplicationStatus } from '../domain/applications/stateMachine.ts';
import type { Decision } from '../domain/underwriting/decision.ts';
import type { ApplicationData, PropertyAddress } from '../domain/applications/applicationData.ts';
import { fromCents, fromCentsOrNull, toCents, toCentsOrNull } from '../domain/applications/money.ts';
import { conditionsOf, type ConditionRecord } from './conditions.ts';
import { activeLocksOf, type ActiveLockSummary } from './rateLocks.ts';

/** An application as written: every column of its row. */
export interface ApplicationFields extends ApplicationData {
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

/**
 * An application as read: its row, its conditions, oldest first (empty until it is approved), and
 * its active rate lock, if any.
 */
export interface ApplicationRecord extends ApplicationFields {
  conditions: ConditionRecord[];
  rateLock: ActiveLockSummary | null;
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
  property_address_json: string | null;
  loan_purpose: ApplicationData['loanPurpose'];
  occupancy: ApplicationData['occupancy'];
  property_type: ApplicationData['propertyType'];
  total_units: number | null;
  lien_status: ApplicationData['lienStatus'];
  loan_type: ApplicationData['loanType'];
  submitted_at: string | null;
  decided_at: string | null;
  withdrawn_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  'id, account_id, status, applicant_name, applicant_email, amount_cents, annual_income_cents, monthly_debts_cents, ' +
  'credit_score, term_years, property_value_cents, quote_id, decision_json, submitted_at, decided_at, withdrawn_at, ' +
  'created_at, updated_at, property_address_json, loan_purpose, occupancy, property_type, total_units, lien_status, loan_type';

const toFields = (row: ApplicationRow): ApplicationFields => ({
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
  propertyAddress: row.property_address_json === null ? null : (JSON.parse(row.property_address_json) as PropertyAddress),
  loanPurpose: row.loan_purpose,
  occupancy: row.occupancy,
  propertyType: row.property_type,
  totalUnits: row.total_units,
  lienStatus: row.lien_status,
  loanType: row.loan_type,
});

const toParams = (a: ApplicationFields) => [
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
  a.propertyAddress === null ? null : JSON.stringify(a.propertyAddress),
  a.loanPurpose,
  a.occupancy,
  a.propertyType,
  a.totalUnits,
  a.lienStatus,
  a.loanType,
];

export async function insertApplication(tx: SqlExecutor, a: ApplicationFields): Promise<void> {
  await tx.run(
    `INSERT INTO applications (id, account_id, created_at, status, applicant_name, applicant_email, amount_cents,
       annual_income_cents, monthly_debts_cents, credit_score, term_years, property_value_cents, quote_id, decision_json,
       submitted_at, decided_at, withdrawn_at, updated_at, property_address_json, loan_purpose, occupancy, property_type,
       total_units, lien_status, loan_type)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [a.mortgageId, a.accountId, a.createdAt, ...toParams(a)],
  );
}

/**
 * Writes every mutable field of `a`, but only while the row still has status `expectedStatus`:
 * returns false when another request moved the application first.
 */
export async function updateApplication(tx: SqlExecutor, a: ApplicationFields, expectedStatus: ApplicationStatus): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE applications SET status = ?, applicant_name = ?, applicant_email = ?, amount_cents = ?, annual_income_cents = ?,
       monthly_debts_cents = ?, credit_score = ?, term_years = ?, property_value_cents = ?, quote_id = ?, decision_json = ?,
       submitted_at = ?, decided_at = ?, withdrawn_at = ?, updated_at = ?, property_address_json = ?, loan_purpose = ?,
       occupancy = ?, property_type = ?, total_units = ?, lien_status = ?, loan_type = ?
     WHERE account_id = ? AND id = ? AND status = ?`,
    [...toParams(a), a.accountId, a.mortgageId, expectedStatus],
  );
  return changes === 1;
}

/** An application of this account, or undefined: another account's is indistinguishable from none. */
export async function findApplication(db: SqlExecutor, accountId: string, mortgageId: string): Promise<ApplicationRecord | undefined> {
  const row = await db.get<ApplicationRow>(`SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND id = ?`, [accountId, mortgageId]);
  return row && (await withDetails(db, row.account_id, [toFields(row)]))[0];
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
  return row && (await withDetails(tx, row.account_id, [toFields(row)]))[0];
}

/** The account's applications, newest first, optionally of some statuses (none: an empty page). */
export async function listApplications(
  db: SqlExecutor,
  accountId: string,
  filter: { statuses?: readonly ApplicationStatus[] | undefined },
  page: PageRequest,
): Promise<Page<ApplicationRecord>> {
  const after = page.afterId ?? null;
  const statuses = filter.statuses;
  if (statuses && statuses.length === 0) return toPage<ApplicationRecord>([], page.limit, (a) => a.mortgageId);
  const rows = statuses
    ? await db.all<ApplicationRow>(
        `SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND status IN (${statuses.map(() => '?').join(', ')}) AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
        [accountId, ...statuses, after, after, page.limit + 1],
      )
    : await db.all<ApplicationRow>(
        `SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
        [accountId, after, after, page.limit + 1],
      );
  return toPage(await withDetails(db, accountId, rows.map(toFields)), page.limit, (a) => a.mortgageId);
}

/** The rows with their conditions and active locks: one query each for the whole page, not one per row. */
async function withDetails(db: SqlExecutor, accountId: string, rows: ApplicationFields[]): Promise<ApplicationRecord[]> {
  // Only an application that was approved has conditions: the others are left out of that query.
  const conditions = await conditionsOf(db, accountId, rows.filter((a) => a.status === 'approved' || a.status === 'clear_to_close').map((a) => a.mortgageId));
  const locks = await activeLocksOf(db, accountId, rows.map((a) => a.mortgageId));
  return rows.map((a) => ({ ...a, conditions: conditions.get(a.mortgageId) ?? [], rateLock: locks.get(a.mortgageId) ?? null }));
}

/**
 * Moves an approved application to clear_to_close, only while it is still approved: of two
 * transactions that each cleared the last closing condition, one moves it (true) and the other
 * finds it moved (false), so the move and its event happen once.
 */
export async function markClearToClose(tx: SqlExecutor, accountId: string, mortgageId: string, at: string): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE applications SET status = 'clear_to_close', updated_at = ? WHERE account_id = ? AND id = ? AND status = 'approved'`,
    [at, accountId, mortgageId],
  );
  return changes === 1;
}

/** The underwriter's desk's search: each field narrows; absent fields do not. */
export interface ApplicationSearch {
  /** Part of the applicant's name or email, or of the application's id (case-insensitive). */
  text?: string | undefined;
  status?: ApplicationStatus | undefined;
  /** `open`: some condition is still open; `cleared`: it has conditions and none is open. */
  conditions?: 'open' | 'cleared' | undefined;
  /** `active`: it has an active rate lock; `none`: it has none (never locked, or the lock ended). */
  lock?: 'active' | 'none' | undefined;
}

/** `text` as a LIKE pattern that finds it anywhere, its own `%`, `_` and `\` taken literally. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The account's applications matching the search, newest first, in pages. */
export async function searchApplications(db: SqlExecutor, accountId: string, search: ApplicationSearch, page: PageRequest): Promise<Page<ApplicationRecord>> {
  const where = ['account_id = ?'];
  const params: SqlValue[] = [accountId];
  if (search.text) {
    const pattern = containsPattern(search.text);
    where.push("(LOWER(applicant_name) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(applicant_email, '')) LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')");
    params.push(pattern, pattern, pattern);
  }
  if (search.status) {
    where.push('status = ?');
    params.push(search.status);
  }
  if (search.conditions === 'open') {
    where.push("EXISTS (SELECT 1 FROM conditions c WHERE c.account_id = applications.account_id AND c.mortgage_id = applications.id AND c.status = 'open')");
  }
  if (search.conditions === 'cleared') {
    where.push(
      "EXISTS (SELECT 1 FROM conditions c WHERE c.account_id = applications.account_id AND c.mortgage_id = applications.id) AND NOT EXISTS " +
        "(SELECT 1 FROM conditions c WHERE c.account_id = applications.account_id AND c.mortgage_id = applications.id AND c.status = 'open')",
    );
  }
  if (search.lock) {
    const negation = search.lock === 'none' ? 'NOT ' : '';
    where.push(`${negation}EXISTS (SELECT 1 FROM rate_locks l WHERE l.account_id = applications.account_id AND l.mortgage_id = applications.id AND l.status = 'active')`);
  }
  if (page.afterId) {
    where.push('id < ?');
    params.push(page.afterId);
  }
  const rows = await db.all<ApplicationRow>(`SELECT ${COLUMNS} FROM applications WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, [...params, page.limit + 1]);
  return toPage(await withDetails(db, accountId, rows.map(toFields)), page.limit, (a) => a.mortgageId);
}

/** The referred applications waiting for a person, the longest waiting first (by when they were referred). */
export async function referredQueue(db: SqlExecutor, accountId: string, limit: number): Promise<ApplicationRecord[]> {
  const rows = await db.all<ApplicationRow>(
    `SELECT ${COLUMNS} FROM applications WHERE account_id = ? AND status = 'referred' ORDER BY decided_at, id LIMIT ?`,
    [accountId, limit],
  );
  return withDetails(db, accountId, rows.map(toFields));
}
