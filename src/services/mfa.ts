/**
 * The dashboard's second factor (issue 27): TOTP (RFC 6238) enrolled from a QR code and confirmed
 * by a first code, ten one-time recovery codes, the code after the password at sign-in, fresh codes
 * for sensitive actions (step-up), the account's requirement and an admin's reset.
 *
 * Every code check, wrong or right, is counted against the sign-in limits of the user's email and
 * the client's address before it is looked at (as a password is), and given back when it succeeds:
 * six digits cannot be guessed faster than passwords can.
 *
 * Recovery codes are kept as SHA-256 of the user's id and the code, not as scrypt: each code has 80
 * random bits, so a stolen table is no shortcut however fast the hash (2^80 guesses per code), the
 * same reasoning as the API keys' SHA-256; scrypt's cost is for the low entropy of passwords.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { AppContext } from '../context.ts';
import {
  formatRecoveryCode,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
  stepIsNew,
  TOTP_DIGITS,
  TOTP_PERIOD_MS,
  TOTP_WINDOW,
  totpCodeOf,
  totpStepAt,
  verificationIsFresh,
} from '../domain/users/mfa.ts';
import { fail, isAppError } from '../errors.ts';
import {
  accountRequiresMfa,
  claimTotpStep,
  clearUserMfa,
  confirmPendingSecret,
  countUnusedRecoveryCodes,
  findUserMfa,
  listEnrolledUserIds,
  replaceRecoveryCodes,
  setAccountMfaRequired,
  setPendingSecret,
  useRecoveryCode,
} from '../store/mfa.ts';
import { deleteUserSessions, markSecondFactorChecked } from '../store/sessions.ts';
import type { SqlExecutor } from '../store/store.ts';
import { findAccountUser, findUserByEmail, type UserRecord } from '../store/users.ts';
import { normalizeEmail } from '../domain/accounts/accountDetails.ts';
import { renewSession, sessionIdHash, signInBuckets, takeInTurn, type ActiveSession, type SignInLimits } from './sessions.ts';
import { requireAdmin } from './users.ts';
import { recordAudit, recordAuditNow } from './audit.ts';

/** The name authenticator apps show beside the user's email. */
const ISSUER = 'Mortgage Origination';

function totpFor(secret: string, label: string): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD_MS / 1000, secret: Secret.fromBase32(secret) });
}

/** Whether the session must give a code before a sensitive action: its user has a factor, last checked too long ago. */
export function needsStepUp(session: ActiveSession, now: Date): boolean {
  return session.mfa.enrolled && !verificationIsFresh(session.secondFactorAt, now.getTime());
}

/** Whether the user must enrol before anything else: the account requires a second factor they do not have. */
export function needsEnrolment(session: ActiveSession): boolean {
  return session.mfa.required && !session.mfa.enrolled;
}

export interface Enrolment {
  /** The secret in base32, for people who type it instead of scanning. */
  secret: string;
  /** The otpauth:// URI the QR code holds. */
  uri: string;
  /** The QR code as an SVG image in a data: URI (drawn here: no outside service sees the secret). */
  qrCode: string;
}

