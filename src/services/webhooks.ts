/**
 * Webhook endpoint use cases, shared by the HTTP handlers (and any later CLI or dashboard):
 * registration with the URL check, changes, secret rotation, test events, retries and the
 * delivery log; and the one mapping of endpoint and attempt records to the API's shapes.
 */
import { findAccount, lockAccount } from '../store/accounts.ts';
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAudit } from './audit.ts';
import { urlDecision } from '../domain/webhooks/addressPolicy.ts';
import { isLivemode, liveAccountId } from '../domain/accounts/environments.ts';
import { VERSIONS } from '../domain/versions/registry.ts';
import { fail } from '../errors.ts';
import { queueRecovery } from '../store/events.ts';
import { findDelivery, scheduleRetry } from '../store/outbox.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import type { Tx } from '../store/store.ts';
import {
  countEndpoints,
  deleteEndpoint,
  findEndpoint,
  findEndpointIdByUrl,
  findEventType,
  insertEndpoint,
  listAttempts,
  listEndpoints,
  replaceSubscriptions,
  rotateSecret,
  updateEndpoint,
  type DeliveryAttemptRecord,
  type WebhookEndpointRecord,
} from '../store/webhooks.ts';
import { eventKind, eventTypes, isEventType, type WebhookEventType } from '../events/catalog.ts';
import { AddressNotAllowedError, resolvePublic, systemResolver, type Resolver } from '../net/resolve.ts';
import { nudgeDispatchers, publishEvent } from '../events/outbox.ts';
import { ROTATION_OVERLAP_MS, newWebhookSecret, secretHint } from '../events/signing.ts';
import { newId } from '../ids.ts';
import { instantOrRefuse } from './createdRange.ts';
import { retentionCutoff } from './events.ts';

