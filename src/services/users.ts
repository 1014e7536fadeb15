/**
 * The dashboard's people: sign-up (a new account with its first user, an admin), the team
 * (invitations, roles, removal) and the rules that hold it together: only admins manage the
 * team, and an account always keeps at least one admin.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { emailIssue, normalizeEmail } from '../domain/accounts/accountDetails.ts';
import { INVITATION_VALIDITY_MS, invitationClosedReason } from '../domain/users/invitations.ts';
import { passwordIssue } from '../domain/users/password.ts';
import { AppError, fail, throwIfIssues, type FieldIssue } from '../errors.ts';
import { newId } from '../ids.ts';
import { clientAddressKey } from '../domain/limits/clientAddress.ts';
import { attemptLimiter, type AttemptLimiter } from './rateLimits.ts';
import { lockAccount, type AccountRecord } from '../store/accounts.ts';
import {
  findInvitationByTokenHash,
  insertInvitation,
  listOpenInvitations,
  markInvitationAccepted,
  markInvitationRevoked,
  type InvitationRecord,
} from '../store/invitations.ts';
import type { SqlExecutor } from '../store/store.ts';
import {
  accountHasEmail,
  countAccountAdmins,
  deleteUser,
  emailTaken,
  findAccountUser,
  insertUser,
  listAccountUsers,
  setUserRole,
  type UserRecord,
  type UserRole,
} from '../store/users.ts';
import { openAccount, type CreatedApiKey } from './accounts.ts';
import { hashPassword } from './passwords.ts';
import { recordAudit } from './audit.ts';

export type { InvitationRecord } from '../store/invitations.ts';
export type { UserRecord, UserRole } from '../store/users.ts';

export const USER_ROLES: readonly UserRole[] = ['admin', 'member'];

function emailTakenError(): AppError {
  return fail.conflict('email_taken', 'A user with this email already exists; sign in instead, or use another email.', {
    errors: [{ pointer: '/email', message: 'already belongs to a user' }],
  });
}

/** Only admins manage the team and the integrations. */
export function requireAdmin(actor: UserRecord, what: string): void {
  if (actor.role !== 'admin') throw fail.forbidden(`Only an admin can ${what}; your role is ${actor.role}.`);
}

export interface SignedUp {
  account: AccountRecord;
  user: UserRecord;
  /** The account's first API key (an admin key), shown to the new user once. */
  firstKey: CreatedApiKey;
}

/** The sign-up limit of this process (its counts are shared by every instance on PostgreSQL). */
export function signUpLimit(ctx: AppContext): AttemptLimiter {
  return attemptLimiter(ctx, ctx.config.dashboard.signUpsPerAddressPerMinute);
}

/**
 * A new account (opened by the same use case as the operator's `account create`) whose first user
 * is its admin, in one transaction. 400 with pointers `/name`, `/email`, `/password`; 409 `email_taken`.
 * Every attempt counts against the client's address first, succeeded or not (each costs a
 * memory-hard hash and may open an account): past the limit, 429 `sign_up_rate_limited`.
 */
export async function signUp(
  ctx: AppContext,
  limit: AttemptLimiter,
  input: { name: string; email: string; password: string; clientAddress: string | undefined },
): Promise<SignedUp> {
  const attempt = await limit.take(`sign-up:address:${clientAddressKey(input.clientAddress)}`);
  if (!attempt.allowed) {
    throw fail.rateLimited('sign_up_rate_limited', `Too many sign-ups from your address; try again in ${attempt.retryAfterSeconds} seconds.`, attempt.retryAfterSeconds);
  }
  const email = normalizeEmail(input.email);
  const password = passwordIssue(input.password);
  throwIfIssues(password ? [{ pointer: '/password', message: password }] : []);
  const passwordHash = await hashPassword(input.password);
  return ctx.store.transaction(async (tx) => {
    const { account, firstKey } = await openAccount(tx, ctx, { name: input.name, email });
    if (await emailTaken(tx, email)) throw emailTakenError();
    const user: UserRecord = { userId: newId('usr'), accountId: account.accountId, email, role: 'admin', createdAt: account.createdAt };
    await insertUser(tx, user, passwordHash);
    await recordAudit(tx, ctx, {
      accountId: account.accountId,
      action: 'account.created',
      target: { type: 'account', id: account.accountId },
      change: { before: null, after: { name: account.name, email: account.email } },
      actor: { type: 'user', id: user.userId, name: user.email },
    });
    return { account, user, firstKey };
  });
}