async function enrolmentOf(secret: string, email: string): Promise<Enrolment> {
  const uri = totpFor(secret, email).toString();
  // Loaded on first use: the admin command line, which imports this file, never draws one.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, uri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

export interface SecurityStatus {
  enrolled: boolean;
  enrolledAt: string | null;
  recoveryCodesLeft: number;
  /** The account requires a second factor of everyone. */
  required: boolean;
  /** An enrolment started and not confirmed yet (its QR code), or null. */
  pending: Enrolment | null;
}

export async function securityStatus(ctx: AppContext, session: ActiveSession): Promise<SecurityStatus> {
  const { mfa, left, required } = await ctx.store.read(async (db) => ({
    mfa: await findUserMfa(db, session.user.userId),
    left: await countUnusedRecoveryCodes(db, session.user.userId),
    required: await accountRequiresMfa(db, session.user.accountId),
  }));
  const enrolled = Boolean(mfa?.secret);
  return {
    enrolled,
    enrolledAt: mfa?.enrolledAt ?? null,
    recoveryCodesLeft: left,
    required,
    pending: !enrolled && mfa?.pendingSecret ? await enrolmentOf(mfa.pendingSecret, session.user.email) : null,
  };
}

/** Starts (or starts over) an enrolment: a new random 160-bit secret (RFC 4226's recommended length), kept sealed until a code confirms it. */
export async function startEnrolment(ctx: AppContext, session: ActiveSession): Promise<Enrolment> {
  const secret = new Secret({ size: 20 }).base32;
  await ctx.store.transaction(async (tx) => {
    if ((await findUserMfa(tx, session.user.userId))?.secret) throw alreadyEnrolled();
    await setPendingSecret(tx, session.user.userId, secret);
  });
  return enrolmentOf(secret, session.user.email);
}

function alreadyEnrolled() {
  return fail.conflict('mfa_already_enrolled', 'Two-step verification is already on for you; turn it off first to set up another app.');
}

const wrongCode = () =>
  fail.validation('The code is not correct; enter the 6-digit code your app shows now, or one of your recovery codes.', [{ pointer: '/code', message: 'is not correct' }]);
const USED = 'has been used already';
const usedCode = () => fail.validation('This code has been used already; wait for the next one your app shows.', [{ pointer: '/code', message: USED }]);

/** Why a code was asked for: the audit log's `mfa.failed` entries say which. */
type CodePurpose = 'signIn' | 'stepUp' | 'enrolment' | 'recoveryCodes' | 'disable';

/** The user as the actor of what they do with their own factor (whatever ctx.origin says). */
const userActor = (user: UserRecord) => ({ type: 'user' as const, id: user.userId, name: user.email });
const userTarget = (user: UserRecord) => ({ type: 'user', id: user.userId });

/**
 * Counts a code check against the sign-in limits, runs it, and gives the attempt back when it
 * succeeds. A wrong or replayed code (400) is recorded in the audit log as `mfa.failed`, in a
 * transaction of its own: the failure is kept although the request fails. (A check refused by the
 * limits, 429, looked at no code and is not recorded.)
 */
async function countedCheck<T>(ctx: AppContext, limits: SignInLimits, session: ActiveSession, clientAddress: string | undefined, purpose: CodePurpose, check: () => Promise<T>): Promise<T> {
  const counted = await takeInTurn(signInBuckets(limits, session.user.email, clientAddress));
  let result: T;
  try {
    result = await check();
  } catch (err) {
    if (isAppError(err) && err.kind === 'invalid') {
      const reason = err.facts.errors?.[0]?.message === USED ? 'replayed' : 'wrong';
      await recordAuditNow(ctx, {
        accountId: session.user.accountId,
        action: 'mfa.failed',
        target: userTarget(session.user),
        outcome: 'failure',
        actor: userActor(session.user),
        change: { after: { purpose, reason } },
      }).catch((recordErr: unknown) => ctx.log.warn({ err: recordErr, userId: session.user.userId }, 'could not record a failed second-factor code'));
    }
    throw err;
  }
  await Promise.all(counted.map((attempt) => attempt.release()));
  return result;
}

/** Ten new recovery codes for the user (the earlier ones stop working); returns them, to be shown once. */
async function issueRecoveryCodes(tx: SqlExecutor, userId: string, now: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => formatRecoveryCode(randomBytes(16)));
  await replaceRecoveryCodes(tx, userId, codes.map((code) => recoveryCodeHash(userId, normalizeRecoveryCode(code)!)), now);
  return codes;
}

const recoveryCodeHash = (userId: string, normalized: string) => createHash('sha256').update(`${userId}:${normalized}`).digest('hex');

/**
 * Confirms the pending enrolment with a first code from the app: the secret becomes the user's
 * factor, the session counts as checked now (under a new id and CSRF token: renewed), the user's
 * other sessions end, and ten recovery codes are returned (shown once).
 */
export async function confirmEnrolment(
  ctx: AppContext,
  limits: SignInLimits,
  session: ActiveSession,
  typed: string,
  clientAddress: string | undefined,
): Promise<{ codes: string[]; session: ActiveSession }> {
  return countedCheck(ctx, limits, session, clientAddress, 'enrolment', () =>
    ctx.store.transaction(async (tx) => {
      const now = ctx.clock.now();
      const mfa = await findUserMfa(tx, session.user.userId);
      if (mfa?.secret) throw alreadyEnrolled();
      if (!mfa?.pendingSecret) throw fail.conflict('mfa_enrolment_not_started', 'Start the set-up first: the page shows a QR code to scan, then asks for a code.');
      const code = totpCodeOf(typed);
      const delta = code === null ? null : totpFor(mfa.pendingSecret, session.user.email).validate({ token: code, timestamp: now.getTime(), window: TOTP_WINDOW });
      if (delta === null) throw fail.validation('The code is not correct; enter the 6-digit code your app shows for this account now.', [{ pointer: '/code', message: 'is not correct' }]);
      if (!(await confirmPendingSecret(tx, session.user.userId, totpStepAt(now.getTime()) + delta, now.toISOString()))) throw alreadyEnrolled();
      await markSecondFactorChecked(tx, sessionIdHash(session.sessionId), now.toISOString());
      // The user's other sessions began on the password alone: they end, so none keeps going without the factor.
      await deleteUserSessions(tx, session.user.userId, sessionIdHash(session.sessionId));
      const codes = await issueRecoveryCodes(tx, session.user.userId, now.toISOString());
      await recordAudit(tx, ctx, { accountId: session.user.accountId, action: 'mfa.enrolled', target: userTarget(session.user), actor: userActor(session.user) });
      return { codes, session: await renewSession(tx, session) };
    }),
  );
}

