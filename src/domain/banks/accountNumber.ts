/**
 * Account numbers: their normal form, their mask, their keyed hash and the constant-time check
 * that two of them are the same. Pure (HMAC is computation, not I/O).
 *
 * A full account number is never stored or logged: records keep the mask (its last four
 * characters) and the keyed hash. The hash is HMAC-SHA-256 under a server secret, so a copy of
 * the database alone cannot be searched for a known number (account numbers are short enough to
 * enumerate, which a plain hash would not stop).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Digits and letters (IBANs), 4 to 34 characters: the form the API and partners must use. */
export const ACCOUNT_NUMBER_PATTERN = /^[0-9A-Za-z]{4,34}$/;

export function isWellFormedAccountNumber(value: string): boolean {
  return ACCOUNT_NUMBER_PATTERN.test(value);
}

/** The form that is compared and hashed: upper case ("de89…" and "DE89…" are one IBAN). */
function normaliseAccountNumber(value: string): string {
  return value.toUpperCase();
}

/** The last four characters: what records, responses and exports show of a number. */
export function accountMask(accountNumber: string): string {
  return normaliseAccountNumber(accountNumber).slice(-4);
}

/** HMAC-SHA-256 of the normalised number under `key`: 32 bytes. */
export function accountNumberDigest(key: Buffer, accountNumber: string): Buffer {
  return createHmac('sha256', key).update(normaliseAccountNumber(accountNumber), 'utf8').digest();
}

/**
 * True when both numbers are the same, in time that does not depend on where they differ:
 * both are reduced to equal-length keyed digests first, which `timingSafeEqual` requires and
 * which also hides their lengths.
 */
export function accountNumbersMatch(key: Buffer, submitted: string, onRecord: string): boolean {
  return timingSafeEqual(accountNumberDigest(key, submitted), accountNumberDigest(key, onRecord));
}
