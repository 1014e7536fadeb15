/**
 * API keys: the list (role or scopes, hint, created and last-used times), create (an admin or member
 * key, or a restricted one with none/read/write per resource family) with the secret shown once,
 * revoke with confirmation.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { SCOPE_FAMILIES, type KeyRequest } from '../../domain/accounts/scopes.ts';
import { isId } from '../../ids.ts';
import { createApiKey, getApiKey, listApiKeys, revokeApiKey } from '../../services/accounts.ts';
import { decodeForm } from '../forms.ts';
import { actingAs, accountOf, formErrors, formOf, redirect, requireRoleFor, requireSession, submittedValues } from '../page.ts';
import { render } from '../render.ts';
import { checkContract, requestSchema } from '../validation.ts';

const PAGE_SIZE = 50;

const DONE: Record<string, string> = { revoked: 'The key is revoked: calls with it now get 401.' };

async function keysPage(koa: Context, ctx: AppContext, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const session = requireSession(koa);
  const after = typeof koa.query.after === 'string' && isId('key', koa.query.after) ? koa.query.after : undefined;
  const page = await listApiKeys(ctx, accountOf(session), { limit: PAGE_SIZE, afterId: after });
  render(
    koa,
    'api-keys',
    {
      title: 'API keys',
      nav: 'api-keys',
      keys: page.items,
      nextAfter: page.lastId,
      families: SCOPE_FAMILIES,
      values: { '/role': 'member' },
      errors: {},
      message: null,
      done: DONE[String(koa.query.done)] ?? null,
      ...extra,
    },
    status,
  );
}

export function apiKeyRoutes(router: Router, ctx: AppContext): void {
  router.get('api-keys', '/api-keys', (koa) => keysPage(koa, ctx));

  router.post('api-keys.create', '/api-keys', async (koa) => {
    const session = requireRoleFor(koa, 'createApiKey');
    const form = formOf(koa);
    try {
      const { body } = decodeForm<KeyRequest & { name: string }>(form, requestSchema('createApiKey'));
      // The form always sends a level per family; they mean something only for a restricted key.
      if (body.role !== 'restricted') delete body.scopes;
      checkContract('createApiKey', body);
      // The signed-in user creates the key: an admin (requireRoleFor), who holds every scope.
      const created = await createApiKey(actingAs(ctx, koa, session), accountOf(session), body, { role: session.user.role, scopes: null });
      ctx.log.info({ keyId: created.record.keyId, role: created.record.role, userId: session.user.userId }, 'API key created in the dashboard');
      render(koa, 'api-key-created', { title: 'API key created', nav: 'api-keys', key: created.record, secret: created.apiKey, baseUrl: ctx.config.publicBaseUrl });
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      await keysPage(koa, ctx, { values: submittedValues(form), errors: shown.fields, message: shown.message }, 400);
    }
  });

  router.get('api-keys.revoke-confirm', '/api-keys/:keyId/revoke', async (koa) => {
    const session = requireRoleFor(koa, 'revokeApiKey');
    const key = await getApiKey(ctx, accountOf(session), koa.params.keyId!);
    render(koa, 'api-key-revoke', { title: 'Revoke API key', nav: 'api-keys', key });
  });

  router.post('api-keys.revoke', '/api-keys/:keyId/revoke', async (koa) => {
    const session = requireRoleFor(koa, 'revokeApiKey');
    const revoked = await revokeApiKey(actingAs(ctx, koa, session), accountOf(session), koa.params.keyId!, { role: session.user.role, scopes: null });
    ctx.log.info({ keyId: revoked.keyId, userId: session.user.userId }, 'API key revoked in the dashboard');
    redirect(koa, '/dashboard/api-keys?done=revoked');
  });
}
