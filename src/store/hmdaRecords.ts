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
import { openDemographics } from './applicationDemographics.ts';
import type { SecretSealer, SqlExecutor, SqlValue, Store } from './store.ts';

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

/**
 * The application's columns, then its demographics (a LEFT JOIN of application_demographics on
 * its primary key: the register is the one reader of applications that may hold them), sealed as
 * stored and opened row by row (./applicationDemographics.ts).
 */
const SELECT = `SELECT a.id, a.status, a.amount_cents, a.annual_income_cents, a.credit_score, a.term_years, a.property_value_cents,
  a.decision_json, a.submitted_at, a.decided_at, a.withdrawn_at, a.updated_at,
  a.property_address_json, a.loan_purpose, a.occupancy, a.property_type, a.total_units, a.lien_status, a.loan_type,
  d.demographics_json
FROM applications a LEFT JOIN application_demographics d ON d.mortgage_id = a.id
WHERE a.account_id = ? AND a.id > ? AND a.id <= ? AND a.submitted_at IS NOT NULL
  AND ((a.status IN ('approved', 'declined') AND a.decided_at >= ? AND a.decided_at < ?)
    OR (a.status = 'withdrawn' AND a.withdrawn_at >= ? AND a.withdrawn_at < ?)
    OR (a.status = 'clear_to_close' AND a.updated_at >= ? AND a.updated_at < ?))`;

function params(query: HmdaQuery, afterId: string): SqlValue[] {
  const { from, to } = query;
  return [query.accountId, afterId, query.upToId, from, to, from, to, from, to];
}

/** The newest application id of the account: the register stops there, whatever is created meanwhile. */
export async function hmdaUpperBound(db: SqlExecutor, accountId: string): Promise<string | null> {
  const row = await db.get<{ up_to_id: string | null }>('SELECT MAX(id) AS up_to_id FROM applications WHERE account_id = ?', [accountId]);
  return row?.up_to_id ?? null;
}

async function readHmdaBatch(db: SqlExecutor, query: HmdaQuery, afterId: string | null, limit: number): Promise<HmdaSource[]> {
  if (query.upToId === null) return [];
  const rows = await db.values(`${SELECT} ORDER BY a.id LIMIT ?`, [...params(query, afterId ?? ''), limit]);
  return rows.map((r) => toSource(r, db.sealer));
}

/**
 * The year's applications a batch at a time, oldest first; ends early when the caller stops
 * iterating (the cursor, on PostgreSQL, closes with it).
 */
export async function* hmdaBatches(store: Store, query: HmdaQuery, batchSize: number): AsyncGenerator<HmdaSource[]> {
  if (query.upToId === null) return;
  if (store.cursor) {
    // The Store itself does not hand out its sealer; its executors carry it (a read that runs no statement).
    const sealer = await store.read(async (db) => db.sealer);
    for await (const rows of store.cursor(`${SELECT} ORDER BY a.id`, params(query, ''), batchSize)) yield rows.map((r) => toSource(r, sealer));
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

/** A JSON column: text on sql.js and as the PostgreSQL driver hands `json` over, or already parsed. */
function json<T>(value: SqlValue | object): T | null {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function reasonsOf(decision: SqlValue | object): DecisionReasonFacts[] {
  const parsed = json<{ reasons?: DecisionReasonFacts[] }>(decision);
  return (parsed?.reasons ?? []).map((r) => ({ rule: r.rule, result: r.result, effect: r.effect, value: r.value ?? null }));
}

function toSource(r: SqlValue[], sealer: SecretSealer): HmdaSource {
  const mortgageId = r[0] as string;
  const demographics = r[19] as string | null;
  return {
    application: {
      mortgageId,
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
      propertyAddress: json<LarApplication['propertyAddress']>(r[12] as SqlValue),
      loanPurpose: r[13] as LarApplication['loanPurpose'],
      occupancy: r[14] as LarApplication['occupancy'],
      propertyType: r[15] as LarApplication['propertyType'],
      totalUnits: r[16] as number | null,
      lienStatus: r[17] as LarApplication['lienStatus'],
      loanType: r[18] as LarApplication['loanType'],
      demographics: demographics === null ? null : openDemographics({ sealer }, demographics, mortgageId),
    },
    reasons: reasonsOf(r[7] as SqlValue),
  };
}
