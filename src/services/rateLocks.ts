/**
 * Rate locks: lock a quote's rate and fees for a period of the rate sheet, extend, cancel, read;
 * and the sweep that expires locks at their time and warns before (`rate_lock.expiring`). Each
 * change and its event commit in one transaction (the outbox). Times are the environment's own
 * (environmentNow: real time for live, the simulated clock for a test environment).
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { percent, toScaled } from '../domain/pricing/units.ts';
import { extension, extensionFeePerDayCents, hasExpired, MAX_EXTENDED_DAYS, lockedTerms, lockExpiry, lockPeriodsOf, offeredPeriod, warningHorizon } from '../domain/rateLocks/lock.ts';
import { publish } from '../events/outbox.ts';
import { fail } from '../errors.ts';
import { newId } from '../ids.ts';
import { findApplication } from '../store/applications.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import { findQuote } from '../store/quotes.ts';
import {
  dueExpiries,
  dueExpiringWarnings,
  endActiveRateLock,
  extendActiveRateLock,
  findActiveRateLock,
  findRateLock,
  findRateLockForUpdate,
  insertRateLock,
  listRateLocks as listRateLockRecords,
  markExpiringNotified,
  type RateLockFilter,
  type RateLockRecord,
  type SweepScope,
} from '../store/rateLocks.ts';
import type { Tx } from '../store/store.ts';
import { simulatedClocks } from '../store/testClocks.ts';
import { rateSheetIn } from './pricing.ts';
import { environmentNow } from './environmentClock.ts';
import { recordAudit } from './audit.ts';

export type RateLock = components['schemas']['RateLock'];
type RateLockEventType = 'rate_lock.created' | 'rate_lock.extended' | 'rate_lock.expiring' | 'rate_lock.expired' | 'rate_lock.cancelled';

const withMode = (accountId: string, lock: RateLockRecord): RateLock => ({ ...lock, livemode: isLivemode(accountId) });

/**
 * Publishes a rate_lock.* event of `lock` in the caller's transaction: it happened at `at`, the
 * environment's time, and its deliveries are due now in real time.
 */
async function publishLockEvent(ctx: AppContext, tx: Tx, accountId: string, event: RateLockEventType, lock: RateLockRecord, at: Date): Promise<void> {
  await publish(tx, {
    accountId,
    occurredAt: at,
    dueAt: ctx.clock.now(),
    payload: {
      event,
      lockId: lock.lockId,
      quoteId: lock.quoteId,
      mortgageId: lock.mortgageId,
      status: lock.status,
      periodDays: lock.periodDays,
      interestRate: lock.interestRate,
      expiresAt: lock.expiresAt,
      timestamp: at.toISOString(),
    },
  });
}

function notActive(lock: RateLockRecord) {
  return fail.conflict('rate_lock_not_active', `Rate lock ${lock.lockId} is ${lock.status}; only an active lock can be extended or cancelled.`, {
    currentStatus: lock.status,
  });
}

/**
 * Locks a quote's rate: the quote's rate plus the chosen period's adjustment, and its fees, held
 * until now + the period (the environment's now). 422 for an expired quote, a period the sheet
 * does not offer or an unknown application; 409 when the quote or application has an active lock.
 */
export async function lockQuote(
  ctx: AppContext,
  accountId: string,
  quoteId: string,
  input: { periodDays: number; mortgageId?: string | undefined },
): Promise<RateLock> {
  return ctx.store.transaction(async (tx) => {
    const quote = await findQuote(tx, accountId, quoteId);
    if (!quote) throw fail.notFound(`No quote ${quoteId} in this account.`);
    const now = await environmentNow(ctx, tx, accountId);
    if (hasExpired(new Date(quote.expiresAt), now)) {
      throw fail.refused('quote_expired', `Quote ${quoteId} expired at ${quote.expiresAt}; make a new quote to lock a rate.`, {
        errors: [{ pointer: '/quoteId', message: `expired at ${quote.expiresAt}` }],
      });
    }
    const sheet = await rateSheetIn(tx, accountId);
    const period = offeredPeriod(sheet, input.periodDays);
    if (!period) {
      const offered = lockPeriodsOf(sheet).map((p) => p.days).join(', ');
      throw fail.refused('lock_period_not_offered', `A lock of ${input.periodDays} days is not offered by this account's rate sheet; offered periods: ${offered} days.`, {
        errors: [{ pointer: '/periodDays', message: `is not offered; offered: ${offered}` }],
      });
    }
    const mortgageId = input.mortgageId ?? null;
    if (mortgageId !== null && !(await findApplication(tx, accountId, mortgageId))) {
      throw fail.refused('application_not_found', `No application ${mortgageId} in this account.`, {
        errors: [{ pointer: '/mortgageId', message: 'names no application of this account' }],
      });
    }
    const existing = (await findActiveRateLock(tx, accountId, { quoteId })) ?? (mortgageId ? await findActiveRateLock(tx, accountId, { mortgageId }) : undefined);
    if (existing) {
      throw fail.conflict('rate_lock_exists', `Rate lock ${existing.lockId} is already active for this ${existing.quoteId === quoteId ? 'quote' : 'application'}; extend or cancel it.`, {
        existingLockId: existing.lockId,
      });
    }
    const terms = lockedTerms({ amountCents: toScaled(quote.amount, 2), interestRateThousandths: toScaled(quote.interestRate, 3), term: quote.term }, period);
    const lock: RateLockRecord = {
      lockId: newId('lck', ctx.clock.now().getTime()),
      quoteId,
      mortgageId,
      status: 'active',
      periodDays: period.days,
      amount: quote.amount,
      term: quote.term,
      currency: quote.currency,
      interestRate: percent(terms.interestRateThousandths),
      rateAdjustment: percent(terms.rateAdjustmentThousandths),
      monthlyPayment: terms.monthlyPaymentCents / 100,
      fees: quote.fees,
      extensionFeePerDay: extensionFeePerDayCents(sheet) / 100,
      extendedDays: 0,
      extensionFees: 0,
      lockedAt: now.toISOString(),
      expiresAt: lockExpiry(now, period.days).toISOString(),
      endedAt: null,
    };
    await insertRateLock(tx, accountId, lock);
    await publishLockEvent(ctx, tx, accountId, 'rate_lock.created', lock, now);
    await recordAudit(tx, ctx, {
      accountId,
      action: 'rateLock.created',
      target: lockTarget(lock),
      change: { before: null, after: { quoteId, mortgageId, periodDays: lock.periodDays, interestRate: lock.interestRate, expiresAt: lock.expiresAt } },
    });
    return withMode(accountId, lock);
  });
}