export interface Team {
  users: UserRecord[];
  /** Invitations still open (not used, withdrawn or lapsed). */
  invitations: InvitationRecord[];
}

export async function getTeam(ctx: AppContext, accountId: string): Promise<Team> {
  const now = ctx.clock.now().toISOString();
  return ctx.store.read(async (db) => ({ users: await listAccountUsers(db, accountId), invitations: await listOpenInvitations(db, accountId, now) }));
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * An admin invites someone by email with a role. Returns the invitation and its token, the secret
 * part of the one-time link: it is shown once and only its hash is kept. Valid 7 days. There is no
 * outgoing email: the admin passes the link on. The answer is the same whether or not the email
 * belongs to a user of another account; acceptance refuses an email that already has a user.
 */
export async function inviteUser(
  ctx: AppContext,
  actor: UserRecord,
  input: { email: string; role: string },
): Promise<{ invitation: InvitationRecord; token: string }> {
  requireAdmin(actor, 'invite people');
  const email = normalizeEmail(input.email);
  const issues: FieldIssue[] = [];
  const badEmail = emailIssue(email);
  if (badEmail) issues.push({ pointer: '/email', message: badEmail });
  if (!(USER_ROLES as readonly string[]).includes(input.role)) issues.push({ pointer: '/role', message: 'must be one of: "admin", "member"' });
  throwIfIssues(issues);
  const token = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  const invitation: InvitationRecord = {
    invitationId: newId('inv'),
    accountId: actor.accountId,
    email,
    role: input.role as UserRole,
    invitedBy: actor.userId,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + INVITATION_VALIDITY_MS).toISOString(),
    acceptedAt: null,
    revokedAt: null,
  };
  await ctx.store.transaction(async (tx) => {
    // Only this account's own users are looked at: whether the email belongs to a user of another
    // organisation is not the inviting admin's to learn (a user with it cannot accept, and is told so then).
    if (await accountHasEmail(tx, actor.accountId, email)) {
      throw fail.conflict('already_a_member', 'This email is already a user of this account.', { errors: [{ pointer: '/email', message: 'is already a user of this account' }] });
    }
    await insertInvitation(tx, invitation, tokenHash(token));
    await recordAudit(tx, ctx, {
      accountId: actor.accountId,
      action: 'team.invitationCreated',
      target: { type: 'invitation', id: invitation.invitationId },
      change: { before: null, after: { email, role: invitation.role, expiresAt: invitation.expiresAt } },
    });
  });
  return { invitation, token };
}

async function openInvitation(db: SqlExecutor, token: string, now: number, forUpdate = false): Promise<InvitationRecord> {
  const invitation = await findInvitationByTokenHash(db, tokenHash(token), forUpdate);
  if (!invitation) throw fail.notFound('This invitation link is not valid; ask an admin of the account for a new one.', 'invitation_not_found');
  const closed = invitationClosedReason(invitation, now);
  if (closed) throw fail.refused('invitation_closed', `This invitation ${closed}; ask an admin of the account for a new one.`);
  return invitation;
}

/** The invitation a link's token opens, while it is open (404 or 422 `invitation_closed` otherwise). */
export async function findInvitation(ctx: AppContext, token: string): Promise<InvitationRecord> {
  return ctx.store.read((db) => openInvitation(db, token, ctx.clock.now().getTime()));
}

