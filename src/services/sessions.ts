/**
 * Dashboard sign-in and sessions, after OWASP's Authentication and Session Management cheat
 * sheets: sessions live in the store (every instance sees them), are found by the hash of a
 * 256-bit random id, get a new id at every sign-in, end after an idle and an absolute timeout, and
 * are deleted at sign-out. Sign-in failures are limited per email and per client address; an
 * unknown email and a wrong password get the same answer after the same work.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { normalizeEmail } from '../domain/accounts/accountDetails.ts';
import { clientAddressKey } from '../domain/limits/clientAddress.ts';
import { absoluteExpiry, needsTouch, sessionIsLive, type SessionPolicy } from '../domain/users/sessions.ts';
import { fail } from '../errors.ts';
import {
  deleteEndedSessions,
  deleteSession,
  findSession,
  insertSession,
  renewSessionId,
  setSessionEnvironment,
  touchSession,
  type SessionEnvironment,
  type SessionMfa,
  type SessionRecord,
  type SessionStage,
} from '../store/sessions.ts';
import { userHasMfa } from '../store/mfa.ts';
import type { SqlExecutor } from '../store/store.ts';
import { findUserByEmail, setPasswordHash, type UserRecord } from '../store/users.ts';
import { hashPassword, spendPasswordCheck, verifyPassword } from './passwords.ts';
import { attemptLimiter, type AttemptLimiter, type CountedAttempt } from './rateLimits.ts';
import { recordAudit, recordAuditNow } from './audit.ts';

export interface ActiveSession {
  /** The id the cookie carries (never stored: the store keeps its hash). */
  sessionId: string;
  /** The synchronizer token every form of this session carries (OWASP CSRF cheat sheet). */
  csrfToken: string;
  user: UserRecord;
  expiresAt: string;
  /** The environment of the user's account the pages work in (live unless the user switched). */
  environment: SessionEnvironment;
  /** 'second_factor' until the code after the password is given: the session can do nothing else. */
  stage: SessionStage;
  /** When this session last checked the user's second factor, or null (sensitive actions ask again when stale). */
  secondFactorAt: string | null;
  mfa: SessionMfa;
}

const idHash = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

function sessionPolicy(ctx: AppContext): SessionPolicy {
  return { idleMs: ctx.config.dashboard.sessionIdleMinutes * 60_000, absoluteMs: ctx.config.dashboard.sessionAbsoluteHours * 3_600_000 };
}

/**
 * A new session for `user`, with a new random id; `replacing` (the session the browser had, if any)
 * is ended. A user with a second factor gets a session at the 'second_factor' stage: it opens
 * nothing until the code is given (checkSecondFactor in services/mfa.ts). `signedIn`: the user
 * signed in with a password (recorded in the audit log once the session is fully signed in; a
 * session started by sign-up or an accepted invitation is recorded as that).
 */
export async function startSession(ctx: AppContext, user: UserRecord, replacing?: string, signedIn = false): Promise<ActiveSession> {
  const sessionId = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  const base = {
    idHash: idHash(sessionId),
    userId: user.userId,
    csrfToken: randomBytes(32).toString('base64url'),
    createdAt: now.toISOString(),
    lastSeenAt: now.toISOString(),
    expiresAt: absoluteExpiry(now.getTime(), sessionPolicy(ctx)),
    environment: 'live' as const,
    secondFactorAt: null,
  };
  const found = await ctx.store.transaction(async (tx) => {
    if (replacing) await deleteSession(tx, idHash(replacing));
    const session: SessionRecord = { ...base, stage: (await userHasMfa(tx, user.userId)) ? 'second_factor' : 'signed_in' };
    await insertSession(tx, session);
    if (signedIn && session.stage === 'signed_in') {
      await recordAudit(tx, ctx, { accountId: user.accountId, action: 'user.signedIn', target: { type: 'user', id: user.userId }, actor: actorOf(user) });
    }
    return findSession(tx, session.idHash);
  });
  return activeSession(sessionId, found!);
}

function activeSession(sessionId: string, found: NonNullable<Awaited<ReturnType<typeof findSession>>>): ActiveSession {
  const { session, user, mfa } = found;
  return { sessionId, csrfToken: session.csrfToken, user, expiresAt: session.expiresAt, environment: session.environment, stage: session.stage, secondFactorAt: session.secondFactorAt, mfa };
}

/**
 * The session under a new random id and CSRF token, in the caller's transaction, read back as it now
 * stands: at every change of privilege (OWASP: renew the session id), so an id planted or seen
 * before it (and the forms of its pages) opens nothing after. 401 when the session ended meanwhile.
 */
export async function renewSession(tx: SqlExecutor, session: ActiveSession): Promise<ActiveSession> {
  const sessionId = randomBytes(32).toString('base64url');
  const renewed = { idHash: idHash(sessionId), csrfToken: randomBytes(32).toString('base64url') };
  const found = (await renewSessionId(tx, idHash(session.sessionId), renewed)) === 1 ? await findSession(tx, renewed.idHash) : undefined;
  if (!found) throw fail.unauthenticated('This session has ended; sign in again.');
  return activeSession(sessionId, found);
}

/** The SHA-256 of a session id, as the store keys sessions. */
export function sessionIdHash(sessionId: string): string {
  return idHash(sessionId);
}

/** The live session a cookie's id names, or null (unknown, ended by time, or signed out). */
export async function resumeSession(ctx: AppContext, sessionId: string): Promise<ActiveSession | null> {
  if (sessionId.length === 0 || sessionId.length > 100) return null;
  const hash = idHash(sessionId);
  const found = await ctx.store.read((db) => findSession(db, hash));
  if (!found) return null;
  const now = ctx.clock.now();
  if (!sessionIsLive(found.session, now.getTime(), sessionPolicy(ctx))) {
    await ctx.store.transaction((tx) => deleteSession(tx, hash));
    return null;
  }
  if (needsTouch(found.session, now.getTime())) await ctx.store.transaction((tx) => touchSession(tx, hash, now.toISOString()));
  return activeSession(sessionId, found);
}

