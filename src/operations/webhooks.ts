/**
 * /v1/webhooks: endpoints, their secrets, test events, the delivery log and recovery. Reads are open to any
 * key of the account; writes need an admin key (x-required-role in the spec, enforced at the edge).
 */
import type { OperationHandlers } from '../contract/handlers.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import {
  createWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  recoverWebhookEvents,
  removeWebhook,
  retryDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from '../services/webhooks.ts';

export const webhookOperations = {
  listWebhooks: async ({ query }, ctx) => {
    const page = await listWebhooks(ctx, ctx.principal.accountId, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, 'whk') });
    return { status: 200, body: listBody(page) };
  },

  createWebhook: async ({ body }, ctx) => {
    const { webhook, secret } = await createWebhook(ctx, ctx.principal.accountId, body);
    ctx.log.info({ webhookId: webhook.webhookId, events: webhook.events }, 'webhook endpoint registered');
    return { status: 201, body: { ...webhook, secret } };
  },

  getWebhook: async ({ path }, ctx) => ({ status: 200, body: await getWebhook(ctx, ctx.principal.accountId, path.webhookId) }),

  updateWebhook: async ({ path, body }, ctx) => {
    const webhook = await updateWebhook(ctx, ctx.principal.accountId, path.webhookId, body);
    ctx.log.info({ webhookId: webhook.webhookId, fields: Object.keys(body) }, 'webhook endpoint changed');
    return { status: 200, body: webhook };
  },

  deleteWebhook: async ({ path }, ctx) => {
    await removeWebhook(ctx, ctx.principal.accountId, path.webhookId);
    ctx.log.info({ webhookId: path.webhookId }, 'webhook endpoint deleted');
    return { status: 204, body: undefined };
  },

  rotateWebhookSecret: async ({ path }, ctx) => {
    const { webhook, secret } = await rotateWebhookSecret(ctx, ctx.principal.accountId, path.webhookId);
    ctx.log.info({ webhookId: webhook.webhookId, previousSecretExpiresAt: webhook.previousSecretExpiresAt }, 'webhook secret rotated');
    return { status: 200, body: { ...webhook, secret } };
  },

  sendTestWebhookEvent: async ({ path, body }, ctx) => {
    const sent = await sendTestEvent(ctx, ctx.principal.accountId, path.webhookId, body.event);
    ctx.log.info({ webhookId: path.webhookId, eventId: sent.eventId, eventType: sent.event }, 'webhook test event queued');
    return { status: 202, body: sent };
  },

  listWebhookDeliveries: async ({ path, query }, ctx) => {
    const page = await listWebhookDeliveries(ctx, ctx.principal.accountId, path.webhookId, {
      limit: query.limit ?? 20,
      afterId: decodeCursor(query.cursor, 'dlv'),
    });
    return { status: 200, body: listBody(page) };
  },

  retryWebhookDelivery: async ({ path }, ctx) => {
    const delivery = await retryDelivery(ctx, ctx.principal.accountId, path.webhookId, path.eventId);
    ctx.log.info({ webhookId: path.webhookId, eventId: path.eventId }, 'webhook delivery queued again');
    return { status: 202, body: delivery };
  },

  recoverWebhookEvents: async ({ path, body }, ctx) => {
    const recovery = await recoverWebhookEvents(ctx, ctx.principal.accountId, path.webhookId, body.since);
    ctx.log.info({ webhookId: path.webhookId, since: recovery.since, queued: recovery.queued }, 'webhook events recovered');
    return { status: 202, body: recovery };
  },
} satisfies OperationHandlers;