/** The invitee chooses a password and becomes a user of the account with the invited role; the link is used up. */
export async function acceptInvitation(ctx: AppContext, token: string, password: string): Promise<UserRecord> {
  await findInvitation(ctx, token); // a closed link is refused before the password is looked at
  const badPassword = passwordIssue(password);
  throwIfIssues(badPassword ? [{ pointer: '/password', message: badPassword }] : []);
  const passwordHash = await hashPassword(password);
  return ctx.store.transaction(async (tx) => {
    const now = ctx.clock.now();
    const invitation = await openInvitation(tx, token, now.getTime(), true);
    if (await emailTaken(tx, invitation.email)) throw emailTakenError();
    if (!(await markInvitationAccepted(tx, invitation.invitationId, now.toISOString()))) {
      throw fail.refused('invitation_closed', 'This invitation has already been used; ask an admin of the account for a new one.');
    }
    const user: UserRecord = { userId: newId('usr'), accountId: invitation.accountId, email: invitation.email, role: invitation.role, createdAt: now.toISOString() };
    await insertUser(tx, user, passwordHash);
    await recordAudit(tx, ctx, {
      accountId: user.accountId,
      action: 'team.invitationAccepted',
      target: { type: 'user', id: user.userId },
      change: { before: null, after: { email: user.email, role: user.role, invitationId: invitation.invitationId } },
      actor: { type: 'user', id: user.userId, name: user.email },
    });
    return user;
  });
}

export async function revokeInvitation(ctx: AppContext, actor: UserRecord, invitationId: string): Promise<void> {
  requireAdmin(actor, 'withdraw invitations');
  const done = await ctx.store.transaction(async (tx) => {
    if (!(await markInvitationRevoked(tx, actor.accountId, invitationId, ctx.clock.now().toISOString()))) return false;
    await recordAudit(tx, ctx, { accountId: actor.accountId, action: 'team.invitationRevoked', target: { type: 'invitation', id: invitationId } });
    return true;
  });
  if (!done) throw fail.notFound(`No open invitation ${invitationId} in this account.`);
}

function lastAdminError(what: string): AppError {
  return fail.refused('last_admin', `This is the account's last admin; make another user an admin before you ${what}.`);
}

/** An admin changes a user's role. The last admin cannot be demoted (409-like refusal, 422 `last_admin`). */
export async function changeUserRole(ctx: AppContext, actor: UserRecord, userId: string, role: string): Promise<UserRecord> {
  requireAdmin(actor, 'change roles');
  if (!(USER_ROLES as readonly string[]).includes(role)) throw fail.validation('/role must be admin or member', [{ pointer: '/role', message: 'must be one of: "admin", "member"' }]);
  return ctx.store.transaction(async (tx) => {
    // Role changes and removals of one account take turns (PostgreSQL), so two admins demoting each other cannot leave none.
    await lockAccount(tx, actor.accountId);
    const user = await findAccountUser(tx, actor.accountId, userId);
    if (!user) throw fail.notFound(`No user ${userId} in this account.`);
    if (user.role === 'admin' && role !== 'admin' && (await countAccountAdmins(tx, actor.accountId)) <= 1) throw lastAdminError('demote this one');
    await setUserRole(tx, userId, role as UserRole);
    await recordAudit(tx, ctx, {
      accountId: actor.accountId,
      action: 'team.roleChanged',
      target: { type: 'user', id: userId },
      change: { before: { email: user.email, role: user.role }, after: { email: user.email, role } },
    });
    return { ...user, role: role as UserRole };
  });
}

/** An admin removes a user (and ends their sessions). The last admin cannot be removed. */
export async function removeUser(ctx: AppContext, actor: UserRecord, userId: string): Promise<void> {
  requireAdmin(actor, 'remove users');
  await ctx.store.transaction(async (tx) => {
    await lockAccount(tx, actor.accountId);
    const user = await findAccountUser(tx, actor.accountId, userId);
    if (!user) throw fail.notFound(`No user ${userId} in this account.`);
    if (user.role === 'admin' && (await countAccountAdmins(tx, actor.accountId)) <= 1) throw lastAdminError('remove this one');
    await deleteUser(tx, userId);
    await recordAudit(tx, ctx, { accountId: actor.accountId, action: 'team.userRemoved', target: { type: 'user', id: userId }, change: { before: { email: user.email, role: user.role }, after: null } });
  });
}