export async function getRateLock(ctx: AppContext, accountId: string, lockId: string): Promise<RateLock> {
  const lock = await ctx.store.read((db) => findRateLock(db, accountId, lockId));
  if (!lock) throw fail.notFound(`No rate lock ${lockId} in this account.`);
  return withMode(accountId, lock);
}

export async function listRateLocks(
  ctx: AppContext,
  accountId: string,
  filter: RateLockFilter,
  page: PageRequest,
): Promise<Page<RateLock>> {
  const found = await ctx.store.read((db) => listRateLockRecords(db, accountId, filter, page));
  return { ...found, items: found.items.map((lock) => withMode(accountId, lock)) };
}

/** The application's active lock, or null (what an application page shows). */
export async function activeRateLockOf(ctx: AppContext, accountId: string, mortgageId: string): Promise<RateLock | null> {
  const lock = await ctx.store.read((db) => findActiveRateLock(db, accountId, { mortgageId }));
  return lock ? withMode(accountId, lock) : null;
}

/**
 * Runs `change` on the lock if it is active, in one transaction. A lock past its expiry that the
 * sweep has not reached yet is expired first (with its event, committed), so it answers 409 as it
 * would a minute later.
 */
async function changeActiveLock(
  ctx: AppContext,
  accountId: string,
  lockId: string,
  change: (tx: Tx, lock: RateLockRecord, now: Date) => Promise<RateLockRecord>,
): Promise<RateLock> {
  const outcome = await ctx.store.transaction(async (tx): Promise<{ changed: RateLockRecord } | { ended: RateLockRecord }> => {
    const lock = await findRateLockForUpdate(tx, accountId, lockId);
    if (!lock) throw fail.notFound(`No rate lock ${lockId} in this account.`);
    const now = await environmentNow(ctx, tx, accountId);
    if (lock.status === 'active' && hasExpired(new Date(lock.expiresAt), now)) {
      return { ended: (await expireLock(ctx, tx, accountId, lock, now)) ?? lock };
    }
    if (lock.status !== 'active') throw notActive(lock);
    return { changed: await change(tx, lock, now) };
  });
  if ('ended' in outcome) throw notActive(outcome.ended);
  return withMode(accountId, outcome.changed);
}

/** Adds `days` to an active lock's expiry, for its extension fee per day. 409 when it is not active. */
export async function extendRateLock(ctx: AppContext, accountId: string, lockId: string, days: number): Promise<RateLock> {
  return changeActiveLock(ctx, accountId, lockId, async (tx, lock, now) => {
    if (lock.extendedDays + days > MAX_EXTENDED_DAYS) {
      const message = `would extend the lock by more than ${MAX_EXTENDED_DAYS} days in all (${lock.extendedDays} so far); lock the quote again instead`;
      throw fail.validation(`/days ${message}`, [{ pointer: '/days', message }]);
    }
    const next = extension(new Date(lock.expiresAt), days, toScaled(lock.extensionFeePerDay, 2));
    const expiresAt = next.expiresAt.toISOString();
    if (!(await extendActiveRateLock(tx, accountId, lockId, { expiresAt, addedDays: days, addedFeeCents: next.feeCents }))) throw notActive(lock);
    const extended: RateLockRecord = {
      ...lock,
      expiresAt,
      extendedDays: lock.extendedDays + days,
      extensionFees: (toScaled(lock.extensionFees, 2) + next.feeCents) / 100,
    };
    await publishLockEvent(ctx, tx, accountId, 'rate_lock.extended', extended, now);
    await recordAudit(tx, ctx, {
      accountId,
      action: 'rateLock.extended',
      target: lockTarget(lock),
      change: {
        before: { expiresAt: lock.expiresAt, extendedDays: lock.extendedDays, extensionFees: lock.extensionFees },
        after: { expiresAt, extendedDays: extended.extendedDays, extensionFees: extended.extensionFees, days },
      },
    });
    return extended;
  });
}

