/**
 * Rate locks, stored with the figures they were made with (money integer cents, percentages
 * decimal text), so a lock reads back the same whatever the rate sheet becomes. Every change of
 * status is a conditional update (`WHERE status = 'active'`): of two transactions that race to
 * expire, cancel or extend one lock (two instances' expiry jobs, a job and a cancel), one changes
 * the row and the other changes nothing, and only the one that changed it publishes the event.
 */
import type { components } from '../../generated/api.d.ts';
import type { Page, PageRequest } from './pagination.ts';
import { toPage } from './pagination.ts';
import { cents, major, percentText } from './quotes.ts';
import { forUpdate, type SqlExecutor, type Tx } from './store.ts';

/** A stored lock as the API shows it, less `livemode` (the owner's mode, added by the use case). */
export type RateLockRecord = Omit<components['schemas']['RateLock'], 'livemode'>;
type RateLockStatus = components['schemas']['RateLockStatus'];

interface RateLockRow {
  id: string;
  account_id: string;
  quote_id: string;
  mortgage_id: string | null;
  status: RateLockStatus;
  period_days: number;
  amount_cents: number;
  term_years: number;
  currency: string;
  interest_rate: string;
  rate_adjustment: string;
  monthly_payment_cents: number;
  fees: string;
  extension_fee_per_day_cents: number;
  extended_days: number;
  extension_fees_cents: number;
  locked_at: string;
  expires_at: string;
  ended_at: string | null;
}

/** A lock with its owner: what the expiry job works through across environments. */
export interface OwnedRateLock {
  accountId: string;
  lock: RateLockRecord;
}

interface StoredFee {
  name: string;
  amountCents: number;
  prepaidFinanceCharge: boolean;
}

const COLUMNS = `id, account_id, quote_id, mortgage_id, status, period_days, amount_cents, term_years, currency, interest_rate,
  rate_adjustment, monthly_payment_cents, fees, extension_fee_per_day_cents, extended_days, extension_fees_cents,
  locked_at, expires_at, ended_at`;

function toRecord(row: RateLockRow): RateLockRecord {
  return {
    lockId: row.id,
    quoteId: row.quote_id,
    mortgageId: row.mortgage_id,
    status: row.status,
    periodDays: row.period_days,
    amount: major(row.amount_cents),
    term: row.term_years,
    currency: row.currency,
    interestRate: Number(row.interest_rate),
    rateAdjustment: Number(row.rate_adjustment),
    monthlyPayment: major(row.monthly_payment_cents),
    fees: (JSON.parse(row.fees) as StoredFee[]).map((fee) => ({ name: fee.name, amount: major(fee.amountCents), prepaidFinanceCharge: fee.prepaidFinanceCharge })),
    extensionFeePerDay: major(row.extension_fee_per_day_cents),
    extendedDays: row.extended_days,
    extensionFees: major(row.extension_fees_cents),
    lockedAt: row.locked_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
  };
}

export async function insertRateLock(tx: Tx, accountId: string, lock: RateLockRecord): Promise<void> {
  const fees: StoredFee[] = lock.fees.map((fee) => ({ name: fee.name, amountCents: cents(fee.amount), prepaidFinanceCharge: fee.prepaidFinanceCharge }));
  await tx.run(
    `INSERT INTO rate_locks (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      lock.lockId,
      accountId,
      lock.quoteId,
      lock.mortgageId,
      lock.status,
      lock.periodDays,
      cents(lock.amount),
      lock.term,
      lock.currency,
      percentText(lock.interestRate),
      percentText(lock.rateAdjustment),
      cents(lock.monthlyPayment),
      JSON.stringify(fees),
      cents(lock.extensionFeePerDay),
      lock.extendedDays,
      cents(lock.extensionFees),
      lock.lockedAt,
      lock.expiresAt,
      lock.endedAt,
    ],
  );
}

/** A lock of this account, or undefined: another account's is indistinguishable from none. */
export async function findRateLock(db: SqlExecutor, accountId: string, lockId: string): Promise<RateLockRecord | undefined> {
  const row = await db.get<RateLockRow>(`SELECT ${COLUMNS} FROM rate_locks WHERE account_id = ? AND id = ?`, [accountId, lockId]);
  return row && toRecord(row);
}

/** The lock, held until the transaction ends (PostgreSQL `FOR UPDATE`), for a change that depends on its state. */
export async function findRateLockForUpdate(tx: Tx, accountId: string, lockId: string): Promise<RateLockRecord | undefined> {
  const row = await tx.get<RateLockRow>(`SELECT ${COLUMNS} FROM rate_locks WHERE account_id = ? AND id = ?${forUpdate(tx)}`, [accountId, lockId]);
  return row && toRecord(row);
}

/** The active lock of a quote or of an application, if any. */
export async function findActiveRateLock(
  db: SqlExecutor,
  accountId: string,
  of: { quoteId: string } | { mortgageId: string },
): Promise<RateLockRecord | undefined> {
  const [column, value] = 'quoteId' in of ? ['quote_id', of.quoteId] : ['mortgage_id', of.mortgageId];
  const row = await db.get<RateLockRow>(`SELECT ${COLUMNS} FROM rate_locks WHERE account_id = ? AND ${column} = ? AND status = 'active'`, [accountId, value]);
  return row && toRecord(row);
}

export interface RateLockFilter {
  status?: RateLockStatus | undefined;
  mortgageId?: string | undefined;
}

/** The account's locks, newest first, optionally of one status and of one application. */
export async function listRateLocks(
  db: SqlExecutor,
  accountId: string,
  filter: RateLockFilter,
  page: PageRequest,
): Promise<Page<RateLockRecord>> {
  const after = page.afterId ?? null;
  const status = filter.status ?? null;
  const mortgageId = filter.mortgageId ?? null;
  const rows = await db.all<RateLockRow>(
    `SELECT ${COLUMNS} FROM rate_locks
      WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR status = ?) AND (CAST(? AS TEXT) IS NULL OR mortgage_id = ?)
        AND (CAST(? AS TEXT) IS NULL OR id < ?)
      ORDER BY id DESC LIMIT ?`,
    [accountId, status, status, mortgageId, mortgageId, after, after, page.limit + 1],
  );
  return toPage(rows.map(toRecord), page.limit, (lock) => lock.lockId);
}

/** Moves an active lock's expiry and adds to its extension totals; false when it is no longer active. */
export async function extendActiveRateLock(
  tx: Tx,
  accountId: string,
  lockId: string,
  change: { expiresAt: string; addedDays: number; addedFeeCents: number },
): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE rate_locks SET expires_at = ?, extended_days = extended_days + ?, extension_fees_cents = extension_fees_cents + ?,
        expiring_notified_at = NULL
      WHERE account_id = ? AND id = ? AND status = 'active'`,
    [change.expiresAt, change.addedDays, change.addedFeeCents, accountId, lockId],
  );
  return changes === 1;
}

