/**
 * The dashboard's second factor, as rules without I/O: TOTP after RFC 6238 (30-second steps, six
 * digits, SHA-1, which is what every authenticator app reads from an otpauth:// URI), one step of
 * clock drift either way, one-time recovery codes, and how long a check stays fresh for the
 * sensitive actions that ask for it again.
 */

/** RFC 6238's default time step, in milliseconds. */
export const TOTP_PERIOD_MS = 30_000;
export const TOTP_DIGITS = 6;
/** Codes of the step before and after the current one are accepted too (a phone's clock drifts; a code typed at a step's end arrives in the next). */
export const TOTP_WINDOW = 1;

/** The RFC 6238 time step holding `now` (ms since the epoch). */
export function totpStepAt(now: number): number {
  return Math.floor(now / TOTP_PERIOD_MS);
}

/**
 * Whether a code of `step` may be taken after the last accepted one: a step already used (or an
 * earlier one) is refused, so a code seen over a shoulder or in a log cannot be played again
 * (RFC 6238 section 5.2: "the verifier MUST NOT accept the second attempt of the OTP").
 */
export function stepIsNew(step: number, lastStep: number | null): boolean {
  return lastStep === null || step > lastStep;
}

/**
 * A sensitive action (create or revoke an API key, rotate a webhook secret, change a role, change
 * the MFA requirement, reset someone's MFA) asks for a fresh code when the session last checked
 * one longer ago than this. Ten minutes: long enough for a few changes in a row, short enough
 * that a session left open on an unattended screen cannot make them.
 */
const STEP_UP_FRESH_MS = 10 * 60_000;

/** Whether a session whose factor was last checked at `verifiedAt` (ISO 8601, or null: never) is fresh at `now`. */
export function verificationIsFresh(verifiedAt: string | null, now: number): boolean {
  if (verifiedAt === null) return false;
  const age = now - Date.parse(verifiedAt);
  return age >= 0 && age < STEP_UP_FRESH_MS;
}

/** How many recovery codes a user gets (each works once). */
export const RECOVERY_CODE_COUNT = 10;

/** Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or copied by hand is not mistaken. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** 16 characters of 5 bits: 80 random bits per code, in four groups of four. */
const RECOVERY_CODE_CHARS = 16;

/** A recovery code made from `random` (at least 16 bytes of randomness; 5 bits of each are used). */
export function formatRecoveryCode(random: Uint8Array): string {
  if (random.length < RECOVERY_CODE_CHARS) throw new RangeError(`a recovery code needs ${RECOVERY_CODE_CHARS} random bytes`);
  let code = '';
  for (let i = 0; i < RECOVERY_CODE_CHARS; i++) {
    if (i > 0 && i % 4 === 0) code += '-';
    code += RECOVERY_ALPHABET[random[i]! & 31];
  }
  return code;
}

/**
 * A recovery code as typed, in the one form it is hashed in: lower case, without spaces or
 * hyphens, the letters people confuse read as Crockford's digits (o → 0, i and l → 1); null when
 * it cannot be one.
 */
export function normalizeRecoveryCode(typed: string): string | null {
  const plain = typed.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  if (plain.length !== RECOVERY_CODE_CHARS) return null;
  for (const char of plain) if (!RECOVERY_ALPHABET.includes(char)) return null;
  return plain;
}

/** Whether what was typed is a TOTP code (six digits, spaces allowed) rather than a recovery code. */
export function totpCodeOf(typed: string): string | null {
  const digits = typed.replace(/\s/g, '');
  return new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(digits) ? digits : null;
}