/** Cancels an active lock (final). 409 when it is not active. */
export async function cancelRateLock(ctx: AppContext, accountId: string, lockId: string): Promise<RateLock> {
  return changeActiveLock(ctx, accountId, lockId, async (tx, lock, now) => {
    if (!(await endActiveRateLock(tx, accountId, lockId, 'cancelled', now.toISOString()))) throw notActive(lock);
    const cancelled: RateLockRecord = { ...lock, status: 'cancelled', endedAt: now.toISOString() };
    await publishLockEvent(ctx, tx, accountId, 'rate_lock.cancelled', cancelled, now);
    await recordAudit(tx, ctx, { accountId, action: 'rateLock.cancelled', target: lockTarget(lock), change: { before: { status: 'active' }, after: { status: 'cancelled' } } });
    return cancelled;
  });
}

const lockTarget = (lock: RateLockRecord) => ({ type: 'rateLock', id: lock.lockId });

/**
 * Expires one due lock and publishes `rate_lock.expired`, if this transaction is the one that changed it. Not in
 * the audit log: an expiry is the clock's consequence, not a person's or a key's change (the sweep
 * changes many accounts' locks in one transaction, and would hold their chains' locks together);
 * the events feed and the webhooks show it as `rate_lock.expired`.
 */
async function expireLock(ctx: AppContext, tx: Tx, accountId: string, lock: RateLockRecord, now: Date): Promise<RateLockRecord | null> {
  if (!(await endActiveRateLock(tx, accountId, lock.lockId, 'expired', now.toISOString()))) return null;
  const expired: RateLockRecord = { ...lock, status: 'expired', endedAt: now.toISOString() };
  await publishLockEvent(ctx, tx, accountId, 'rate_lock.expired', expired, now);
  return expired;
}

/** How many locks one transaction of the sweep takes at most. */
const SWEEP_BATCH = 100;

/**
 * One pass of the sweep over a scope at `now`: warnings first (a lock the pass both warns and
 * expires was already past its warning time), then expiries, each in batches of their own
 * transaction. On PostgreSQL, instances sweeping at once skip each other's rows (SKIP LOCKED) and
 * every change is conditional, so each warning and each expiry is published exactly once.
 */
async function sweepScope(ctx: AppContext, scope: SweepScope, now: Date): Promise<{ warned: number; expired: number }> {
  const nowIso = now.toISOString();
  const warnUntil = warningHorizon(now, ctx.config.rateLocks.expiringLeadHours).toISOString();
  let warned = 0;
  let expired = 0;
  for (;;) {
    const done = await ctx.store.transaction(async (tx) => {
      const due = await dueExpiringWarnings(tx, scope, nowIso, warnUntil, SWEEP_BATCH);
      for (const { accountId, lock } of due) {
        if (await markExpiringNotified(tx, accountId, lock.lockId, nowIso)) {
          await publishLockEvent(ctx, tx, accountId, 'rate_lock.expiring', lock, now);
          warned++;
        }
      }
      return due.length < SWEEP_BATCH;
    });
    if (done) break;
  }
  for (;;) {
    const done = await ctx.store.transaction(async (tx) => {
      const due = await dueExpiries(tx, scope, nowIso, SWEEP_BATCH);
      for (const { accountId, lock } of due) if (await expireLock(ctx, tx, accountId, lock, now)) expired++;
      return due.length < SWEEP_BATCH;
    });
    if (done) break;
  }
  return { warned, expired };
}

/** The sweep of one environment on its own clock (after its test clock moved). */
export async function sweepRateLocksOf(ctx: AppContext, scope: { environmentId: string }): Promise<{ warned: number; expired: number }> {
  const now = await ctx.store.read((db) => environmentNow(ctx, db, scope.environmentId));
  return sweepScope(ctx, scope, now);
}

/**
 * One run of the background job: every environment on real time, then each test environment on
 * its simulated clock. Returns what it warned and expired.
 */
export async function sweepRateLocks(ctx: AppContext): Promise<{ warned: number; expired: number }> {
  const total = await sweepScope(ctx, { realTime: true }, ctx.clock.now());
  const clocks = await ctx.store.read((db) => simulatedClocks(db));
  for (const clock of clocks) {
    const part = await sweepScope(ctx, { environmentId: clock.environmentId }, new Date(ctx.clock.now().getTime() + clock.offsetMs));
    total.warned += part.warned;
    total.expired += part.expired;
  }
  return total;
}
