/** What the dashboard's overview counts: applications by status, decisions by time, webhook delivery attempts by outcome. */
import type { ApplicationStatus } from '../domain/applications/stateMachine.ts';
import type { SqlExecutor } from './store.ts';

/** How many applications of the account are in each status (statuses with none are absent). */
export async function countApplicationsByStatus(db: SqlExecutor, accountId: string): Promise<Map<ApplicationStatus, number>> {
  const rows = await db.all<{ status: ApplicationStatus; n: number }>(
    'SELECT status, COUNT(*) AS n FROM applications WHERE account_id = ? GROUP BY status',
    [accountId],
  );
  return new Map(rows.map((row) => [row.status, Number(row.n)]));
}

/**
 * The decisions made since `from`: each decided application's latest decision time and the
 * outcome it led to (its decision's outcome: a referral later approved counts as the approval).
 */
export async function decisionsSince(db: SqlExecutor, accountId: string, from: string): Promise<Array<{ decidedAt: string; outcome: string }>> {
  const rows = await db.all<{ decided_at: string; decision_json: string }>(
    'SELECT decided_at, decision_json FROM applications WHERE account_id = ? AND decided_at >= ? AND decision_json IS NOT NULL',
    [accountId, from],
  );
  return rows.map((row) => ({
    decidedAt: row.decided_at,
    outcome: (JSON.parse(row.decision_json) as { outcome: string }).outcome,
  }));
}

/** Webhook delivery attempts of the account since `from`, by outcome. */
export async function countDeliveryAttemptsSince(db: SqlExecutor, accountId: string, from: string): Promise<{ succeeded: number; failed: number }> {
  const rows = await db.all<{ outcome: 'succeeded' | 'failed'; n: number }>(
    'SELECT outcome, COUNT(*) AS n FROM webhook_delivery_attempts WHERE account_id = ? AND attempted_at >= ? GROUP BY outcome',
    [accountId, from],
  );
  const count = (outcome: string) => Number(rows.find((row) => row.outcome === outcome)?.n ?? 0);
  return { succeeded: count('succeeded'), failed: count('failed') };
}