export type SecondFactorMethod = 'totp' | 'recovery_code';

/**
 * Checks a code typed by the session's user: six digits are a TOTP code (of a step not used yet),
 * anything else a recovery code (used up by this check). The session then counts as checked now,
 * under a new id and CSRF token (returned: the old id opens nothing): a session waiting for its
 * second factor is signed in, and sensitive actions are open for a while.
 * 400 with pointer `/code` for a wrong or replayed code (counted against the sign-in limits, and
 * recorded as `mfa.failed`), 429 past them. Recorded too: `user.signedIn` when the session was
 * waiting for this code, `mfa.recoveryCodeUsed` when a recovery code was used.
 */
export async function checkSecondFactor(
  ctx: AppContext,
  limits: SignInLimits,
  session: ActiveSession,
  typed: string,
  clientAddress: string | undefined,
  purpose: CodePurpose = session.stage === 'second_factor' ? 'signIn' : 'stepUp',
): Promise<{ method: SecondFactorMethod; session: ActiveSession }> {
  return countedCheck(ctx, limits, session, clientAddress, purpose, () =>
    ctx.store.transaction(async (tx) => {
      const now = ctx.clock.now();
      const mfa = await findUserMfa(tx, session.user.userId);
      if (!mfa?.secret) throw fail.conflict('mfa_not_enrolled', 'Two-step verification is not on for you.');
      const code = totpCodeOf(typed);
      let method: SecondFactorMethod;
      if (code !== null) {
        const delta = totpFor(mfa.secret, session.user.email).validate({ token: code, timestamp: now.getTime(), window: TOTP_WINDOW });
        if (delta === null) throw wrongCode();
        const step = totpStepAt(now.getTime()) + delta;
        if (!stepIsNew(step, mfa.lastStep) || !(await claimTotpStep(tx, session.user.userId, step))) throw usedCode();
        method = 'totp';
      } else {
        const normalized = typed.length <= 64 ? normalizeRecoveryCode(typed) : null;
        if (normalized === null || !(await useRecoveryCode(tx, session.user.userId, recoveryCodeHash(session.user.userId, normalized), now.toISOString()))) throw wrongCode();
        method = 'recovery_code';
      }
      await markSecondFactorChecked(tx, sessionIdHash(session.sessionId), now.toISOString());
      const audited = { accountId: session.user.accountId, target: userTarget(session.user), actor: userActor(session.user) };
      if (method === 'recovery_code') await recordAudit(tx, ctx, { ...audited, action: 'mfa.recoveryCodeUsed', change: { after: { purpose } } });
      if (session.stage === 'second_factor') await recordAudit(tx, ctx, { ...audited, action: 'user.signedIn', change: { after: { secondFactor: method } } });
      return { method, session: await renewSession(tx, session) };
    }),
  );
}

/**
 * New recovery codes (the old ones stop working), after a code checked now; returns them, to be
 * shown once, and the session renewed by the check.
 */
export async function regenerateRecoveryCodes(
  ctx: AppContext,
  limits: SignInLimits,
  session: ActiveSession,
  typed: string,
  clientAddress: string | undefined,
): Promise<{ codes: string[]; session: ActiveSession }> {
  const checked = await checkSecondFactor(ctx, limits, session, typed, clientAddress, 'recoveryCodes');
  return ctx.store.transaction(async (tx) => {
    const codes = await issueRecoveryCodes(tx, session.user.userId, ctx.clock.now().toISOString());
    await recordAudit(tx, ctx, { accountId: session.user.accountId, action: 'mfa.recoveryCodesRegenerated', target: userTarget(session.user), actor: userActor(session.user) });
    return { codes, session: checked.session };
  });
}