/** Ends an active lock (cancelled, or expired once `expires_at <= endedAt`); false when another change ended it first. */
export async function endActiveRateLock(tx: Tx, accountId: string, lockId: string, status: 'expired' | 'cancelled', endedAt: string): Promise<boolean> {
  const due = status === 'expired' ? ' AND expires_at <= ?' : '';
  const { changes } = await tx.run(
    `UPDATE rate_locks SET status = ?, ended_at = ? WHERE account_id = ? AND id = ? AND status = 'active'${due}`,
    status === 'expired' ? [status, endedAt, accountId, lockId, endedAt] : [status, endedAt, accountId, lockId],
  );
  return changes === 1;
}

/** Records that `rate_lock.expiring` was sent; false when it already was (or the lock ended). */
export async function markExpiringNotified(tx: Tx, accountId: string, lockId: string, at: string): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE rate_locks SET expiring_notified_at = ? WHERE account_id = ? AND id = ? AND status = 'active' AND expiring_notified_at IS NULL`,
    [at, accountId, lockId],
  );
  return changes === 1;
}

/**
 * Which environments a sweep covers: one environment (a test environment on its own clock), or
 * every environment on real time (those without a row in test_clocks).
 */
export type SweepScope = { environmentId: string } | { realTime: true };

function scopeClause(scope: SweepScope): { sql: string; params: string[] } {
  return 'environmentId' in scope
    ? { sql: 'account_id = ?', params: [scope.environmentId] }
    : { sql: 'account_id NOT IN (SELECT environment_id FROM test_clocks)', params: [] };
}

/**
 * Active locks of the scope whose expiry is at or before `now`, oldest expiry first. On PostgreSQL
 * the rows are locked as read, skipping those another instance is expiring right now.
 */
export async function dueExpiries(tx: Tx, scope: SweepScope, now: string, limit: number): Promise<OwnedRateLock[]> {
  const where = scopeClause(scope);
  const rows = await tx.all<RateLockRow>(
    `SELECT ${COLUMNS} FROM rate_locks WHERE status = 'active' AND expires_at <= ? AND ${where.sql}
      ORDER BY expires_at, id LIMIT ?${forUpdate(tx, 'SKIP LOCKED')}`,
    [now, ...where.params, limit],
  );
  return rows.map((row) => ({ accountId: row.account_id, lock: toRecord(row) }));
}

/** Active locks of the scope not yet warned whose expiry falls at or before `warnUntil` (now + the lead time), still ahead of `now`. */
export async function dueExpiringWarnings(tx: Tx, scope: SweepScope, now: string, warnUntil: string, limit: number): Promise<OwnedRateLock[]> {
  const where = scopeClause(scope);
  const rows = await tx.all<RateLockRow>(
    `SELECT ${COLUMNS} FROM rate_locks
      WHERE status = 'active' AND expiring_notified_at IS NULL AND expires_at > ? AND expires_at <= ? AND ${where.sql}
      ORDER BY expires_at, id LIMIT ?${forUpdate(tx, 'SKIP LOCKED')}`,
    [now, warnUntil, ...where.params, limit],
  );
  return rows.map((row) => ({ accountId: row.account_id, lock: toRecord(row) }));
}

/** What an application shows of its active lock. */
export type ActiveLockSummary = components['schemas']['ApplicationRateLock'];

/** The active lock of each of these applications (at most one each, by the partial unique index), in one query. */
export async function activeLocksOf(db: SqlExecutor, accountId: string, mortgageIds: readonly string[]): Promise<Map<string, ActiveLockSummary>> {
  const found = new Map<string, ActiveLockSummary>();
  if (mortgageIds.length === 0) return found;
  const rows = await db.all<Pick<RateLockRow, 'id' | 'mortgage_id' | 'status' | 'expires_at' | 'period_days' | 'interest_rate'>>(
    `SELECT id, mortgage_id, status, expires_at, period_days, interest_rate FROM rate_locks
      WHERE account_id = ? AND status = 'active' AND mortgage_id IN (${mortgageIds.map(() => '?').join(', ')})`,
    [accountId, ...mortgageIds],
  );
  for (const row of rows) {
    found.set(row.mortgage_id!, { lockId: row.id, status: row.status, expiresAt: row.expires_at, periodDays: row.period_days, interestRate: Number(row.interest_rate) });
  }
  return found;
}