export type Webhook = components['schemas']['Webhook'];
export type WebhookDeliveryAttempt = components['schemas']['WebhookDeliveryAttempt'];
export type WebhookTestEvent = components['schemas']['WebhookTestEvent'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type WebhookRecovery = components['schemas']['WebhookRecovery'];

/** The public view of an endpoint at `now`: a previous secret whose overlap has ended is no longer shown. */
function toWebhook(e: WebhookEndpointRecord, now: Date): Webhook {
  const overlapEnds = e.previousSecretExpiresAt && Date.parse(e.previousSecretExpiresAt) > now.getTime() ? e.previousSecretExpiresAt : null;
  return {
    webhookId: e.webhookId,
    url: e.url,
    description: e.description,
    events: e.events as WebhookEventType[],
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    disabledAt: e.disabledAt,
    secretHint: secretHint(e.secretTail),
    previousSecretExpiresAt: overlapEnds,
    failingSince: e.failingSince,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    livemode: isLivemode(e.accountId),
    apiVersion: e.apiVersion,
  };
}

/** A version an endpoint may be pinned to, or 400 `api_version_invalid` naming them. */
function checkApiVersion(version: string | undefined): string | undefined {
  if (version === undefined || VERSIONS.includes(version)) return version;
  throw fail.invalid('api_version_invalid', `${version} is not a version of this API; supported: ${VERSIONS.join(', ')}.`, [{ pointer: '/apiVersion', message: 'is not a version of this API' }], {
    supportedVersions: [...VERSIONS],
  });
}

function toAttempt(a: DeliveryAttemptRecord, livemode: boolean): WebhookDeliveryAttempt {
  return {
    attemptId: a.attemptId,
    eventId: a.eventId,
    event: a.eventType as WebhookEventType,
    test: a.isTest,
    attempt: a.attempt,
    attemptedAt: a.attemptedAt,
    outcome: a.outcome,
    statusCode: a.statusCode,
    error: a.error,
    durationMs: a.durationMs,
    nextAttemptAt: a.nextAttemptAt,
    livemode,
  };
}

/**
 * Checks an endpoint URL for registration: the form and scheme, then the addresses its host
 * resolves to. A name that does not resolve (yet) is accepted: every connection checks again.
 * Returns the normalised URL; throws a 422 problem.
 */
async function checkEndpointUrl(raw: string, allowedHosts: readonly string[], resolve: Resolver = systemResolver): Promise<string> {
  const verdict = urlDecision(raw, allowedHosts);
  if (!verdict.ok) throw fail.refused(verdict.code, verdict.reason, { errors: [{ pointer: '/url', message: verdict.reason }] });
  if (verdict.needsResolution) {
    try {
      await resolvePublic(verdict.host, resolve);
    } catch (err) {
      if (err instanceof AddressNotAllowedError) {
        const reason = `url host ${err.message.replace(/^address not allowed: /, '')}`;
        throw fail.refused('webhook_url_not_allowed', reason, { errors: [{ pointer: '/url', message: reason }] });
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
    throw fail.refused('unknown_event_type', `Unknown event ${unknown.map((u) => u.event).join(', ')}; valid events: ${valid}`, {
      validEvents: eventTypes(),
      errors: unknown.map(({ index }) => ({ pointer: pointer(index), message: `is not an event kind; valid events: ${valid}` })),
    });
  }
  return events as WebhookEventType[];
}

/**
 * A second endpoint with the same URL would only make every event go twice to one receiver:
 * refused with 409 naming the endpoint that has it (`except` is the endpoint being changed).
 */
async function refuseDuplicateUrl(tx: Tx, accountId: string, url: string, except?: string): Promise<void> {
  const existing = await findEndpointIdByUrl(tx, accountId, url);
  if (existing && existing !== except) {
    throw fail.conflict(
      'webhook_url_already_registered',
      `Webhook endpoint ${existing} already has this URL; change its events with PATCH /v1/webhooks/${existing} instead of registering it again.`,
      { existingWebhookId: existing },
    );
  }
}

async function requireEndpoint(ctx: AppContext, accountId: string, webhookId: string): Promise<WebhookEndpointRecord> {
  const endpoint = await ctx.store.read((db) => findEndpoint(db, accountId, webhookId));
  if (!endpoint) throw fail.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
  return endpoint;
}

export async function getWebhook(ctx: AppContext, accountId: string, webhookId: string): Promise<Webhook> {
  return toWebhook(await requireEndpoint(ctx, accountId, webhookId), ctx.clock.now());
}

export async function listWebhooks(ctx: AppContext, accountId: string, page: PageRequest): Promise<Page<Webhook>> {
  const found = await ctx.store.read((db) => listEndpoints(db, accountId, page));
  const now = ctx.clock.now();
  return { ...found, items: found.items.map((e) => toWebhook(e, now)) };
}

/** The delivery log of one endpoint of the account, newest first; another account's endpoint is 404. */
export async function listWebhookDeliveries(ctx: AppContext, accountId: string, webhookId: string, page: PageRequest): Promise<Page<WebhookDeliveryAttempt>> {
  await requireEndpoint(ctx, accountId, webhookId);
  const found = await ctx.store.read((db) => listAttempts(db, webhookId, page));
  return { ...found, items: found.items.map((a) => toAttempt(a, isLivemode(accountId))) };
}

/** What the audit log keeps of an endpoint's settings (never its secret). */
function auditedSettings(endpoint: WebhookEndpointRecord) {
  return { url: endpoint.url, description: endpoint.description, events: endpoint.events, enabled: endpoint.enabled, apiVersion: endpoint.apiVersion };
}

/** One change of settings is one entry: disabling or enabling names itself, anything else is an update. */
function settingsAction(before: WebhookEndpointRecord, after: WebhookEndpointRecord) {
  if (before.enabled && !after.enabled) return 'webhook.disabled' as const;
  if (!before.enabled && after.enabled) return 'webhook.enabled' as const;
  return 'webhook.updated' as const;
}

export async function createWebhook(
  ctx: AppContext,
  accountId: string,
  input: { url: string; events: readonly string[]; description?: string | undefined; apiVersion?: string | undefined },
): Promise<{ webhook: Webhook; secret: string }> {
  const events = checkEvents(input.events, (i) => `/events/${i}`);
  const chosenVersion = checkApiVersion(input.apiVersion);
  const url = await checkEndpointUrl(input.url, ctx.config.webhooks.allowedHosts, ctx.resolve);
  const webhookId = newId('whk');
  const secret = newWebhookSecret();
  const createdAt = ctx.clock.now().toISOString();
  const endpoint = await ctx.store.transaction(async (tx) => {
    // Checked where the row is written, so concurrent registrations cannot slip past together (on
    // PostgreSQL the account's row lock makes registrations of one account take turns).
    await lockAccount(tx, accountId);
    await refuseDuplicateUrl(tx, accountId, url);
    const limit = ctx.config.webhooks.endpointsPerAccount;
    const registered = await countEndpoints(tx, accountId);
    if (registered >= limit) {
      throw fail.refused(
        'webhook_endpoint_limit_reached',
        `This account has ${registered} webhook endpoints, the most it may register (${limit}); delete one it no longer uses, ` +
          'or send more events to one endpoint (an endpoint may choose several events).',
        { limit },
      );
    }
    // By default, the version the account is pinned to now (read here: an upgrade may have just committed).
    const apiVersion = chosenVersion ?? (await findAccount(tx, liveAccountId(accountId)))!.apiVersion;
    await insertEndpoint(tx, { webhookId, accountId, url, description: input.description ?? '', events, secret, createdAt, apiVersion });
    const created = (await findEndpoint(tx, accountId, webhookId))!;
    await recordAudit(tx, ctx, { accountId, action: 'webhook.created', target: { type: 'webhook', id: webhookId }, change: { before: null, after: auditedSettings(created) } });
    return created;
  });
  return { webhook: toWebhook(endpoint, ctx.clock.now()), secret };
}

export async function updateWebhook(
  ctx: AppContext,
  accountId: string,
  webhookId: string,
  changes: { url?: string | undefined; events?: readonly string[] | undefined; description?: string | undefined; enabled?: boolean | undefined; apiVersion?: string | undefined },
): Promise<Webhook> {
  await requireEndpoint(ctx, accountId, webhookId);
  const apiVersion = checkApiVersion(changes.apiVersion);
  const events = changes.events === undefined ? undefined : checkEvents(changes.events, (i) => `/events/${i}`);
  const url = changes.url === undefined ? undefined : await checkEndpointUrl(changes.url, ctx.config.webhooks.allowedHosts, ctx.resolve);
  const now = ctx.clock.now().toISOString();
  const updated = await ctx.store.transaction(async (tx) => {
    if (url !== undefined) await lockAccount(tx, accountId); // URL changes of one account take turns (PostgreSQL)
    const before = await findEndpoint(tx, accountId, webhookId);
    if (!before) return undefined; // deleted meanwhile
    if (url !== undefined) await refuseDuplicateUrl(tx, accountId, url, webhookId);
    await updateEndpoint(
      tx,
      webhookId,
      {
        ...(url !== undefined ? { url } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        ...(apiVersion !== undefined ? { apiVersion } : {}),
      },
      now,
    );
    if (events) await replaceSubscriptions(tx, accountId, webhookId, events);
    const after = (await findEndpoint(tx, accountId, webhookId))!;
    await recordAudit(tx, ctx, {
      accountId,
      action: settingsAction(before, after),
      target: { type: 'webhook', id: webhookId },
      change: { before: auditedSettings(before), after: auditedSettings(after) },
    });
    return after;
  });
  if (!updated) throw fail.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
  if (changes.enabled === true) nudgeDispatchers();
  return toWebhook(updated, ctx.clock.now());
}

export async function removeWebhook(ctx: AppContext, accountId: string, webhookId: string): Promise<void> {
  const deleted = await ctx.store.transaction(async (tx) => {
    const before = await findEndpoint(tx, accountId, webhookId);
    if (!before || !(await deleteEndpoint(tx, accountId, webhookId))) return false;
    await recordAudit(tx, ctx, { accountId, action: 'webhook.deleted', target: { type: 'webhook', id: webhookId }, change: { before: auditedSettings(before), after: null } });
    return true;
  });
  if (!deleted) throw fail.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
}

export async function rotateWebhookSecret(
  ctx: AppContext,
  accountId: string,
  webhookId: string,
): Promise<{ webhook: Webhook; secret: string }> {
  const secret = newWebhookSecret();
  const now = ctx.clock.now();
  const endpoint = await ctx.store.transaction(async (tx) => {
    if (!(await findEndpoint(tx, accountId, webhookId))) return undefined;
    await rotateSecret(tx, webhookId, secret, new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(), now.toISOString());
    await recordAudit(tx, ctx, { accountId, action: 'webhook.secretRotated', target: { type: 'webhook', id: webhookId } });
    return findEndpoint(tx, accountId, webhookId);
  });
  if (!endpoint) throw fail.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
  return { webhook: toWebhook(endpoint, now), secret };
}

function disabledProblem(endpoint: WebhookEndpointRecord) {
  return fail.conflict(
    'webhook_disabled',
    `The endpoint is disabled (${endpoint.disabledReason ?? 'manual'}); enable it with PATCH /v1/webhooks/${endpoint.webhookId} first`,
    { currentStatus: 'disabled', disabledReason: endpoint.disabledReason },
  );
}

/** The event kinds an endpoint may choose, with the spec's words for each. */
export function webhookEventCatalog(): Array<{ type: WebhookEventType; summary: string; description: string }> {
  return eventTypes().map((type) => {
    const { summary, description } = eventKind(type);
    return { type, summary, description };
  });
}

/** Queues the spec's example of `eventType` for this endpoint only, marked as a test. */
export async function sendTestEvent(
  ctx: AppContext,
  accountId: string,
  webhookId: string,
  eventType: string,
): Promise<WebhookTestEvent> {
  const [type] = checkEvents([eventType], () => '/event');
  const payload = eventKind(type!).example;
  const result = await ctx.store.transaction(async (tx) => {
    const endpoint = await findEndpoint(tx, accountId, webhookId);
    if (!endpoint) throw fail.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
    if (!endpoint.enabled) throw disabledProblem(endpoint);
    const published = await publishEvent(tx, { accountId, payload, occurredAt: ctx.clock.now() }, { isTest: true, onlyWebhookId: webhookId });
    await recordAudit(tx, ctx, { accountId, action: 'webhook.testSent', target: { type: 'webhook', id: webhookId }, change: { before: null, after: { event: type!, eventId: published.eventId } } });
    return published;
  });
  return { eventId: result.eventId, event: type!, webhookId, test: true, payload, livemode: isLivemode(accountId) };
}

/** Makes the event's delivery to the endpoint due now. */
export async function retryDelivery(
  ctx: AppContext,
  accountId: string,
  webhookId: string,
  eventId: string,
): Promise<WebhookDelivery> {
  const now = ctx.clock.now().toISOString();
  const result = await ctx.store.transaction(async (tx) => {
    const endpoint = await findEndpoint(tx, accountId, webhookId);
    const delivery = endpoint && (await findDelivery(tx, accountId, webhookId, eventId, now));
    if (!endpoint || !delivery) throw fail.notFound(`Event ${eventId} was never delivered to webhook endpoint ${webhookId} in your account.`);
    if (!endpoint.enabled) throw disabledProblem(endpoint);
    if (delivery.inFlight) throw fail.conflict('delivery_in_flight', 'An attempt to deliver this event is under way; retry when it has finished');
    await scheduleRetry(tx, accountId, webhookId, eventId, now);
    const event = (await findEventType(tx, accountId, eventId)) as WebhookEventType;
    const queued = (await findDelivery(tx, accountId, webhookId, eventId, now))!;
    await recordAudit(tx, ctx, { accountId, action: 'webhook.deliveryRetried', target: { type: 'webhook', id: webhookId }, change: { before: null, after: { eventId } } });
    return { webhookId, eventId, event, state: queued.state, attempts: queued.attempts, nextAttemptAt: queued.nextAttemptAt, livemode: isLivemode(accountId) };
  });
  nudgeDispatchers();
  return result;
}

/**
 * Queues again, for the endpoint, every retained event since `since` of the kinds it chooses and
 * has not acknowledged (see queueRecovery): for a receiver that was down past the retry schedule,
 * or an endpoint that was disabled meanwhile. `since` must lie within retention and not ahead of now.
 */
export async function recoverWebhookEvents(ctx: AppContext, accountId: string, webhookId: string, sinceRaw: string): Promise<WebhookRecovery> {
  const since = instantOrRefuse(sinceRaw, '/since');
  const now = ctx.clock.now();
  const until = now.toISOString();
  const earliest = retentionCutoff(ctx, now).toISOString();
  if (since > until) {
    throw fail.refused('since_in_future', `since (${since}) is later than now (${until}).`, { errors: [{ pointer: '/since', message: 'must not be in the future' }] });
  }
  if (since < earliest) {
    throw fail.refused(
      'since_before_retention',
      `Events are kept for ${ctx.config.eventRetentionDays} days; since must be at or after ${earliest}.`,
      { earliestSince: earliest, errors: [{ pointer: '/since', message: `must be at or after ${earliest}` }] },
    );
  }
  const counts = await ctx.store.transaction(async (tx) => {
    const endpoint = await findEndpoint(tx, accountId, webhookId);
    if (!endpoint) throw fail.notFound(`There is no webhook endpoint ${webhookId} in your account.`);
    if (!endpoint.enabled) throw disabledProblem(endpoint);
    const queued = await queueRecovery(tx, { accountId, webhookId, since, until, now: until });
    await recordAudit(tx, ctx, { accountId, action: 'webhook.recovered', target: { type: 'webhook', id: webhookId }, change: { before: null, after: { since, until, queued: queued.queued } } });
    return queued;
  });
  if (counts.queued > 0) nudgeDispatchers();
  return { webhookId, since, until, ...counts, livemode: isLivemode(accountId) };
}
