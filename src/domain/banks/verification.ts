/**
 * The verdict of one bank verification and the limit on failed attempts. Pure.
 */
import type { components } from '../../../generated/api.d.ts';
import type { NameMatch } from './nameMatch.ts';

export type FailedCheck = components['schemas']['BankVerificationFailedCheck'];

export interface Verdict {
  verified: boolean;
  /** Which checks failed, in a fixed order; empty when verified. Never says what the true values are. */
  failedChecks: FailedCheck[];
}

/** Verified only when the number matches exactly and the name's outcome is `match`. */
export function verdict(accountNumberMatches: boolean, nameMatch: NameMatch): Verdict {
  const failedChecks: FailedCheck[] = [];
  if (!accountNumberMatches) failedChecks.push('account_number');
  if (nameMatch.outcome !== 'match') failedChecks.push('holder_name');
  return { verified: failedChecks.length === 0, failedChecks };
}

/**
 * At most this many failed verifications of one application in FAILED_ATTEMPT_WINDOW_MS; the next
 * attempt is refused (429) until the oldest of them leaves the window. It stops a caller holding a
 * valid bank token from guessing account numbers or probing names against an application.
 */
export const MAX_FAILED_ATTEMPTS = 5;
export const FAILED_ATTEMPT_WINDOW_MS = 60 * 60 * 1000;

export type AttemptDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** `failures`: checked_at of the application's failed verifications since `now - window`, any order. */
export function attemptDecision(failures: readonly string[], now: Date): AttemptDecision {
  const windowStart = now.getTime() - FAILED_ATTEMPT_WINDOW_MS;
  const recent = failures.map((t) => Date.parse(t)).filter((t) => t > windowStart).sort((x, y) => x - y);
  if (recent.length < MAX_FAILED_ATTEMPTS) return { allowed: true };
  // The window frees a slot when the (count − MAX + 1)-th oldest failure ages out.
  const freesAt = recent[recent.length - MAX_FAILED_ATTEMPTS]! + FAILED_ATTEMPT_WINDOW_MS;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000)) };
}
