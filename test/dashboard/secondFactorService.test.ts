/**
 * The second factor's use cases (src/services/mfa.ts) called as the dashboard's pages call them,
 * on sessions made over HTTP: what each refuses and with which answer (the page shows its detail,
 * the field its pointer), the step a code confirmed being used up, turning the factor off while
 * the account requires it (also when the requirement arrives during the code's check), and a
 * session that ended while its code was checked staying ended. The pages over HTTP: mfa.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.ts';
import { isAppError } from '../../src/errors.ts';
import { checkSecondFactor, confirmEnrolment, disableMfa, securityStatus, startEnrolment } from '../../src/services/mfa.ts';
import { endSession, resumeSession, signInLimits, type ActiveSession, type SignInLimits } from '../../src/services/sessions.ts';
import { setAccountMfaRequired } from '../../src/store/mfa.ts';
import type { Store } from '../../src/store/store.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { signUpWith } from './httpClient.ts';
import { codeAt, PASSWORD } from './secondFactor.ts';

const clock = manualClock(Date.parse('2026-11-02T09:00:15Z'));
const nextStep = () => clock.advance(30_000);
let app: TestApp;
let ctx: AppContext;
let limits: SignInLimits;
let people = 0;

/** A new account's admin, signed up over HTTP; the session as the dashboard resumes it from the cookie. */
async function newUser(): Promise<ActiveSession> {
  people += 1;
  const { client } = await signUpWith(app.baseUrl, { name: `Lender ${people}`, email: `user${people}@lender${people}.test`, password: PASSWORD });
  return (await resumeSession(ctx, client.cookies.get('mos_session')!))!;
}

/** The error `act` fails with (failing the test when it succeeds or throws something else than an AppError). */
async function refusal(act: Promise<unknown>) {
  const err: unknown = await act.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!isAppError(err)) throw new Error(`expected a refusal, got ${String(err)}`);
  return err;
}

/** Enrols the user with the code of the step before now (still inside the window); returns the secret and the renewed session. */
async function enrolledWithPreviousStep(session: ActiveSession): Promise<{ secret: string; session: ActiveSession }> {
  const { secret } = await startEnrolment(ctx, session);
  const confirmed = await confirmEnrolment(ctx, limits, session, codeAt(secret, new Date(clock.now().getTime() - 30_000)), '127.0.0.1');
  return { secret, session: confirmed.session };
}