/**
 * The user turns their second factor off, after a code checked now; their other sessions end.
 * Refused (422 `mfa_required`) while the account requires it. Returns the session renewed by the check.
 */
export async function disableMfa(ctx: AppContext, limits: SignInLimits, session: ActiveSession, typed: string, clientAddress: string | undefined): Promise<ActiveSession> {
  if (await ctx.store.read((db) => accountRequiresMfa(db, session.user.accountId))) throw requiredError();
  const { session: renewed } = await checkSecondFactor(ctx, limits, session, typed, clientAddress, 'disable');
  await ctx.store.transaction(async (tx) => {
    if (await accountRequiresMfa(tx, session.user.accountId)) throw requiredError();
    await clearUserMfa(tx, session.user.userId);
    await deleteUserSessions(tx, session.user.userId, sessionIdHash(renewed.sessionId));
    await recordAudit(tx, ctx, { accountId: session.user.accountId, action: 'mfa.disabled', target: userTarget(session.user), actor: userActor(session.user) });
  });
  return { ...renewed, mfa: { ...renewed.mfa, enrolled: false } };
}

function requiredError() {
  return fail.refused('mfa_required', 'Your account requires two-step verification of everyone, so it cannot be turned off; an admin can lift the requirement.');
}

/** The account's requirement and which of its users have a second factor (the team page). */
export async function teamMfa(ctx: AppContext, accountId: string): Promise<{ required: boolean; enrolled: Set<string> }> {
  return ctx.store.read(async (db) => ({ required: await accountRequiresMfa(db, accountId), enrolled: await listEnrolledUserIds(db, accountId) }));
}

/**
 * An admin requires (or stops requiring) a second factor of every user of the account. Users
 * without one are sent to enrolment by every page until they have one. To require it, the admin
 * needs one first (422 `mfa_not_enrolled`).
 */
export async function setMfaRequirement(ctx: AppContext, session: ActiveSession, required: boolean): Promise<void> {
  requireAdmin(session.user, 'change the two-step verification requirement');
  if (required && !session.mfa.enrolled) {
    throw fail.refused('mfa_not_enrolled', 'Turn on two-step verification for yourself first (Security page), then require it of everyone.');
  }
  await ctx.store.transaction(async (tx) => {
    const before = await accountRequiresMfa(tx, session.user.accountId);
    if (before === required) return; // nothing changes, nothing is recorded
    await setAccountMfaRequired(tx, session.user.accountId, required);
    await recordAudit(tx, ctx, {
      accountId: session.user.accountId,
      action: 'account.mfaRequirementChanged',
      target: { type: 'account', id: session.user.accountId },
      change: { before: { mfaRequired: before }, after: { mfaRequired: required } },
    });
  });
}

/**
 * An admin removes another user's second factor (a lost phone and no recovery code left): their
 * recovery codes go too and their sessions end. When the account requires a factor, they set up a
 * new one at their next sign-in. Their own is turned off on the Security page, with a code.
 */
export async function resetUserMfa(ctx: AppContext, actor: UserRecord, userId: string): Promise<UserRecord> {
  requireAdmin(actor, "reset another user's two-step verification");
  if (userId === actor.userId) throw fail.refused('mfa_reset_self', 'Turn off your own two-step verification on the Security page (it asks for a code).');
  return ctx.store.transaction(async (tx) => {
    const user = await findAccountUser(tx, actor.accountId, userId);
    if (!user) throw fail.notFound(`No user ${userId} in this account.`);
    await clearUserMfa(tx, userId);
    await deleteUserSessions(tx, userId);
    await recordAudit(tx, ctx, { accountId: actor.accountId, action: 'mfa.reset', target: userTarget(user), change: { after: { email: user.email } } });
    return user;
  });
}

/**
 * The operator's reset (`admin user reset-mfa --email`), for the account whose only admin has lost
 * both the phone and the recovery codes: as an admin's reset, by email, for any user.
 */
export async function resetMfaByOperator(ctx: AppContext, email: string): Promise<UserRecord> {
  return ctx.store.transaction(async (tx) => {
    const found = await findUserByEmail(tx, normalizeEmail(email));
    if (!found) throw fail.notFound(`No dashboard user has the email ${JSON.stringify(email)}.`);
    await clearUserMfa(tx, found.user.userId);
    await deleteUserSessions(tx, found.user.userId);
    await recordAudit(tx, ctx, { accountId: found.user.accountId, action: 'mfa.reset', target: userTarget(found.user), change: { after: { email: found.user.email } } });
    return found.user;
  });
}
