/**
 * The rows of a mortgage export, read in keyset-paginated batches (`id > :after ORDER BY id
 * LIMIT :n`). Each batch is its own short `store.read`, so the single-threaded store is never held
 * for a whole export and writes interleave between batches; the export's upper bound (the newest
 * id when it began) keeps records created meanwhile out of it.
 *
 * The latest bank verification of each application is read per batch, in the same `read`: one
 * range scan of `bank_verifications` over the batch's ids (index `(account_id, mortgage_id,
 * checked_at)`), the last row per application by `checked_at` (then id) winning. That costs a
 * fraction of a correlated subquery per row, since most applications have no verification. The
 * latest is picked here rather than by an ORDER BY: the index does not hold `id`, so ordering by
 * it too made SQLite sort every batch's verifications in a temporary B-tree, which took more time
 * than reading them.
 *
 * PostgreSQL reads the latest verification in the export's own query instead (a merge join on a
 * DISTINCT ON of the same index, `latestVerificationJoin`): no second query per batch.
 */
import type { ApplicationStatus, ExportSource } from '../domain/exports/fields.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SqlExecutor, SqlValue, Store } from './store.ts';

export interface ExportQuery {
  accountId: string;
  /** The account's currency, written into every record. */
  currency: string;
  /** Only applications in one of these statuses (none: no application); undefined: any status. */
  statuses?: readonly ApplicationStatus[] | undefined;
  /** Inclusive lower bound on `created_at` (ISO 8601 UTC with ms). */
  createdFrom?: string | undefined;
  /** Exclusive upper bound on `created_at`. */
  createdTo?: string | undefined;
  /** The newest application id when the export began; null when the account had none. */
  upToId: string | null;
  /**
   * Statuses written as others (an older API version's names): applied where the store writes the
   * lines itself (PostgreSQL's COPY); rows read as records are renamed by the caller's renderer.
   */
  statusShownAs?: Readonly<Record<string, string>> | undefined;
}

/**
 * The columns an export reads (an application row without its account and decision), read as
 * arrays (`values`, and the cursor on PostgreSQL) in exactly the SELECT's order below: a row
 * object would be built with 16 keyed stores and dropped at once, costing about as much as
 * reading the row.
 */
const ID = 0;
const STATUS = 1;
const APPLICANT_NAME = 2;
const APPLICANT_EMAIL = 3;
const AMOUNT_CENTS = 4;
const ANNUAL_INCOME_CENTS = 5;
const MONTHLY_DEBTS_CENTS = 6;
const CREDIT_SCORE = 7;
const TERM_YEARS = 8;
const PROPERTY_VALUE_CENTS = 9;
const QUOTE_ID = 10;
const CREATED_AT = 11;
const SUBMITTED_AT = 12;
const DECIDED_AT = 13;
const WITHDRAWN_AT = 14;
const UPDATED_AT = 15;

/** The verification's columns after the application's in the PostgreSQL query (null when there is none). */
const P_VERIFIED = 16;
const P_ACCOUNT_MASK = 17;
const P_CHECKED_AT = 18;

/** The columns of a verification, in the order VERIFICATIONS selects them. */
const V_MORTGAGE_ID = 0;
const V_VERIFIED = 1;
const V_ACCOUNT_MASK = 2;
const V_CHECKED_AT = 3;
const V_ID = 4;

const SELECT = `SELECT id, status, applicant_name, applicant_email, amount_cents, annual_income_cents, monthly_debts_cents,
  credit_score, term_years, property_value_cents, quote_id, created_at, submitted_at, decided_at, withdrawn_at, updated_at
FROM applications
WHERE account_id = ? AND id > ? AND id <= ?`;

/**
 * The latest bank verification of each application up to the export's bound, joined as `v`; its
 * id and time are SQL (placeholders, or literals for COPY). The latest is picked as sql.js picks
 * it (`later`): by the time at the millisecond the store reads, then by id.
 */
