/**
 * The Loan Estimate's clock of each TRID application (migration 023). A clock is written once,
 * when the application becomes complete enough, and then only ends: delivered, stopped (withdrawn
 * or declined), or warned overdue, each a conditional update on a running clock so that of two
 * racing changes exactly one wins and only it publishes its event.
 */
import { TOTAL_ROWS, toBounded, type Bounded } from './pagination.ts';
import { forUpdate, type SqlExecutor, type Tx } from './store.ts';
import type { SweepScope } from './rateLocks.ts';

export type DeliveryMethod = 'in_person' | 'mail' | 'email';
export type StopReason = 'withdrawn' | 'declined';

export interface LoanEstimateClockRecord {
  accountId: string;
  mortgageId: string;
  completedAt: string;
  receivedDate: string;
  dueDate: string;
  dueAt: string;
  timeZone: string;
  deliveredAt: string | null;
  deliveryMethod: DeliveryMethod | null;
  stoppedAt: string | null;
  stoppedBecause: StopReason | null;
  overdueNotifiedAt: string | null;
}

interface Row {
  account_id: string;
  mortgage_id: string;
  completed_at: string;
  received_date: string;
  due_date: string;
  due_at: string;
  time_zone: string;
  delivered_at: string | null;
  delivery_method: DeliveryMethod | null;
  stopped_at: string | null;
  stopped_because: StopReason | null;
  overdue_notified_at: string | null;
}

const COLUMNS = `account_id, mortgage_id, completed_at, received_date, due_date, due_at, time_zone, delivered_at, delivery_method,
  stopped_at, stopped_because, overdue_notified_at`;
const RUNNING = 'delivered_at IS NULL AND stopped_at IS NULL';

function toRecord(row: Row): LoanEstimateClockRecord {
  return {
    accountId: row.account_id,
    mortgageId: row.mortgage_id,
    completedAt: row.completed_at,
    receivedDate: row.received_date,
    dueDate: row.due_date,
    dueAt: row.due_at,
    timeZone: row.time_zone,
    deliveredAt: row.delivered_at,
    deliveryMethod: row.delivery_method,
    stoppedAt: row.stopped_at,
    stoppedBecause: row.stopped_because,
    overdueNotifiedAt: row.overdue_notified_at,
  };
}

/** Starts the clock; false when the application already has one (a clock starts once). */
export async function insertLoanEstimateClock(
  tx: Tx,
  clock: Pick<LoanEstimateClockRecord, 'accountId' | 'mortgageId' | 'completedAt' | 'receivedDate' | 'dueDate' | 'dueAt' | 'timeZone'>,
): Promise<boolean> {
  const { changes } = await tx.run(
    `INSERT INTO loan_estimate_clocks (account_id, mortgage_id, completed_at, received_date, due_date, due_at, time_zone)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, mortgage_id) DO NOTHING`,
    [clock.accountId, clock.mortgageId, clock.completedAt, clock.receivedDate, clock.dueDate, clock.dueAt, clock.timeZone],
  );
  return changes === 1;
}

export async function findLoanEstimateClock(db: SqlExecutor, accountId: string, mortgageId: string): Promise<LoanEstimateClockRecord | null> {
  const row = await db.get<Row>(`SELECT ${COLUMNS} FROM loan_estimate_clocks WHERE account_id = ? AND mortgage_id = ?`, [accountId, mortgageId]);
  return row ? toRecord(row) : null;
}

/** Marks the estimate delivered; false when the clock is not running (already delivered or stopped). */
export async function markLoanEstimateDelivered(tx: Tx, accountId: string, mortgageId: string, deliveredAt: string, method: DeliveryMethod): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE loan_estimate_clocks SET delivered_at = ?, delivery_method = ? WHERE account_id = ? AND mortgage_id = ? AND ${RUNNING}`,
    [deliveredAt, method, accountId, mortgageId],
  );
  return changes === 1;
}

/** Stops a running clock (the application was withdrawn or declined); false when none runs. */
export async function stopLoanEstimateClock(tx: Tx, accountId: string, mortgageId: string, at: string, because: StopReason): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE loan_estimate_clocks SET stopped_at = ?, stopped_because = ? WHERE account_id = ? AND mortgage_id = ? AND ${RUNNING}`,
    [at, because, accountId, mortgageId],
  );
  return changes === 1;
}

/** Records that the overdue event was published; false when it already was or the clock ended. */
export async function markLoanEstimateOverdueNotified(tx: Tx, accountId: string, mortgageId: string, at: string): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE loan_estimate_clocks SET overdue_notified_at = ? WHERE account_id = ? AND mortgage_id = ? AND ${RUNNING} AND overdue_notified_at IS NULL AND due_at < ?`,
    [at, accountId, mortgageId, at],
  );
  return changes === 1;
}

function scopeClause(scope: SweepScope): { sql: string; params: string[] } {
  return 'environmentId' in scope
    ? { sql: 'account_id = ?', params: [scope.environmentId] }
    : { sql: 'account_id NOT IN (SELECT environment_id FROM test_clocks)', params: [] };
}

/** Running clocks of the scope past their due instant and not yet warned, earliest first (rows locked, skipping others' on PostgreSQL). */
export async function dueOverdueClocks(tx: Tx, scope: SweepScope, now: string, limit: number): Promise<LoanEstimateClockRecord[]> {
  const where = scopeClause(scope);
  const rows = await tx.all<Row>(
    `SELECT ${COLUMNS} FROM loan_estimate_clocks
      WHERE ${RUNNING} AND overdue_notified_at IS NULL AND due_at < ? AND ${where.sql}
      ORDER BY due_at, mortgage_id LIMIT ?${forUpdate(tx, 'SKIP LOCKED')}`,
    [now, ...where.params, limit],
  );
  return rows.map(toRecord);
}

/** A running clock with its application's applicant, as the desk lists it. */
export type RunningClockRecord = LoanEstimateClockRecord & { applicantName: string };

/** The environment's running clocks, soonest due first, with each applicant's name, and how many run in all (the desk). */
export async function runningClocks(db: SqlExecutor, accountId: string, limit: number): Promise<Bounded<RunningClockRecord>> {
  const rows = await db.all<Row & { applicant_name: string; total_rows: number }>(
    `SELECT ${COLUMNS},
        (SELECT a.applicant_name FROM applications a WHERE a.account_id = loan_estimate_clocks.account_id AND a.id = loan_estimate_clocks.mortgage_id) AS applicant_name,
        ${TOTAL_ROWS}
      FROM loan_estimate_clocks WHERE account_id = ? AND ${RUNNING} ORDER BY due_at, mortgage_id LIMIT ?`,
    [accountId, limit],
  );
  return toBounded(rows, (row) => ({ ...toRecord(row), applicantName: row.applicant_name }));
}
