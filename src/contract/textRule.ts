/**
 * The contract's text rule: every free-text string a client sends carries one of these two
 * patterns (JSON Schema `pattern`, compiled by Ajv with the `u` flag, so `\uD800-\uDFFF` matches
 * only a lone surrogate, never half of a valid pair such as an emoji). The spec writes them in
 * openapi/ and test/contract/textRule.test.ts checks that each request-side string carries one.
 */

/** One line of text: no C0 control character (NUL, tab, newline…) and no unpaired surrogate, which logs, CSV cells, XML and PostgreSQL cannot hold safely. */
export const SINGLE_LINE_TEXT = '^[^\\u0000-\\u001F\\uD800-\\uDFFF]*$';

/** Text that may run over lines: as SINGLE_LINE_TEXT, but tab, line feed and carriage return are allowed (only for fields documented as multi-line). */
export const MULTI_LINE_TEXT = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uD800-\\uDFFF]*$';
