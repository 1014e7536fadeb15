/**
 * The transactional outbox. A change that causes an event calls `publish(tx, event)` inside its
 * own transaction: the event and one pending delivery per enabled endpoint of the account that
 * chose the event are written with the change, so they commit (and are delivered, at least once)
 * or roll back together. The dispatcher sends them after the commit.
 */
import { newId } from '../ids.ts';
import { rememberTrace } from '../observability/tracing.ts';
import { renderEvent } from '../domain/versions/registry.ts';
import { insertDeliveries, insertEvent, subscribedEndpoints } from '../store/outbox.ts';
import type { Tx } from '../store/store.ts';
import { payloadProblem, type WebhookEventPayload } from './catalog.ts';

export interface PublishedEvent {
  accountId: string;
  payload: WebhookEventPayload;
  occurredAt: Date;
  /**
   * When its deliveries are first due, in real time (default `occurredAt`). Differs for an event
   * of a test environment whose simulated clock runs ahead: it happened at the environment's time
   * and is delivered now.
   */
  dueAt?: Date;
}

type Listener = () => void;
const listeners = new Set<Listener>();

/**
 * Calls `listener` soon after each publish (the dispatcher wakes up instead of waiting for its
 * next poll). The store runs transactions in order, so the dispatcher's claim, queued after the
 * publishing transaction, sees it once it committed. Returns the unsubscribe function.
 */
export function onPublish(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Wakes every dispatcher of this process (after a publish, a retry, a re-enabled endpoint). */
export function nudgeDispatchers(): void {
  for (const listener of listeners) listener();
}

/**
 * Writes the event (`evt-` id) and its deliveries inside the caller's transaction. Throws when
 * the payload does not match the spec's schema for its event: a sender bug, never sent out.
 */
export async function publish(tx: Tx, event: PublishedEvent): Promise<{ eventId: string }> {
  return publishEvent(tx, event, { isTest: false });
}

/**
 * The outbox write behind `publish` and test events. A test event goes only to `onlyWebhookId`
 * (whatever it chose) and is marked as a test in the delivery log.
 */
export async function publishEvent(
  tx: Tx,
  event: PublishedEvent,
  options: { isTest: boolean; onlyWebhookId?: string },
): Promise<{ eventId: string }> {
  const problem = payloadProblem(event.payload);
  if (problem !== null) throw new Error(`webhook payload does not match the spec: ${problem}`);
  const eventId = newId('evt');
  const occurredAt = event.occurredAt.toISOString();
  await insertEvent(tx, {
    eventId,
    accountId: event.accountId,
    type: event.payload.event,
    payload: JSON.stringify(event.payload),
    occurredAt,
    isTest: options.isTest,
  });
  // An endpoint pinned to a version without this kind of event does not get it (src/domain/versions/).
  const endpoints = options.onlyWebhookId
    ? [options.onlyWebhookId]
    : (await subscribedEndpoints(tx, event.accountId, event.payload.event))
        .filter((endpoint) => renderEvent(event.payload.event, event.payload as never, endpoint.apiVersion) !== null)
        .map((endpoint) => endpoint.id);
  const dueAt = event.dueAt ? event.dueAt.toISOString() : occurredAt;
  await insertDeliveries(tx, { webhookIds: endpoints, eventId, accountId: event.accountId, dueAt });
  if (endpoints.length > 0) {
    rememberTrace(eventId); // its deliveries, sent by this process, join the publishing request's trace
    setImmediate(nudgeDispatchers);
  }
  return { eventId };
}
