/**
 * How many payments carry borrower-paid private mortgage insurance when nothing ends it sooner:
 * the Homeowners Protection Act ends it automatically on the date the principal balance, on the
 * initial amortization schedule alone, is first scheduled to reach 78 % of the original value
 * (12 U.S.C. 4902(b); the original value is the lesser of the sale price and the appraised value
 * for a purchase, 12 U.S.C. 4901(12)). Reg Z counts the premiums in the finance charge
 * (12 CFR 1026.4(b)(5)) and in the payment schedule behind the APR until then.
 *
 * The payment that first brings the balance to 78 % still carries the premium: that is how the
 * CFPB's sample Closing Disclosure H-25(B) counts, whose finance charge less the note's interest
 * leaves $6,586.57 of premiums, 80 payments of $82.35 to within $1.43 and not 79.
 */
import { scheduleRows } from '../pricing/amortization.ts';

/** 78 % as a fraction of 100. */
const AUTOMATIC_TERMINATION_PERCENT = 78;

/**
 * The number of the payment at which the scheduled balance first reaches 78 % of
 * `originalValueCents`: the premiums run with payments 1 to it. 0 when the loan starts at or
 * below 78 %; the whole term when the balance never gets there (it always does, at the last
 * payment, for a fully amortizing loan).
 */
export function mortgageInsurancePaymentsUntilAutomaticTermination(
  amountCents: number,
  rateThousandths: number,
  termYears: number,
  originalValueCents: number,
): number {
  if (!Number.isSafeInteger(originalValueCents) || originalValueCents < 1) {
    throw new RangeError(`originalValueCents must be whole cents ≥ 1, got ${originalValueCents}`);
  }
  // Whole cents: 78 % of a value in whole dollars is whole cents; otherwise the threshold rounds down, so a balance a fraction of a cent above it has not reached it.
  const thresholdCents = Math.floor((originalValueCents * AUTOMATIC_TERMINATION_PERCENT) / 100);
  if (amountCents <= thresholdCents) return 0;
  const rows = scheduleRows(amountCents, rateThousandths, termYears);
  const reaching = rows.find((row) => row.balanceCents <= thresholdCents);
  return reaching ? reaching.number : rows.length;
}

