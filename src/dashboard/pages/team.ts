/**
 * Team: users and their roles, one-time invitation links (shown once), role changes and removal
 * (the last admin stays); who has two-step verification, an admin's reset of it, and the account's
 * requirement of it.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { changeUserRole, getTeam, inviteUser, removeUser, requireAdmin, revokeInvitation, USER_ROLES } from '../../services/users.ts';
import { resetUserMfa, setMfaRequirement, teamMfa } from '../../services/mfa.ts';
import { fail } from '../../errors.ts';
import { actingAs, formErrors, formOf, redirect, requireSession, submittedValues } from '../page.ts';
import { render } from '../render.ts';
import { setCookie, cookieNames } from '../security.ts';

const DONE: Record<string, string> = {
  role: 'The role is changed.',
  removed: 'The user is removed and signed out everywhere.',
  withdrawn: 'The invitation is withdrawn: its link no longer works.',
  'mfa-reset': "The user's two-step verification is reset and their sessions have ended; they set it up again when they next sign in (if the account requires it).",
  'mfa-required': 'Two-step verification is now required: users without it set it up before they can do anything else.',
  'mfa-optional': 'Two-step verification is no longer required; users who have it keep it.',
};

// The team belongs to the account the users signed up to, whatever environment (live or test) a
// page shows: its use cases take the acting user, whose account it is, not the environment's id,
// and refuse (403) an actor who is not an admin: the rule is theirs, not this page's.

async function teamPage(koa: Context, ctx: AppContext, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const session = requireSession(koa);
  const team = await getTeam(ctx, session.user.accountId);
  const mfa = await teamMfa(ctx, session.user.accountId);
  render(
    koa,
    'team',
    { title: 'Team', nav: 'team', team, mfa, roles: USER_ROLES, values: { '/role': 'member' }, errors: {}, message: null, done: DONE[String(koa.query.done)] ?? null, ...extra },
    status,
  );
}

export function teamRoutes(router: Router, ctx: AppContext): void {
  router.get('team', '/team', (koa) => teamPage(koa, ctx));

  router.post('team.invite', '/team/invitations', async (koa) => {
    const session = requireSession(koa);
    const form = formOf(koa);
    try {
      const { invitation, token } = await inviteUser(actingAs(ctx, koa, session), session.user, { email: form.get('/email') ?? '', role: form.get('/role') ?? '' });
      ctx.log.info({ invitationId: invitation.invitationId, role: invitation.role, userId: session.user.userId }, 'team invitation created');
      render(koa, 'invitation-created', { title: 'Invitation created', nav: 'team', invitation, link: `${ctx.config.publicBaseUrl}/dashboard/invitations/${token}` });
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      await teamPage(koa, ctx, { values: submittedValues(form), errors: shown.fields, message: shown.message }, 400);
    }
  });

  router.post('team.invitation.withdraw', '/team/invitations/:invitationId/withdraw', async (koa) => {
    const session = requireSession(koa);
    await revokeInvitation(actingAs(ctx, koa, session), session.user, koa.params.invitationId!);
    redirect(koa, '/dashboard/team?done=withdrawn');
  });

  router.post('team.role', '/team/users/:userId/role', async (koa) => {
    const session = requireSession(koa);
    await changeUserRole(actingAs(ctx, koa, session), session.user, koa.params.userId!, formOf(koa).get('/role') ?? '');
    redirect(koa, koa.params.userId === session.user.userId ? '/dashboard' : '/dashboard/team?done=role');
  });

  // Both ask for a fresh code first when the admin has a second factor (mfaGate.ts).
  router.post('team.mfa-reset', '/team/users/:userId/mfa-reset', async (koa) => {
    const session = requireSession(koa);
    const user = await resetUserMfa(actingAs(ctx, koa, session), session.user, koa.params.userId!);
    ctx.log.info({ userId: session.user.userId, targetUserId: user.userId }, "a user's second factor reset in the dashboard");
    redirect(koa, '/dashboard/team?done=mfa-reset');
  });

  router.post('team.mfa-requirement', '/team/mfa-requirement', async (koa) => {
    const session = requireSession(koa);
    const wanted = formOf(koa).get('/required');
    if (wanted !== 'true' && wanted !== 'false') throw fail.validation('Choose whether two-step verification is required.', [{ pointer: '/required', message: 'must be true or false' }]);
    await setMfaRequirement(actingAs(ctx, koa, session), session, wanted === 'true');
    ctx.log.info({ userId: session.user.userId, required: wanted === 'true' }, 'two-step verification requirement changed in the dashboard');
    redirect(koa, `/dashboard/team?done=${wanted === 'true' ? 'mfa-required' : 'mfa-optional'}`);
  });

  router.get('team.remove-confirm', '/team/users/:userId/remove', async (koa) => {
    const session = requireSession(koa);
    requireAdmin(session.user, 'remove users');
    const team = await getTeam(ctx, session.user.accountId);
    const user = team.users.find((u) => u.userId === koa.params.userId);
    if (!user) return; // 404
    render(koa, 'team-remove', { title: 'Remove user', nav: 'team', member: user, self: user.userId === session.user.userId });
  });

  router.post('team.remove', '/team/users/:userId/remove', async (koa) => {
    const session = requireSession(koa);
    await removeUser(actingAs(ctx, koa, session), session.user, koa.params.userId!);
    if (koa.params.userId === session.user.userId) {
      setCookie(koa, cookieNames(ctx.config.publicBaseUrl), 'session', null);
      return redirect(koa, '/dashboard/sign-in');
    }
    redirect(koa, '/dashboard/team?done=removed');
  });
}
