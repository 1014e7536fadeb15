/**
 * Webhooks: register an endpoint choosing events from the spec's catalog, edit it, enable or
 * disable it, rotate its secret (shown once), send a test event, and its delivery log with retry.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { isId } from '../../ids.ts';
import {
  createWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  webhookEventCatalog,
} from '../../services/webhooks.ts';
import { decodeForm } from '../forms.ts';
import { actingAs, accountOf, fieldValues, formErrors, formOf, redirect, requireRoleFor, requireSession, submittedValues } from '../page.ts';
import { render } from '../render.ts';
import { checkContract, requestSchema } from '../validation.ts';

const DONE: Record<string, string> = {
  saved: 'The endpoint is saved.',
  enabled: 'The endpoint is enabled: events are delivered to it again.',
  disabled: 'The endpoint is disabled: no events are delivered to it until it is enabled.',
  'test-sent': 'A test event is queued; it shows in the delivery log below within seconds (reload the page).',
  retried: 'The delivery is queued again.',
};

type WebhookBody = { url: string; events: string[]; description?: string };

/** The event checkboxes: each event of the catalog, checked when `chosen` has it. */
function eventChoices(chosen: readonly string[]) {
  return webhookEventCatalog().map((event) => ({ ...event, checked: chosen.includes(event.type) }));
}

async function detailPage(koa: Context, ctx: AppContext, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const session = requireSession(koa);
  const accountId = accountOf(session);
  const webhook = await getWebhook(ctx, accountId, koa.params.webhookId!);
  const after = typeof koa.query.after === 'string' && isId('dlv', koa.query.after) ? koa.query.after : undefined;
  const deliveries = await listWebhookDeliveries(ctx, accountId, webhook.webhookId, { limit: 25, afterId: after });
  const values = (extra.values as Record<string, string> | undefined) ?? fieldValues({ url: webhook.url, description: webhook.description });
  const chosen = (extra.chosen as string[] | undefined) ?? webhook.events;
  render(
    koa,
    'webhook',
    {
      title: `Webhook ${webhook.url}`,
      nav: 'webhooks',
      webhook,
      deliveries: deliveries.items,
      nextAfter: deliveries.lastId,
      events: eventChoices(chosen),
      catalog: webhookEventCatalog(),
      errors: {},
      message: null,
      done: DONE[String(koa.query.done)] ?? null,
      ...extra,
      values,
    },
    status,
  );
}

function newPage(koa: Context, extra: Record<string, unknown> = {}, status = 200): void {
  const chosen = (extra.chosen as string[] | undefined) ?? [];
  render(koa, 'webhook-new', { title: 'Register a webhook endpoint', nav: 'webhooks', values: {}, errors: {}, message: null, ...extra, events: eventChoices(chosen) }, status);
}

export function webhookRoutes(router: Router, ctx: AppContext): void {
  router.get('webhooks', '/webhooks', async (koa) => {
    const session = requireSession(koa);
    const after = typeof koa.query.after === 'string' && isId('whk', koa.query.after) ? koa.query.after : undefined;
    const page = await listWebhooks(ctx, accountOf(session), { limit: 50, afterId: after });
    render(koa, 'webhooks', { title: 'Webhooks', nav: 'webhooks', webhooks: page.items, nextAfter: page.lastId, catalog: webhookEventCatalog() });
  });

  router.get('webhooks.new', '/webhooks/new', async (koa) => {
    requireRoleFor(koa, 'createWebhook');
    newPage(koa);
  });

  router.post('webhooks.create', '/webhooks', async (koa) => {
    const session = requireRoleFor(koa, 'createWebhook');
    const form = formOf(koa);
    const { body } = decodeForm<WebhookBody>(form, requestSchema('createWebhook'));
    try {
      checkContract('createWebhook', { ...body, events: body.events ?? [] });
      const { webhook, secret } = await createWebhook(actingAs(ctx, koa, session), accountOf(session), { ...body, events: body.events ?? [] });
      ctx.log.info({ webhookId: webhook.webhookId, userId: session.user.userId }, 'webhook endpoint registered in the dashboard');
      render(koa, 'webhook-secret', { title: 'Webhook endpoint registered', nav: 'webhooks', webhook, secret, rotated: false });
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      newPage(koa, { values: submittedValues(form), chosen: form.getAll('/events'), errors: shown.fields, message: shown.message }, 400);
    }
  });

  router.get('webhook', '/webhooks/:webhookId', (koa) => detailPage(koa, ctx));

  router.post('webhooks.update', '/webhooks/:webhookId', async (koa) => {
    const session = requireRoleFor(koa, 'updateWebhook');
    const form = formOf(koa);
    const { body } = decodeForm<WebhookBody>(form, requestSchema('updateWebhook'));
    const changes = { url: body.url ?? '', description: body.description ?? '', events: body.events ?? [] };
    try {
      checkContract('updateWebhook', changes);
      await updateWebhook(actingAs(ctx, koa, session), accountOf(session), koa.params.webhookId!, changes);
      redirect(koa, `/dashboard/webhooks/${koa.params.webhookId}?done=saved`);
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      await detailPage(koa, ctx, { values: submittedValues(form), chosen: form.getAll('/events'), errors: shown.fields, message: shown.message }, 400);
    }
  });

  router.post('webhooks.enabled', '/webhooks/:webhookId/enabled', async (koa) => {
    const session = requireRoleFor(koa, 'updateWebhook');
    const enabled = formOf(koa).get('/enabled') === 'true';
    await updateWebhook(actingAs(ctx, koa, session), accountOf(session), koa.params.webhookId!, { enabled });
    redirect(koa, `/dashboard/webhooks/${koa.params.webhookId}?done=${enabled ? 'enabled' : 'disabled'}`);
  });

  router.post('webhooks.rotate-secret', '/webhooks/:webhookId/rotate-secret', async (koa) => {
    const session = requireRoleFor(koa, 'rotateWebhookSecret');
    const { webhook, secret } = await rotateWebhookSecret(actingAs(ctx, koa, session), accountOf(session), koa.params.webhookId!);
    ctx.log.info({ webhookId: webhook.webhookId, userId: session.user.userId }, 'webhook secret rotated in the dashboard');
    render(koa, 'webhook-secret', { title: 'Webhook secret rotated', nav: 'webhooks', webhook, secret, rotated: true });
  });

  router.post('webhooks.test', '/webhooks/:webhookId/test', async (koa) => {
    const session = requireRoleFor(koa, 'sendTestWebhookEvent');
    const event = formOf(koa).get('/event') ?? '';
    checkContract('sendTestWebhookEvent', { event });
    await sendTestEvent(actingAs(ctx, koa, session), accountOf(session), koa.params.webhookId!, event);
    redirect(koa, `/dashboard/webhooks/${koa.params.webhookId}?done=test-sent`);
  });

  router.post('webhooks.retry', '/webhooks/:webhookId/deliveries/:eventId/retry', async (koa) => {
    const session = requireRoleFor(koa, 'retryWebhookDelivery');
    await retryDelivery(actingAs(ctx, koa, session), accountOf(session), koa.params.webhookId!, koa.params.eventId!);
    redirect(koa, `/dashboard/webhooks/${koa.params.webhookId}?done=retried`);
  });
}
