/**
 * Webhook endpoint use cases, shared by the HTTP handlers (and any later CLI or dashboard):
 * registration with the URL check, changes, secret rotation, test events and retries.
 */
import type { Clock } from '../clock.ts';
import type { WebhookConfig } from '../config.ts';
import { urlDecision } from '../domain/webhooks/addressPolicy.ts';
import { problems } from '../http/problem.ts';
import { newId } from '../ids.ts';
import { findDelivery, scheduleRetry, type DeliveryStateRecord } from '../store/outbox.ts';
import type { Store } from '../store/store.ts';
import {
  deleteEndpoint,
  findEndpoint,
  findEventType,
  insertEndpoint,
  replaceSubscriptions,
  rotateSecret,
  updateEndpoint,
  type WebhookEndpointRecord,
} from '../store/webhooks.ts';
import { eventKind, eventTypes, isEventType, type WebhookEventPayload, type WebhookEventType } from './catalog.ts';
import { AddressNotAllowedError, resolvePublic, systemResolver, type Resolver } from '../net/resolve.ts';
import { nudgeDispatchers, publishEvent } from './outbox.ts';
import { ROTATION_OVERLAP_MS, newWebhookSecret } from './signing.ts';

export interface WebhookServices {
  store: Store;
  clock: Clock;
  config: { webhooks: WebhookConfig };
}

/**
 * Checks an endpoint URL for registration: the form and scheme, then the addresses its host
 * resolves to. A name that does not resolve (yet) is accepted: every connection checks again.
 * Returns the normalised URL; throws a 422 problem.
 */
export async function checkEndpointUrl(raw: string, allowedHosts: readonly string[], resolve: Resolver = systemResolver): Promise<string> {
  const verdict = urlDecision(raw, allowedHosts);
  if (!verdict.ok) throw problems.unprocessable(verdict.code, verdict.reason, { errors: [{ pointer: '/url', message: verdict.reason }] });
  if (verdict.needsResolution) {
    try {
      await resolvePublic(verdict.host, resolve);
    } catch (err) {
      if (err instanceof AddressNotAllowedError) {
        const reason = `url host ${err.message.replace(/^address not allowed: /, '')}`;
        throw problems.unprocessable('webhook_url_not_allowed', reason, { errors: [{ pointer: '/url', message: reason }] });
      }
      // Not resolvable now (not yet in DNS, resolver down): checked again at every connection.
    }
  }
  return verdict.url;
}

/** Event names must be kinds of the spec's webhooks section; `pointer` locates them in the request body. */
function checkEvents(events: readonly string[], pointer: (index: number) => string): WebhookEventType[] {
  const unknown = events.map((event, index) => ({ event, index })).filter(({ event }) => !isEventType(event));
  if (unknown.length > 0) {
    const valid = eventTypes().join(', ');
    throw problems.unprocessable('unknown_event_type', `Unknown event ${unknown.map((u) => u.event).join(', ')}; valid events: ${valid}`, {
      validEvents: eventTypes(),
      errors: unknown.map(({ index }) => ({ pointer: pointer(index), message: `is not an event kind; valid events: ${valid}` })),
    });
  }
  return events as WebhookEventType[];
}

async function requireEndpoint(store: Store, accountId: string, webhookId: string): Promise<WebhookEndpointRecord> {
  const endpoint = await store.read((db) => findEndpoint(db, accountId, webhookId));
  if (!endpoint) throw problems.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
  return endpoint;
}

export async function getWebhook(s: WebhookServices, accountId: string, webhookId: string): Promise<WebhookEndpointRecord> {
  return requireEndpoint(s.store, accountId, webhookId);
}

export async function createWebhook(
  s: WebhookServices,
  accountId: string,
  input: { url: string; events: readonly string[]; description?: string | undefined },
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  const events = checkEvents(input.events, (i) => `/events/${i}`);
  const url = await checkEndpointUrl(input.url, s.config.webhooks.allowedHosts);
  const webhookId = newId('whk');
  const secret = newWebhookSecret();
  const createdAt = s.clock.now().toISOString();
  const endpoint = await s.store.transaction(async (tx) => {
    await insertEndpoint(tx, { webhookId, accountId, url, description: input.description ?? '', events, secret, createdAt });
    return (await findEndpoint(tx, accountId, webhookId))!;
  });
  return { endpoint, secret };
}

