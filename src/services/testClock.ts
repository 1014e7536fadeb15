/**
 * The clock of an environment. Live runs on real time, always; a test environment runs on real
 * time plus the offset `POST /v1/test/clock/advance` gave it (none after a reset). Every
 * time-driven behaviour of an environment reads its time here: rate lock expiry and its warning,
 * quote expiry, and the webhook retry schedule (pending retries are brought forward when the clock
 * moves, see advancePendingDeliveries).
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { MAX_DURATION_MS, parseIsoDuration } from '../domain/time/isoDuration.ts';
import { nudgeDispatchers } from '../events/outbox.ts';
import { fail } from '../errors.ts';
import { notifyDispatchers } from '../store/outbox.ts';
import { advancePendingDeliveries, deleteClockOffset, findClockOffset, saveClockOffset } from '../store/testClocks.ts';
import { recordAudit } from './audit.ts';
import { sweepLoanEstimatesOf } from './loanEstimates.ts';
import { sweepRateLocksOf } from './rateLocks.ts';
import { sweepNoticeRemindersOf } from './notices.ts';

export type TestClock = components['schemas']['TestClock'];

function requireTestEnvironment(environmentId: string): void {
  if (isLivemode(environmentId)) {
    throw fail.notFound('The test clock belongs to test mode: use a test key (mos_test_…); a live key has nothing at this path.');
  }
}

function view(now: Date, offsetMs: number): TestClock {
  return { now: new Date(now.getTime() + offsetMs).toISOString(), offsetSeconds: Math.floor(offsetMs / 1000), livemode: false };
}

export async function getTestClock(ctx: AppContext, environmentId: string): Promise<TestClock> {
  requireTestEnvironment(environmentId);
  const offsetMs = await ctx.store.read((db) => findClockOffset(db, environmentId));
  return view(ctx.clock.now(), offsetMs);
}

/**
 * Moves the environment's clock forward by an ISO 8601 duration (400 when it is not one, not
 * positive, or would put the clock more than ten years ahead), brings its pending webhook retries
 * forward by as much, then runs the environment's rate lock, notice reminder and Loan Estimate
 * sweeps, so what the new time made due (locks expired, notices 25 days undelivered, Loan
 * Estimates overdue) has its events published before the caller gets the answer.
 */
export async function advanceTestClock(ctx: AppContext, environmentId: string, by: string): Promise<TestClock> {
  requireTestEnvironment(environmentId);
  const parsed = parseIsoDuration(by);
  if (!parsed.ok) throw fail.validation(`/by ${parsed.message}`, [{ pointer: '/by', message: parsed.message }]);
  const offsetMs = await ctx.store.transaction(async (tx) => {
    const now = ctx.clock.now();
    const offset = (await findClockOffset(tx, environmentId)) + parsed.ms;
    if (offset > MAX_DURATION_MS) {
      const message = 'would put the test clock more than ten years ahead of real time; reset it first (POST /v1/test/clock/reset)';
      throw fail.validation(`/by ${message}`, [{ pointer: '/by', message }]);
    }
    await saveClockOffset(tx, environmentId, offset, now.toISOString());
    if ((await advancePendingDeliveries(tx, environmentId, parsed.ms, now)) > 0) await notifyDispatchers(tx);
    await recordAudit(tx, ctx, {
      accountId: environmentId,
      action: 'testClock.advanced',
      target: { type: 'testClock', id: environmentId },
      change: { before: { offsetSeconds: Math.floor((offset - parsed.ms) / 1000) }, after: { offsetSeconds: Math.floor(offset / 1000), by } },
    });
    return offset;
  });
  nudgeDispatchers();
  await sweepRateLocksOf(ctx, { environmentId });
  await sweepNoticeRemindersOf(ctx, { environmentId });
  await sweepLoanEstimatesOf(ctx, { environmentId });
  return view(ctx.clock.now(), offsetMs);
}

/** Back to real time: records keep the times they were given while the clock was ahead. */
export async function resetTestClock(ctx: AppContext, environmentId: string): Promise<TestClock> {
  requireTestEnvironment(environmentId);
  await ctx.store.transaction(async (tx) => {
    const before = await findClockOffset(tx, environmentId);
    await deleteClockOffset(tx, environmentId);
    await recordAudit(tx, ctx, {
      accountId: environmentId,
      action: 'testClock.reset',
      target: { type: 'testClock', id: environmentId },
      change: { before: { offsetSeconds: Math.floor(before / 1000) }, after: { offsetSeconds: 0 } },
    });
  });
  return view(ctx.clock.now(), 0);
}
