/**
 * Rate locks: what a lock holds and when it ends, as pure functions of its inputs. A lock is a
 * snapshot of a quote's rate and fees at the time it was made, plus the lock period's rate
 * adjustment, so nothing here reads the current rate sheet once the lock exists. Money is integer
 * cents and rates integer thousandths of a percentage point (see ../pricing/units.ts).
 */
import { monthlyPaymentCents } from '../pricing/amortization.ts';
import type { RateSheet } from '../pricing/rateSheet.ts';
import { toScaled } from '../pricing/units.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface LockPeriod {
  days: number;
  rateAdjustment: number;
}

/** The lock periods of a sheet that does not list its own (documented on RateSheet.lockPeriods). */
const DEFAULT_LOCK_PERIODS: readonly LockPeriod[] = Object.freeze([
  { days: 30, rateAdjustment: 0 },
  { days: 45, rateAdjustment: 0.125 },
  { days: 60, rateAdjustment: 0.25 },
]);

/** The extension fee per day of a sheet that does not state one, in major units. */
const DEFAULT_LOCK_EXTENSION_FEE_PER_DAY = 25;

/** The lock periods a sheet offers. */
export function lockPeriodsOf(sheet: Pick<RateSheet, 'lockPeriods'>): readonly LockPeriod[] {
  return sheet.lockPeriods ?? DEFAULT_LOCK_PERIODS;
}

/** The sheet's extension fee per day, in cents. */
export function extensionFeePerDayCents(sheet: Pick<RateSheet, 'lockExtensionFeePerDay'>): number {
  return toScaled(sheet.lockExtensionFeePerDay ?? DEFAULT_LOCK_EXTENSION_FEE_PER_DAY, 2);
}

/** The period of `days` the sheet offers, or undefined. */
export function offeredPeriod(sheet: Pick<RateSheet, 'lockPeriods'>, days: number): LockPeriod | undefined {
  return lockPeriodsOf(sheet).find((period) => period.days === days);
}

export interface LockedTerms {
  /** The quote's rate plus the period's adjustment, in thousandths of a point (never below 0). */
  interestRateThousandths: number;
  rateAdjustmentThousandths: number;
  monthlyPaymentCents: number;
}

/** The rate and payment a lock holds: the quote's rate plus the period's adjustment, floored at 0. */
export function lockedTerms(quote: { amountCents: number; interestRateThousandths: number; term: number }, period: LockPeriod): LockedTerms {
  const rateAdjustmentThousandths = toScaled(period.rateAdjustment, 3);
  const interestRateThousandths = Math.max(0, quote.interestRateThousandths + rateAdjustmentThousandths);
  return {
    interestRateThousandths,
    rateAdjustmentThousandths,
    monthlyPaymentCents: monthlyPaymentCents(quote.amountCents, interestRateThousandths, quote.term),
  };
}

/** When a lock made at `lockedAt` for `days` expires (whole days of 24 hours). */
export function lockExpiry(lockedAt: Date, days: number): Date {
  return new Date(lockedAt.getTime() + days * DAY_MS);
}

/** The new expiry and the fee of extending a lock by `days`. */
/**
 * The most days extensions may add to one lock in all: a lock is a commitment priced for its
 * period, and a lender re-prices (a new lock) rather than extending without end.
 */
export const MAX_EXTENDED_DAYS = 180;

export function extension(expiresAt: Date, days: number, feePerDayCents: number): { expiresAt: Date; feeCents: number } {
  return { expiresAt: new Date(expiresAt.getTime() + days * DAY_MS), feeCents: days * feePerDayCents };
}

/**
 * The warning horizon at `now`: an active lock expiring at or before it (and after `now`) is due
 * its `rate_lock.expiring` warning, which falls `leadHours` before its expiry.
 */
export function warningHorizon(now: Date, leadHours: number): Date {
  return new Date(now.getTime() + leadHours * HOUR_MS);
}

/** True when a lock has expired at `now` (its expiry instant included). */
export function hasExpired(expiresAt: Date, now: Date): boolean {
  return expiresAt.getTime() <= now.getTime();
}