export async function updateWebhook(
  s: WebhookServices,
  accountId: string,
  webhookId: string,
  changes: { url?: string | undefined; events?: readonly string[] | undefined; description?: string | undefined; enabled?: boolean | undefined },
): Promise<WebhookEndpointRecord> {
  await requireEndpoint(s.store, accountId, webhookId);
  const events = changes.events === undefined ? undefined : checkEvents(changes.events, (i) => `/events/${i}`);
  const url = changes.url === undefined ? undefined : await checkEndpointUrl(changes.url, s.config.webhooks.allowedHosts);
  const now = s.clock.now().toISOString();
  const updated = await s.store.transaction(async (tx) => {
    if (!(await findEndpoint(tx, accountId, webhookId))) return undefined; // deleted meanwhile
    await updateEndpoint(
      tx,
      webhookId,
      {
        ...(url !== undefined ? { url } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
      },
      now,
    );
    if (events) await replaceSubscriptions(tx, accountId, webhookId, events);
    return findEndpoint(tx, accountId, webhookId);
  });
  if (!updated) throw problems.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
  if (changes.enabled === true) nudgeDispatchers();
  return updated;
}

export async function removeWebhook(s: WebhookServices, accountId: string, webhookId: string): Promise<void> {
  const deleted = await s.store.transaction((tx) => deleteEndpoint(tx, accountId, webhookId));
  if (!deleted) throw problems.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
}

export async function rotateWebhookSecret(
  s: WebhookServices,
  accountId: string,
  webhookId: string,
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  const secret = newWebhookSecret();
  const now = s.clock.now();
  const endpoint = await s.store.transaction(async (tx) => {
    if (!(await findEndpoint(tx, accountId, webhookId))) return undefined;
    await rotateSecret(tx, webhookId, secret, new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(), now.toISOString());
    return findEndpoint(tx, accountId, webhookId);
  });
  if (!endpoint) throw problems.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
  return { endpoint, secret };
}

function disabledProblem(endpoint: WebhookEndpointRecord) {
  return problems.conflict(
    'webhook_disabled',
    `The endpoint is disabled (${endpoint.disabledReason ?? 'manual'}); enable it with PATCH /v1/webhooks/${endpoint.webhookId} first`,
    { currentStatus: 'disabled', disabledReason: endpoint.disabledReason },
  );
}

/** Queues the spec's example of `eventType` for this endpoint only, marked as a test. */
export async function sendTestEvent(
  s: WebhookServices,
  accountId: string,
  webhookId: string,
  eventType: string,
): Promise<{ eventId: string; event: WebhookEventType; payload: WebhookEventPayload }> {
  const [type] = checkEvents([eventType], () => '/event');
  const payload = eventKind(type!).example;
  const result = await s.store.transaction(async (tx) => {
    const endpoint = await findEndpoint(tx, accountId, webhookId);
    if (!endpoint) throw problems.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
    if (!endpoint.enabled) throw disabledProblem(endpoint);
    return publishEvent(tx, { accountId, payload, occurredAt: s.clock.now() }, { isTest: true, onlyWebhookId: webhookId });
  });
  return { eventId: result.eventId, event: type!, payload };
}

/** Makes the event's delivery to the endpoint due now. */
export async function retryDelivery(
  s: WebhookServices,
  accountId: string,
  webhookId: string,
  eventId: string,
): Promise<DeliveryStateRecord & { eventType: WebhookEventType }> {
  const now = s.clock.now().toISOString();
  const result = await s.store.transaction(async (tx) => {
    const endpoint = await findEndpoint(tx, accountId, webhookId);
    const delivery = endpoint && (await findDelivery(tx, accountId, webhookId, eventId, now));
    if (!endpoint || !delivery) throw problems.notFound(`Event ${eventId} was never delivered to webhook endpoint ${webhookId} in your account.`);
    if (!endpoint.enabled) throw disabledProblem(endpoint);
    if (delivery.inFlight) throw problems.conflict('delivery_in_flight', 'An attempt to deliver this event is under way; retry when it has finished');
    await scheduleRetry(tx, accountId, webhookId, eventId, now);
    const eventType = (await findEventType(tx, accountId, eventId)) as WebhookEventType;
    return { ...(await findDelivery(tx, accountId, webhookId, eventId, now))!, eventType };
  });
  nudgeDispatchers();
  return result;
}
