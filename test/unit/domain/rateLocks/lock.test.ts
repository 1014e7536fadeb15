/** Rate lock arithmetic: periods of the sheet, the locked rate and payment, expiry, extension and the warning horizon. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthlyPaymentCents } from '../../../../src/domain/pricing/amortization.ts';
import { DEFAULT_RATE_SHEET } from '../../../../src/domain/pricing/rateSheet.ts';
import {
  extension,
  extensionFeePerDayCents,
  hasExpired,
  lockedTerms,
  lockExpiry,
  lockPeriodsOf,
  offeredPeriod,
  warningHorizon,
} from '../../../../src/domain/rateLocks/lock.ts';

const DAY = 86_400_000;

describe('lock periods', () => {
  it('a sheet without its own offers 30, 45 and 60 days at +0, +0.125 and +0.25, and 25 a day to extend', () => {
    // A sheet saved before lock periods existed has neither field.
    const older = {};
    expect(lockPeriodsOf(older)).toEqual([
      { days: 30, rateAdjustment: 0 },
      { days: 45, rateAdjustment: 0.125 },
      { days: 60, rateAdjustment: 0.25 },
    ]);
    expect(extensionFeePerDayCents(older)).toBe(2500);
    expect(lockPeriodsOf(DEFAULT_RATE_SHEET)).toEqual(lockPeriodsOf(older));
  });

  it('a sheet’s own periods and fee replace the defaults', () => {
    const sheet = { lockPeriods: [{ days: 20, rateAdjustment: -0.1 }], lockExtensionFeePerDay: 12.34 };
    expect(offeredPeriod(sheet, 20)).toEqual({ days: 20, rateAdjustment: -0.1 });
    expect(offeredPeriod(sheet, 30)).toBeUndefined();
    expect(extensionFeePerDayCents(sheet)).toBe(1234);
  });
});

describe('lockedTerms', () => {
  it('adds the period’s adjustment to the quote’s rate, in thousandths, and prices the payment at it', () => {
    const terms = lockedTerms({ amountCents: 35_000_000, interestRateThousandths: 6500, term: 30 }, { days: 45, rateAdjustment: 0.125 });
    expect(terms).toEqual({ interestRateThousandths: 6625, rateAdjustmentThousandths: 125, monthlyPaymentCents: monthlyPaymentCents(35_000_000, 6625, 30) });
  });

  it('never goes below a zero rate', () => {
    const terms = lockedTerms({ amountCents: 1_200_000, interestRateThousandths: 100, term: 1 }, { days: 15, rateAdjustment: -0.5 });
    expect(terms.interestRateThousandths).toBe(0);
    expect(terms.monthlyPaymentCents).toBe(100_000);
  });

  it('with no adjustment, the payment is the quote’s own (any amount, rate and term)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 5_000_000_000 }), fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 40 }), (amountCents, rate, term) => {
        const terms = lockedTerms({ amountCents, interestRateThousandths: rate, term }, { days: 30, rateAdjustment: 0 });
        expect(terms.monthlyPaymentCents).toBe(monthlyPaymentCents(amountCents, rate, term));
      }),
      { numRuns: 200 },
    );
  });
});

describe('expiry, extension and warning', () => {
  const lockedAt = new Date('2026-11-21T18:30:00.000Z');

  it('a lock expires whole days after it was made, at that very instant', () => {
    const expiresAt = lockExpiry(lockedAt, 30);
    expect(expiresAt.toISOString()).toBe('2026-12-21T18:30:00.000Z');
    expect(hasExpired(expiresAt, new Date(expiresAt.getTime() - 1))).toBe(false);
    expect(hasExpired(expiresAt, expiresAt)).toBe(true);
  });

  it('an extension adds its days to the expiry and costs days × the fee per day', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 90 }), fc.integer({ min: 0, max: 10_000_000 }), (days, fee) => {
        const next = extension(lockExpiry(lockedAt, 30), days, fee);
        expect(next.expiresAt.getTime() - lockedAt.getTime()).toBe((30 + days) * DAY);
        expect(next.feeCents).toBe(days * fee);
      }),
    );
  });

  it('the warning horizon is the lead time ahead of now', () => {
    const now = new Date('2026-12-18T18:30:00.000Z');
    expect(warningHorizon(now, 72).toISOString()).toBe('2026-12-21T18:30:00.000Z');
    expect(warningHorizon(now, 1).getTime() - now.getTime()).toBe(3_600_000);
  });
});