/** Switches the pages of a session to the account's live or test data. */
export async function switchEnvironment(ctx: AppContext, session: ActiveSession, environment: SessionEnvironment): Promise<ActiveSession> {
  await ctx.store.transaction((tx) => setSessionEnvironment(tx, idHash(session.sessionId), environment));
  return { ...session, environment };
}

/** Signs out: the session ends (recorded in the audit log when `user`, its user, is given). */
export async function endSession(ctx: AppContext, sessionId: string, user?: UserRecord): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    await deleteSession(tx, idHash(sessionId));
    if (user) await recordAudit(tx, ctx, { accountId: user.accountId, action: 'user.signedOut', target: { type: 'user', id: user.userId }, actor: actorOf(user) });
  });
}

const actorOf = (user: UserRecord) => ({ type: 'user' as const, id: user.userId, name: user.email });

/** Deletes the sessions that ended (background work); returns how many. */
export async function sweepSessions(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const idleBefore = new Date(now.getTime() - sessionPolicy(ctx).idleMs).toISOString();
  return ctx.store.transaction((tx) => deleteEndedSessions(tx, now.toISOString(), idleBefore));
}

/** The same words for an unknown email and a wrong password, so the answer tells nothing about which. */
const SIGN_IN_FAILED = 'The email or the password is not correct.';

export interface SignInLimits {
  perEmailAndAddress: AttemptLimiter;
  perAddress: AttemptLimiter;
  perEmail: AttemptLimiter;
}

/** The sign-in limits of this process (their counts are shared by every instance on PostgreSQL). */
export function signInLimits(ctx: AppContext): SignInLimits {
  return {
    perEmailAndAddress: attemptLimiter(ctx, ctx.config.dashboard.signInFailuresPerEmailAndAddressPerMinute),
    perAddress: attemptLimiter(ctx, ctx.config.dashboard.signInFailuresPerAddressPerMinute),
    perEmail: attemptLimiter(ctx, ctx.config.dashboard.signInFailuresPerEmailPerMinute),
  };
}

/**
 * Takes an attempt from each limiter in order, stopping at the first that refuses: the ones taken
 * before it are given back and the answer is 429 `sign_in_rate_limited`.
 */
export async function takeInTurn(buckets: ReadonlyArray<readonly [AttemptLimiter, string]>): Promise<CountedAttempt[]> {
  const taken: CountedAttempt[] = [];
  for (const [limiter, bucket] of buckets) {
    const attempt = await limiter.take(bucket);
    if (!attempt.allowed) {
      await Promise.all(taken.map((earlier) => earlier.release()));
      const seconds = attempt.retryAfterSeconds;
      throw fail.rateLimited('sign_in_rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds.`, seconds);
    }
    taken.push(attempt);
  }
  return taken;
}

/** The sign-in limits' buckets for an email from a client address: a password and a second factor count against the same ones. */
export function signInBuckets(limits: SignInLimits, email: string, clientAddress: string | undefined): Array<readonly [AttemptLimiter, string]> {
  const address = clientAddressKey(clientAddress);
  return [
    [limits.perEmailAndAddress, `sign-in:email-address:${email}|${address}`],
    [limits.perAddress, `sign-in:address:${address}`],
    [limits.perEmail, `sign-in:email:${email}`],
  ];
}

/**
 * Checks an email and password and starts a session. Each attempt is counted before the password
 * is looked at, and given back when it succeeds: against the email from this address, against the
 * address, then against the email's ceiling from every address. An attempt refused by one limit
 * counts against none of the later ones, so a stranger held at their own address's limits cannot
 * push the owner's email to its ceiling. Past any limit the answer is 429 `sign_in_rate_limited`
 * whether the email exists or not. Failures are 401 with SIGN_IN_FAILED after one password check in
 * every case.
 */
export async function signIn(
  ctx: AppContext,
  limits: SignInLimits,
  input: { email: string; password: string; clientAddress: string | undefined; replacing?: string | undefined },
): Promise<ActiveSession> {
  const email = normalizeEmail(input.email);
  const counted = await takeInTurn(signInBuckets(limits, email, input.clientAddress));
  const found = email.length <= 254 && input.password.length <= 1024 ? await ctx.store.read((db) => findUserByEmail(db, email)) : undefined;
  const check = found ? await verifyPassword(input.password, found.passwordHash) : await spendPasswordCheck(input.password).then(() => null);
  if (!found || !check?.matches) {
    // A wrong password for a user is an attempt on their account, recorded there (an unknown email
    // has no account to record in). Not waited for: the answer must take as long as for an unknown
    // email, or its timing would tell which emails have users.
    if (found) {
      const attempt = { accountId: found.user.accountId, action: 'user.signInFailed', target: { type: 'user', id: found.user.userId }, outcome: 'failure', actor: actorOf(found.user) } as const;
      recordAuditNow(ctx, attempt).catch((err: unknown) => ctx.log.warn({ err, userId: found.user.userId }, 'could not record a failed sign-in'));
    }
    throw fail.unauthenticated(SIGN_IN_FAILED);
  }
  await Promise.all(counted.map((attempt) => attempt.release()));
  if (check.rehash) {
    const rehashed = await hashPassword(input.password);
    await ctx.store.transaction((tx) => setPasswordHash(tx, found.user.userId, rehashed));
  }
  return startSession(ctx, found.user, input.replacing, true);
}