export function latestVerificationJoin(accountId: string, upToId: string): string {
  return `LEFT JOIN (SELECT DISTINCT ON (mortgage_id) mortgage_id, verified, account_mask, checked_at FROM bank_verifications
  WHERE account_id = ${accountId} AND mortgage_id <= ${upToId}
  ORDER BY mortgage_id, date_trunc('milliseconds', checked_at) DESC, id DESC) v ON v.mortgage_id = a.id`;
}

/** PostgreSQL: the applications with their latest verification in one query (columns as SELECT's, then P_*). */
const PG_SELECT = `SELECT a.id, a.status, a.applicant_name, a.applicant_email, a.amount_cents, a.annual_income_cents, a.monthly_debts_cents,
  a.credit_score, a.term_years, a.property_value_cents, a.quote_id, a.created_at, a.submitted_at, a.decided_at, a.withdrawn_at, a.updated_at,
  v.verified, v.account_mask, v.checked_at
FROM applications a ${latestVerificationJoin('?', '?')}
WHERE a.account_id = ? AND a.id > ? AND a.id <= ?`;

const VERIFICATIONS = `SELECT mortgage_id, verified, account_mask, checked_at, id FROM bank_verifications
WHERE account_id = ? AND mortgage_id >= ? AND mortgage_id <= ?`;

/** Where the export stops, and the currency its amounts are in; read once when it begins. */
export async function exportBounds(db: SqlExecutor, accountId: string): Promise<{ upToId: string | null; currency: string }> {
  const row = await db.get<{ up_to_id: string | null; currency: string | null }>(
    `SELECT (SELECT MAX(id) FROM applications WHERE account_id = ?) AS up_to_id,
            (SELECT currency FROM accounts WHERE id = ?) AS currency`,
    [accountId, accountId],
  );
  return { upToId: row?.up_to_id ?? null, currency: row?.currency ?? 'USD' };
}

/** The WHERE clause's filters after the id range, and their parameters (the column names are the application's alone). */
function filters(query: ExportQuery): { sql: string; params: SqlValue[] } {
  let sql = '';
  const params: SqlValue[] = [];
  if (query.statuses !== undefined) {
    sql += query.statuses.length === 0 ? ' AND 1 = 0' : ` AND status IN (${query.statuses.map(() => '?').join(', ')})`;
    params.push(...query.statuses);
  }
  if (query.createdFrom !== undefined) {
    sql += ' AND created_at >= ?';
    params.push(query.createdFrom);
  }
  if (query.createdTo !== undefined) {
    sql += ' AND created_at < ?';
    params.push(query.createdTo);
  }
  return { sql, params };
}

/** The next batch of at most `limit` rows after `afterId` (null: from the start), oldest first. */
export async function readExportBatch(db: SqlExecutor, query: ExportQuery, afterId: string | null, limit: number): Promise<ExportSource[]> {
  if (query.upToId === null) return [];
  const where = filters(query);
  const rows = await db.values(`${SELECT}${where.sql} ORDER BY id LIMIT ?`, [query.accountId, afterId ?? '', query.upToId, ...where.params, limit]);
  return withVerifications(db, query, rows);
}

/**
 * The whole export, a batch at a time, oldest first; ends early when the caller stops iterating
 * (a client that went away). The caller owns each batch it is given and may empty it.
 *
 * - sql.js: keyset pages (`id > :after LIMIT :n`), each its own short read, so writes go ahead
 *   between batches of the single-threaded store (one turn of the event loop before each).
 * - PostgreSQL: one query, the latest verifications joined, through a server-side cursor
 *   (DECLARE … FETCH), so memory stays flat over any number of rows; stopping the iteration
 *   closes the cursor and ends the query. (CSV layouts PostgreSQL can write take the COPY path
 *   of ./exportCsvLines.ts instead.)
 */
