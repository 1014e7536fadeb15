/**
 * The applications of a year's HMDA register, read in batches as the mortgage export reads its
 * records (./exportRecords.ts): keyset pages on sql.js, each its own short read; one query through
 * a server-side cursor on PostgreSQL. The SQL selects the applications whose final action is dated
 * in the year (src/domain/hmda/reportable.ts says which and why; the domain checks each row again).
 *
 * Timestamps are ISO 8601 UTC text on sql.js and TIMESTAMPTZ on PostgreSQL: the year's bounds
 * are passed as ISO text, which both compare in time order.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ApplicationStatus } from '../domain/applications/stateMachine.ts';
import type { DecisionReasonFacts } from '../domain/hmda/decision.ts';
import type { LarApplication } from '../domain/hmda/source.ts';
import type { SqlExecutor, SqlValue, Store } from './store.ts';

export interface HmdaQuery {
  accountId: string;
  /** The first instant of the year and of the next (ISO 8601). */
  from: string;
  to: string;
  /** The newest application id when the export began; null when the account had none. */
  upToId: string | null;
}

/** An application as the register reads it, with the decision's reasons for the denial fields. */
export interface HmdaSource {
  application: Omit<LarApplication, 'denialReasons'>;
  reasons: DecisionReasonFacts[];
}

const SELECT = `SELECT id, status, amount_cents, annual_income_cents, credit_score, term_years, property_value_cents,
  decision_json, submitted_at, decided_at, withdrawn_at, updated_at
FROM applications
WHERE account_id = ? AND id > ? AND id <= ? AND submitted_at IS NOT NULL
  AND ((status IN ('approved', 'declined') AND decided_at >= ? AND decided_at < ?)
    OR (status = 'withdrawn' AND withdrawn_at >= ? AND withdrawn_at < ?)
    OR (status = 'clear_to_close' AND updated_at >= ? AND updated_at < ?))`;

function params(query: HmdaQuery, afterId: string): SqlValue[] {
  const { from, to } = query;
  return [query.accountId, afterId, query.upToId, from, to, from, to, from, to];
}

/** The newest application id of the account: the register stops there, whatever is created meanwhile. */
export async function hmdaUpperBound(db: SqlExecutor, accountId: string): Promise<string | null> {
  const row = await db.get<{ up_to_id: string | null }>('SELECT MAX(id) AS up_to_id FROM applications WHERE account_id = ?', [accountId]);
  return row?.up_to_id ?? null;
}

export async function readHmdaBatch(db: SqlExecutor, query: HmdaQuery, afterId: string | null, limit: number): Promise<HmdaSource[]> {
  if (query.upToId === null) return [];
  const rows = await db.values(`${SELECT} ORDER BY id LIMIT ?`, [...params(query, afterId ?? ''), limit]);
  return rows.map(toSource);
}

/**
 * The year's applications a batch at a time, oldest first; ends early when the caller stops
 * iterating (the cursor, on PostgreSQL, closes with it).
 */
export async function* hmdaBatches(store: Store, query: HmdaQuery, batchSize: number): AsyncGenerator<HmdaSource[]> {
  if (query.upToId === null) return;
  if (store.cursor) {
    for await (const rows of store.cursor(`${SELECT} ORDER BY id`, params(query, ''), batchSize)) yield rows.map(toSource);
    return;
  }
  let after: string | null = null;
  for (;;) {
    // Back to the event loop before each batch, so requests interleave with a long register.
    await nextTurn();
    const batch = await store.read((db) => readHmdaBatch(db, query, after, batchSize));
    if (batch.length > 0) {
      after = batch[batch.length - 1]!.application.mortgageId;
      yield batch;
    }
    if (batch.length < batchSize) return;
  }
}

function reasonsOf(decision: SqlValue | object): DecisionReasonFacts[] {
  if (decision === null) return [];
  const parsed = (typeof decision === 'string' ? JSON.parse(decision) : decision) as { reasons?: DecisionReasonFacts[] };
  return (parsed.reasons ?? []).map((r) => ({ rule: r.rule, result: r.result, effect: r.effect, value: r.value ?? null }));
}

function toSource(r: SqlValue[]): HmdaSource {
  return {
    application: {
      mortgageId: r[0] as string,
      status: r[1] as ApplicationStatus,
      amountCents: r[2] as number,
      annualIncomeCents: r[3] as number | null,
      creditScore: r[4] as number | null,
      termYears: r[5] as number,
      propertyValueCents: r[6] as number | null,
      submittedAt: r[8] as string | null,
      decidedAt: r[9] as string | null,
      withdrawnAt: r[10] as string | null,
      updatedAt: r[11] as string,
      propertyAddress: null,
      loanPurpose: null,
      occupancy: null,
      propertyType: null,
      totalUnits: null,
      lienStatus: null,
      loanType: null,
      demographics: null,
    },
    reasons: reasonsOf(r[7] as SqlValue),
  };
}
