/**
 * Security (every user, for themselves): set up two-step verification from a QR code and a first
 * code, see how many recovery codes are left, make new ones, turn it off. The new recovery codes are
 * in the answer of the form that made them, only: they are never shown again.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { isAppError } from '../../errors.ts';
import { confirmEnrolment, disableMfa, regenerateRecoveryCodes, securityStatus, startEnrolment } from '../../services/mfa.ts';
import type { SignInLimits } from '../../services/sessions.ts';
import { actingAs, formErrors, formOf, holdSession, redirect, requireSession } from '../page.ts';
import { render } from '../render.ts';

const DONE: Record<string, string> = {
  disabled: 'Two-step verification is off: signing in asks for your password only, and your other sessions have ended.',
};

type FormName = 'confirm' | 'regenerate' | 'disable';

async function securityPage(koa: Context, ctx: AppContext, failed: { form: FormName; message: string; errors: Record<string, string> } | null = null, status = 200): Promise<void> {
  const session = requireSession(koa);
  const security = await securityStatus(ctx, session);
  render(koa, 'security', { title: 'Security', nav: 'security', security, failed, errors: {}, done: DONE[String(koa.query.done)] ?? null }, status);
}

/** A wrong code (400), or too many (429), is shown on the page beside the form it was typed in; other errors get the error page. */
function codeFailure(koa: Context, err: unknown, form: FormName): { failed: { form: FormName; message: string; errors: Record<string, string> }; status: number } {
  if (!isAppError(err)) throw err;
  if (err.kind === 'rate_limited') {
    if (err.retryAfterSeconds !== undefined) koa.set('Retry-After', String(err.retryAfterSeconds));
    return { failed: { form, message: err.detail, errors: {} }, status: 429 };
  }
  const shown = formErrors(err);
  if (!shown) throw err;
  return { failed: { form, message: shown.message, errors: shown.fields }, status: err.kind === 'invalid' ? 400 : 422 };
}

export function securityRoutes(router: Router, ctx: AppContext, limits: SignInLimits): void {
  router.get('security', '/security', (koa) => securityPage(koa, ctx));

  router.post('security.enrol', '/security/enrol', async (koa) => {
    await startEnrolment(ctx, requireSession(koa));
    redirect(koa, '/dashboard/security#set-up');
  });

  router.post('security.enrol.confirm', '/security/enrol/confirm', async (koa) => {
    const session = requireSession(koa);
    try {
      const { codes, session: renewed } = await confirmEnrolment(actingAs(ctx, koa, session), limits, session, formOf(koa).get('/code') ?? '', koa.request.ip);
      holdSession(koa, ctx, renewed);
      ctx.log.info({ userId: session.user.userId }, 'second factor enrolled in the dashboard');
      render(koa, 'recovery-codes', { title: 'Your recovery codes', nav: 'security', codes, enrolled: true });
    } catch (err) {
      const { failed, status } = codeFailure(koa, err, 'confirm');
      await securityPage(koa, ctx, failed, status);
    }
  });

  router.post('security.recovery-codes', '/security/recovery-codes', async (koa) => {
    const session = requireSession(koa);
    try {
      const { codes, session: renewed } = await regenerateRecoveryCodes(actingAs(ctx, koa, session), limits, session, formOf(koa).get('/code') ?? '', koa.request.ip);
      holdSession(koa, ctx, renewed);
      ctx.log.info({ userId: session.user.userId }, 'recovery codes regenerated in the dashboard');
      render(koa, 'recovery-codes', { title: 'Your new recovery codes', nav: 'security', codes, enrolled: false });
    } catch (err) {
      const { failed, status } = codeFailure(koa, err, 'regenerate');
      await securityPage(koa, ctx, failed, status);
    }
  });

  router.post('security.disable', '/security/disable', async (koa) => {
    const session = requireSession(koa);
    try {
      holdSession(koa, ctx, await disableMfa(actingAs(ctx, koa, session), limits, session, formOf(koa).get('/code') ?? '', koa.request.ip));
      ctx.log.info({ userId: session.user.userId }, 'second factor turned off in the dashboard');
      redirect(koa, '/dashboard/security?done=disabled');
    } catch (err) {
      const { failed, status } = codeFailure(koa, err, 'disable');
      await securityPage(koa, ctx, failed, status);
    }
  });
}
