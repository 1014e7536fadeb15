import { describe, expect, it } from 'vitest';
import { MULTI_LINE_TEXT, SINGLE_LINE_TEXT, textIssue, textRuleMessage } from '../../../../src/domain/text/textRule.ts';

describe('the text rule', () => {
  it('keeps any Unicode text, astral characters (valid surrogate pairs) included', () => {
    for (const text of ['', 'Jane Doe', 'Zoë Ørsted-Łukasz', '山田 太郎', 'emoji 😀 ok', '\u007f\u0085 (not C0)']) {
      expect(textIssue(text), JSON.stringify(text)).toBeNull();
      expect(textIssue(text, 'multi'), JSON.stringify(text)).toBeNull();
    }
  });

  it('refuses every C0 control character and each unpaired surrogate; multi-line text keeps tab, LF and CR only', () => {
    for (let code = 0; code < 0x20; code++) {
      const text = `a${String.fromCharCode(code)}b`;
      expect(textIssue(text), `U+${code.toString(16)}`).toMatch(/control characters/);
      const allowed = code === 0x09 || code === 0x0a || code === 0x0d;
      expect(textIssue(text, 'multi') === null, `U+${code.toString(16)} in multi-line text`).toBe(allowed);
    }
    for (const text of ['\ud800', 'a\udbffb', '\udc00', 'x\udfff', '😀'.slice(0, 1), '😀'.slice(1)]) {
      expect(textIssue(text), JSON.stringify(text)).toMatch(/unpaired surrogates/);
      expect(textIssue(text, 'multi'), JSON.stringify(text)).toMatch(/unpaired surrogates/);
    }
  });

  it('names the message for exactly the two patterns the contract declares', () => {
    expect(textRuleMessage(SINGLE_LINE_TEXT)).toMatch(/control characters/);
    expect(textRuleMessage(MULTI_LINE_TEXT)).toMatch(/other than tab and line breaks/);
    expect(textRuleMessage('^[a-z]+$')).toBeNull();
  });
});
