/**
 * /v1/webhooks: endpoints, their secrets, test events and the delivery log. Reads are open to any
 * key of the account; writes need an admin key (x-required-role in the spec, enforced at the edge).
 */
import type { components } from '../../generated/api.d.ts';
import {
  createWebhook,
  getWebhook,
  removeWebhook,
  retryDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from '../events/webhooks.ts';
import { decodeCursor, encodeCursor } from '../http/pagination.ts';
import { listAttempts, listEndpoints, type DeliveryAttemptRecord, type WebhookEndpointRecord } from '../store/webhooks.ts';
import { secretHint } from '../events/signing.ts';
import type { OperationHandlers } from './types.ts';

type Webhook = components['schemas']['Webhook'];
type WebhookEventType = components['schemas']['WebhookEventType'];
type WebhookDeliveryAttempt = components['schemas']['WebhookDeliveryAttempt'];

const WEBHOOK_ID = /^whk-[0-9a-z]{26}$/;
const ATTEMPT_ID = /^dlv-[0-9a-z]{26}$/;

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
  };
}

function toAttempt(a: DeliveryAttemptRecord): WebhookDeliveryAttempt {
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
  };
}

export const webhookOperations = {
  listWebhooks: async ({ query }, ctx) => {
    const page = await ctx.services.store.read((db) =>
      listEndpoints(db, ctx.principal.accountId, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, WEBHOOK_ID) }),
    );
    return { status: 200, body: { data: page.items.map((e) => toWebhook(e, ctx.services.clock.now())), nextCursor: encodeCursor(page.lastId) } };
  },

  createWebhook: async ({ body }, ctx) => {
    const { endpoint, secret } = await createWebhook(ctx.services, ctx.principal.accountId, body);
    ctx.log.info({ webhookId: endpoint.webhookId, events: endpoint.events }, 'webhook endpoint registered');
    return { status: 201, body: { ...toWebhook(endpoint, ctx.services.clock.now()), secret } };
  },

  getWebhook: async ({ path }, ctx) => {
    return { status: 200, body: toWebhook(await getWebhook(ctx.services, ctx.principal.accountId, path.webhookId), ctx.services.clock.now()) };
  },

  updateWebhook: async ({ path, body }, ctx) => {
    const endpoint = await updateWebhook(ctx.services, ctx.principal.accountId, path.webhookId, body);
    ctx.log.info({ webhookId: endpoint.webhookId, fields: Object.keys(body) }, 'webhook endpoint changed');
    return { status: 200, body: toWebhook(endpoint, ctx.services.clock.now()) };
  },

  deleteWebhook: async ({ path }, ctx) => {
    await removeWebhook(ctx.services, ctx.principal.accountId, path.webhookId);
    ctx.log.info({ webhookId: path.webhookId }, 'webhook endpoint deleted');
    return { status: 204, body: undefined };
  },

  rotateWebhookSecret: async ({ path }, ctx) => {
    const { endpoint, secret } = await rotateWebhookSecret(ctx.services, ctx.principal.accountId, path.webhookId);
    ctx.log.info({ webhookId: endpoint.webhookId, previousSecretExpiresAt: endpoint.previousSecretExpiresAt }, 'webhook secret rotated');
    return { status: 200, body: { ...toWebhook(endpoint, ctx.services.clock.now()), secret } };
  },

  sendTestWebhookEvent: async ({ path, body }, ctx) => {
    const sent = await sendTestEvent(ctx.services, ctx.principal.accountId, path.webhookId, body.event);
    ctx.log.info({ webhookId: path.webhookId, eventId: sent.eventId, eventType: sent.event }, 'webhook test event queued');
    return { status: 202, body: { eventId: sent.eventId, event: sent.event, webhookId: path.webhookId, test: true, payload: sent.payload } };
  },

  listWebhookDeliveries: async ({ path, query }, ctx) => {
    await getWebhook(ctx.services, ctx.principal.accountId, path.webhookId); // 404 for another account's endpoint
    const page = await ctx.services.store.read((db) =>
      listAttempts(db, path.webhookId, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, ATTEMPT_ID) }),
    );
    return { status: 200, body: { data: page.items.map(toAttempt), nextCursor: encodeCursor(page.lastId) } };
  },

  retryWebhookDelivery: async ({ path }, ctx) => {
    const delivery = await retryDelivery(ctx.services, ctx.principal.accountId, path.webhookId, path.eventId);
    ctx.log.info({ webhookId: path.webhookId, eventId: path.eventId }, 'webhook delivery queued again');
    return {
      status: 202,
      body: {
        webhookId: path.webhookId,
        eventId: path.eventId,
        event: delivery.eventType,
        state: delivery.state,
        attempts: delivery.attempts,
        nextAttemptAt: delivery.nextAttemptAt,
      },
    };
  },
} satisfies OperationHandlers;