export async function* exportBatches(store: Store, query: ExportQuery, sizes: { first: number; rest: number }): AsyncGenerator<ExportSource[]> {
  if (query.upToId === null) return;
  if (store.cursor) {
    const where = filters(query);
    const params = [query.accountId, query.upToId, query.accountId, '', query.upToId, ...where.params];
    for await (const rows of store.cursor(`${PG_SELECT}${where.sql} ORDER BY a.id`, params, sizes.rest)) {
      yield toSources(rows, query.currency, joinedVerification);
    }
    return;
  }
  let after: string | null = null;
  let limit = sizes.first;
  for (;;) {
    // Back to the event loop before each batch: the store's promises resolve as microtasks, so
    // without this turn an export would run to its end before the server read another request.
    await nextTurn();
    const rows = await store.read((db) => readExportBatch(db, query, after, limit));
    // Read what the next page needs before handing the batch over: the caller may empty it as it writes.
    const count = rows.length;
    if (count > 0) after = rows[count - 1]!.mortgageId;
    if (count > 0) yield rows;
    if (count < limit) return;
    limit = sizes.rest;
  }
}

/** Whether a verification checked at `checkedAt` (id `id`) comes after one checked at `otherAt` (id `otherId`). */
function later(checkedAt: string, id: string, otherAt: string, otherId: string): boolean {
  return checkedAt > otherAt || (checkedAt === otherAt && id > otherId);
}

type Verification = ExportSource['bankVerification'];

/** The verification read in the row itself (PostgreSQL), or null. */
function joinedVerification(r: SqlValue[]): Verification {
  return r[P_VERIFIED] === null ? null : { verified: r[P_VERIFIED] === 1, accountMask: r[P_ACCOUNT_MASK] as string, checkedAt: r[P_CHECKED_AT] as string };
}

/** The records of `rows`, each with its application's latest bank verification (one range read). */
async function withVerifications(db: SqlExecutor, query: ExportQuery, rows: SqlValue[][]): Promise<ExportSource[]> {
  if (rows.length === 0) return [];
  const latest = new Map<string, SqlValue[]>();
  for (const v of await db.values(VERIFICATIONS, [query.accountId, rows[0]![ID]!, rows[rows.length - 1]![ID]!])) {
    const mortgageId = v[V_MORTGAGE_ID] as string;
    const seen = latest.get(mortgageId);
    // Timestamps are ISO 8601 UTC text of one length on both engines: compared as text, in time order.
    if (seen === undefined || later(v[V_CHECKED_AT] as string, v[V_ID] as string, seen[V_CHECKED_AT] as string, seen[V_ID] as string)) {
      latest.set(mortgageId, v);
    }
  }
  return toSources(rows, query.currency, (_r, id) => {
    const bank = latest.size === 0 ? undefined : latest.get(id);
    return bank === undefined ? null : { verified: bank[V_VERIFIED] === 1, accountMask: bank[V_ACCOUNT_MASK] as string, checkedAt: bank[V_CHECKED_AT] as string };
  });
}

/** Application rows as export records; `verificationOf` gives each one's latest verification. */
function toSources(rows: SqlValue[][], currency: string, verificationOf: (r: SqlValue[], id: string) => Verification): ExportSource[] {
  const out: ExportSource[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const id = r[ID] as string;
    out[i] = {
      mortgageId: id,
      status: r[STATUS] as ApplicationStatus,
      applicantName: r[APPLICANT_NAME] as string,
      applicantEmail: r[APPLICANT_EMAIL] as string | null,
      amountCents: r[AMOUNT_CENTS] as number,
      annualIncomeCents: r[ANNUAL_INCOME_CENTS] as number | null,
      monthlyDebtsCents: r[MONTHLY_DEBTS_CENTS] as number | null,
      creditScore: r[CREDIT_SCORE] as number | null,
      termYears: r[TERM_YEARS] as number,
      propertyValueCents: r[PROPERTY_VALUE_CENTS] as number | null,
      currency,
      quoteId: r[QUOTE_ID] as string | null,
      createdAt: r[CREATED_AT] as string,
      submittedAt: r[SUBMITTED_AT] as string | null,
      decidedAt: r[DECIDED_AT] as string | null,
      withdrawnAt: r[WITHDRAWN_AT] as string | null,
      updatedAt: r[UPDATED_AT] as string,
      bankVerification: verificationOf(r, id),
    };
  }
  return out;
}
