/**
 * The Universal Loan Identifier (Regulation C, 12 CFR 1003.4(a)(1)(i)): the institution's LEI,
 * then up to 23 characters of its own that identify the application, then two check digits
 * computed by ISO/IEC 7064 MOD 97-10 as Appendix C to Part 1003 prescribes (letters become
 * 10…35 regardless of case, "00" is appended, the digits are 98 minus the remainder by 97).
 * A ULI is 23 to 45 characters, letters and digits only (FIG edit V608-1); it validates when the
 * whole string, converted the same way, leaves a remainder of 1 (V609).
 */

const ALPHANUMERIC = /^[A-Za-z0-9]+$/;

/** The string of digits Appendix C step 1 turns `text` into (A or a = 10 … Z or z = 35). */
function digitsOf(text: string): string {
  let digits = '';
  for (const char of text.toUpperCase()) {
    const code = char.charCodeAt(0);
    digits += code >= 65 && code <= 90 ? String(code - 55) : char;
  }
  return digits;
}

/** `digits` mod 97, seven digits at a time: the numbers run to 90 digits, far past a double's exact range. */
function mod97(digits: string): number {
  let remainder = 0;
  for (let i = 0; i < digits.length; i += 7) {
    remainder = Number(String(remainder) + digits.slice(i, i + 7)) % 97;
  }
  return remainder;
}

/** The two check digits for the LEI plus the loan's identifier (Appendix C, steps 1–5). */
export function uliCheckDigits(base: string): string {
  if (!ALPHANUMERIC.test(base)) throw new Error('a ULI holds letters and digits only');
  return String(98 - mod97(digitsOf(base) + '00')).padStart(2, '0');
}

/** V608-1: 23 to 45 letters and digits. */
export function hasUliForm(uli: string): boolean {
  return uli.length >= 23 && uli.length <= 45 && ALPHANUMERIC.test(uli);
}

/** V609: the check digits agree with the rest (Appendix C, "Validating a ULI"). */
export function uliCheckDigitsValid(uli: string): boolean {
  return ALPHANUMERIC.test(uli) && mod97(digitsOf(uli)) === 1;
}

/** The ULI allows 45 characters: the 20 of the LEI and the 2 check digits leave 23 for the loan. */
const MAX_LOAN_IDENTIFIER = 23;

/**
 * The part of a ULI that names one application: its id without the `mtg-` prefix, upper case,
 * cut to its last 23 characters. An id is a 26-character ULID (48 bits of time, then 80 random);
 * dropping its first three characters leaves the low 33 bits of the time (about 99 days) and all
 * of the randomness, and ids minted in one millisecond differ in their last characters, so two
 * applications of an institution do not share one. It is derived, not stored: the same
 * application has the same ULI in every year's file.
 */
export function loanIdentifierOf(mortgageId: string): string {
  const plain = mortgageId.replace(/^[a-z]+-/, '').replace(/[^A-Za-z0-9]/g, '').toUpperCase();
  return plain.slice(-MAX_LOAN_IDENTIFIER);
}

/** The ULI of an application of the institution with this LEI. */
export function uliOf(lei: string, mortgageId: string): string {
  const base = lei.toUpperCase() + loanIdentifierOf(mortgageId);
  return base + uliCheckDigits(base);
}

/**
 * An LEI (ISO 17442): 18 letters or digits, then two check digits by the same ISO/IEC 7064
 * MOD 97-10, so the whole code leaves a remainder of 1.
 */
export function isValidLei(lei: string): boolean {
  return /^[A-Z0-9]{18}[0-9]{2}$/.test(lei) && mod97(digitsOf(lei)) === 1;
}
