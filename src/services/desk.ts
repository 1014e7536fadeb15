/**
 * The underwriter's desk: the applications found by a search (name, email or id; status;
 * condition state; rate-lock state), the queue of referred applications that need a decision, longest waiting
 * first, the lists of what the lender owes by a time (notices, Loan Estimates: see dueList), and the
 * overview's pipeline (applications by status, decisions per day, webhook delivery success).
 */
import type { AppContext } from '../context.ts';
import { decisionsPerDay, successRate, windowStart, type DayOfDecisions } from '../domain/applications/pipeline.ts';
import { APPLICATION_STATUSES, type ApplicationStatus } from '../domain/applications/stateMachine.ts';
import { referredQueue, searchApplications, type ApplicationRecord, type ApplicationSearch } from '../store/applications.ts';
import type { Bounded, Page, PageRequest } from '../store/pagination.ts';
import { countApplicationsByStatus, countDeliveryAttemptsSince, decisionsSince } from '../store/pipeline.ts';
import type { SqlExecutor } from '../store/store.ts';
import { environmentNow } from './environmentClock.ts';

export type { ApplicationSearch };

export async function findApplications(ctx: AppContext, accountId: string, search: ApplicationSearch, page: PageRequest): Promise<Page<ApplicationRecord>> {
  return ctx.store.read((db) => searchApplications(db, accountId, search, page));
}

/** The referred applications waiting for a person, the longest waiting first. */
export async function decisionQueue(ctx: AppContext, accountId: string, limit: number): Promise<ApplicationRecord[]> {
  return ctx.store.read((db) => referredQueue(db, accountId, limit));
}

/** What the desk lists as owed by a time: the soonest due, each due or overdue, and how many more the bound left off. */
export interface DueList<T> {
  items: Array<T & { overdue: boolean }>;
  more: number;
}

/**
 * Reads a bounded list of what the environment owes by each item's `dueAt` and marks each overdue
 * once that time has passed on the environment's clock (its test clock in test mode, read in the
 * same read), so the desk says late exactly when the API's sweeps do.
 */
export async function dueList<T extends { dueAt: string }>(ctx: AppContext, environmentId: string, list: (db: SqlExecutor) => Promise<Bounded<T>>): Promise<DueList<T>> {
  return ctx.store.read(async (db) => {
    const now = (await environmentNow(ctx, db, environmentId)).getTime();
    const { items, total } = await list(db);
    return { items: items.map((item) => ({ ...item, overdue: Date.parse(item.dueAt) < now })), more: total - items.length };
  });
}

export interface Pipeline {
  byStatus: Array<{ status: ApplicationStatus; count: number }>;
  decisions: DayOfDecisions[];
  deliveries: { succeeded: number; failed: number; successRate: number | null };
}

/** The pipeline over the last `days` UTC days (today included). */
export async function pipeline(ctx: AppContext, accountId: string, days = 30): Promise<Pipeline> {
  const now = ctx.clock.now();
  const from = windowStart(now, days).toISOString();
  return ctx.store.read(async (db) => {
    const counts = await countApplicationsByStatus(db, accountId);
    const decided = await decisionsSince(db, accountId, from);
    const attempts = await countDeliveryAttemptsSince(db, accountId, from);
    return {
      byStatus: APPLICATION_STATUSES.map((status) => ({ status, count: counts.get(status) ?? 0 })),
      decisions: decisionsPerDay(decided, now, days),
      deliveries: { ...attempts, successRate: successRate(attempts.succeeded, attempts.failed) },
    };
  });
}
