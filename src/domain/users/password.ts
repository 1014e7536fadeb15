/**
 * Password rules, after OWASP's Authentication and Password Storage cheat sheets (and NIST SP
 * 800-63B): a length of 12 to 128 characters and no composition rules (any character, spaces
 * included, counts); the text is NFKC-normalised first, so the same password typed on another
 * keyboard or system hashes the same. The upper bound keeps hashing cost bounded.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 128;

export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** Why a new password is refused, or null. Counts characters (code points), not UTF-16 units. */
export function passwordIssue(password: string): string | null {
  const length = [...normalizePassword(password)].length;
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}