beforeAll(async () => {
  app = await startTestApp({
    clock,
    env: {
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE: '1000',
      DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE: '1000',
      DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE: '1000',
      DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0',
    },
  });
  ctx = app.ctx;
  limits = signInLimits(ctx);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('confirming the enrolment', () => {
  it('before the set-up started is refused (409 mfa_enrolment_not_started, saying to start it); once enrolled, 409 mfa_already_enrolled', async () => {
    const session = await newUser();
    const early = await refusal(confirmEnrolment(ctx, limits, session, '123456', '127.0.0.1'));
    expect([early.kind, early.code]).toEqual(['conflict', 'mfa_enrolment_not_started']);
    expect(early.detail).toMatch(/^Start the set-up first/);

    const { secret, session: renewed } = await enrolledWithPreviousStep(session);
    nextStep();
    const again = await refusal(confirmEnrolment(ctx, limits, renewed, codeAt(secret, clock.now()), '127.0.0.1'));
    expect([again.kind, again.code]).toEqual(['conflict', 'mfa_already_enrolled']);
  });

  it('a code that is not six digits is not correct (400 on the code field) and enrols nothing', async () => {
    const session = await newUser();
    await startEnrolment(ctx, session);
    for (const typed of ['abcdef', '', '12345']) {
      const wrong = await refusal(confirmEnrolment(ctx, limits, session, typed, '127.0.0.1'));
      expect(wrong.kind, typed).toBe('invalid');
      expect(wrong.facts.errors, typed).toEqual([{ pointer: '/code', message: 'is not correct' }]);
    }
    expect((await securityStatus(ctx, session)).enrolled).toBe(false);
  });

  it("the step of the code that confirmed is used up, not the step after it: confirmed with the last step's code, that code is refused and now's is taken", async () => {
    const session = await newUser();
    const { secret, session: renewed } = await enrolledWithPreviousStep(session);
    const replayed = await refusal(checkSecondFactor(ctx, limits, renewed, codeAt(secret, new Date(clock.now().getTime() - 30_000)), '127.0.0.1'));
    expect(replayed.kind).toBe('invalid');
    const taken = await checkSecondFactor(ctx, limits, renewed, codeAt(secret, clock.now()), '127.0.0.1');
    expect(taken.method).toBe('totp');
  });
});

describe('checking a code', () => {
  it('of a user without a second factor is refused (409 mfa_not_enrolled)', async () => {
    const session = await newUser();
    const err = await refusal(checkSecondFactor(ctx, limits, session, '123456', '127.0.0.1'));
    expect([err.kind, err.code, err.detail]).toEqual(['conflict', 'mfa_not_enrolled', 'Two-step verification is not on for you.']);
  });

  it('for a session that ended meanwhile (signed out elsewhere) is 401, and the right code brings it back under no id', async () => {
    const { secret, session } = await enrolledWithPreviousStep(await newUser());
    await endSession(ctx, session.sessionId, session.user);
    const err = await refusal(checkSecondFactor(ctx, limits, session, codeAt(secret, clock.now()), '127.0.0.1'));
    expect([err.kind, err.detail]).toEqual(['unauthenticated', 'This session has ended; sign in again.']);
    expect(await resumeSession(ctx, session.sessionId)).toBeNull();
  });
});

describe('turning the factor off', () => {
  it('gives back the session as no longer enrolled', async () => {
    const { secret, session } = await enrolledWithPreviousStep(await newUser());
    const after = await disableMfa(ctx, limits, session, codeAt(secret, clock.now()), '127.0.0.1');
    expect(after.mfa.enrolled).toBe(false);
    expect((await securityStatus(ctx, after)).enrolled).toBe(false);
    expect((await resumeSession(ctx, after.sessionId))?.mfa.enrolled).toBe(false);
  });

  it('is refused while the account requires a second factor (422 mfa_required, saying an admin can lift it)', async () => {
    const { secret, session } = await enrolledWithPreviousStep(await newUser());
    await ctx.store.transaction((tx) => setAccountMfaRequired(tx, session.user.accountId, true));
    const err = await refusal(disableMfa(ctx, limits, session, codeAt(secret, clock.now()), '127.0.0.1'));
    expect([err.kind, err.code]).toEqual(['refused', 'mfa_required']);
    expect(err.detail).toMatch(/requires two-step verification of everyone.*an admin can lift/);
    expect((await securityStatus(ctx, session)).enrolled).toBe(true);
  });

  it('is refused when an admin requires it while the code is being checked: the requirement wins, the factor stays', async () => {
    const { secret, session } = await enrolledWithPreviousStep(await newUser());
    const real = ctx.store;
    // The first look at the requirement sees none; an admin requires it right after.
    let looked = false;
    const racing = new Proxy(real, {
      get(target, name) {
        if (name === 'read' && !looked) {
          return async (...args: Parameters<Store['read']>) => {
            looked = true;
            const seen = await target.read(...args);
            await target.transaction((tx) => setAccountMfaRequired(tx, session.user.accountId, true));
            return seen;
          };
        }
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const err = await refusal(disableMfa({ ...ctx, store: racing } as AppContext, limits, session, codeAt(secret, clock.now()), '127.0.0.1'));
    expect(looked).toBe(true);
    expect(err.code).toBe('mfa_required');
    expect((await securityStatus(ctx, session)).enrolled).toBe(true);
  });
});
