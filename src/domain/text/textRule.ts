/**
 * The one rule for text a client sends, on both engines: no NUL or other C0 control character
 * (U+0000–U+001F; tab and line breaks only where a field says so) and no unpaired UTF-16 surrogate.
 * PostgreSQL cannot store NUL in text, controls corrupt CSV and NDJSON exports, and an unpaired
 * surrogate is not Unicode: each engine would store a different replacement of it, so what was
 * acknowledged would not be what is read back. The contract declares these patterns on every
 * free-text field (Ajv compiles them with the `u` flag, where a lone surrogate matches
 * `\uD800-\uDFFF` and a valid pair does not); text that does not pass through the contract
 * (dashboard-only forms, upload file names) is checked here with the same expressions.
 */

/** The contract's pattern for single-line text. */
export const SINGLE_LINE_TEXT = '^[^\\u0000-\\u001F\\uD800-\\uDFFF]*$';
/** The contract's pattern for text that may hold tabs and line breaks (HT, LF, CR). */
export const MULTI_LINE_TEXT = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uD800-\\uDFFF]*$';

const SINGLE_LINE = new RegExp(SINGLE_LINE_TEXT, 'u');
const MULTI_LINE = new RegExp(MULTI_LINE_TEXT, 'u');

/** What a field breaking the rule is told, by the API's 400 and beside a dashboard field alike. */
export function textRuleMessage(pattern: string): string | null {
  if (pattern === SINGLE_LINE_TEXT) return 'must not contain control characters (U+0000–U+001F) or unpaired surrogates';
  if (pattern === MULTI_LINE_TEXT) return 'must not contain control characters (U+0000–U+001F, other than tab and line breaks) or unpaired surrogates';
  return null;
}

/** The message for text that breaks the rule, or null when it keeps it. */
export function textIssue(text: string, lines: 'single' | 'multi' = 'single'): string | null {
  return (lines === 'single' ? SINGLE_LINE : MULTI_LINE).test(text) ? null : textRuleMessage(lines === 'single' ? SINGLE_LINE_TEXT : MULTI_LINE_TEXT);
}
