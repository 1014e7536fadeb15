/**
 * The events feed: every event of the account with exactly the payload its webhooks carry, kept
 * for EVENT_RETENTION_DAYS, and the background work that deletes what is older.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { fail } from '../errors.ts';
import { createdRangeOrRefuse } from './createdRange.ts';
import type { WebhookEventType } from '../events/catalog.ts';
import { findEvent, listEvents as listEventRecords, pruneEventsBefore, type EventRecord } from '../store/events.ts';
import { pendingDeliveryBacklog } from '../store/outbox.ts';
import type { Page, PageRequest } from '../store/pagination.ts';

export type Event = components['schemas']['Event'];

const DAY_MS = 24 * 3_600_000;

/** The oldest moment whose events are still kept at `now`. */
export function retentionCutoff(ctx: AppContext, now: Date = ctx.clock.now()): Date {
  return new Date(now.getTime() - ctx.config.eventRetentionDays * DAY_MS);
}

function toEvent(e: EventRecord, livemode: boolean): Event {
  // The stored text is what every delivery sends; parsed here, it serialises back to the same bytes.
  return { eventId: e.eventId, event: e.type as WebhookEventType, createdAt: e.occurredAt, payload: JSON.parse(e.payload) as Event['payload'], livemode };
}

export interface EventFilter {
  event?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
}

/** The account's events, newest first, within the retention period. */
export async function listEvents(ctx: AppContext, accountId: string, filter: EventFilter, page: PageRequest): Promise<Page<Event>> {
  const { createdFrom, createdTo } = createdRangeOrRefuse(filter);
  const keptSince = retentionCutoff(ctx).toISOString();
  const found = await ctx.store.read((db) => listEventRecords(db, { accountId, keptSince, type: filter.event, createdFrom, createdTo }, page));
  return { ...found, items: found.items.map((e) => toEvent(e, isLivemode(accountId))) };
}

/** One event of the account; 404 when it is another account's, a test event, or past retention. */
export async function getEvent(ctx: AppContext, accountId: string, eventId: string): Promise<Event> {
  const keptSince = retentionCutoff(ctx).toISOString();
  const found = await ctx.store.read((db) => findEvent(db, accountId, eventId, keptSince));
  if (!found) {
    throw fail.notFound(`There is no event ${eventId} in your account (events are kept for ${ctx.config.eventRetentionDays} days).`);
  }
  return toEvent(found, isLivemode(accountId));
}

/** How often events past retention are deleted. */
export const EVENT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Events deleted per transaction, so the store is never held for long. */
const PRUNE_BATCH = 500;

/**
 * One run of the retention sweep, exactly as the background task runs it: deletes every event
 * older than the retention period, with its deliveries and delivery log, a batch per transaction.
 * Returns how many events it deleted.
 */
export async function pruneExpiredEvents(ctx: AppContext): Promise<number> {
  const cutoff = retentionCutoff(ctx).toISOString();
  let deleted = 0;
  for (;;) {
    const taken = await ctx.store.transaction((tx) => pruneEventsBefore(tx, cutoff, PRUNE_BATCH));
    deleted += taken;
    if (taken < PRUNE_BATCH) return deleted;
  }
}

/** How many webhook deliveries wait in the outbox and since when (the metrics' outbox gauges). */
export function outboxBacklog(ctx: Pick<AppContext, 'store'>): Promise<{ pending: number; oldestCreatedAt: string | null }> {
  return ctx.store.read((db) => pendingDeliveryBacklog(db));
}
