import { describe, expect, it } from 'vitest';
import { FILE_NAME_MAX_CHARACTERS, displayFileName } from '../../../../src/domain/documents/fileName.ts';

describe('displayFileName', () => {
  it('keeps a name as sent, paths included, up to 255 characters counted as code points', () => {
    expect(displayFileName('statements/2026/jan.pdf')).toEqual({ ok: true, fileName: 'statements/2026/jan.pdf' });
    expect(displayFileName(null)).toEqual({ ok: true, fileName: null });
    const astral = '😀'.repeat(FILE_NAME_MAX_CHARACTERS); // 510 UTF-16 units, 255 characters
    expect(displayFileName(astral)).toEqual({ ok: true, fileName: astral });
  });

  it('refuses a longer name, and one with a control character or an unpaired surrogate, never cutting it', () => {
    expect(displayFileName('x'.repeat(256))).toEqual({ ok: false, message: 'the file name must be at most 255 characters' });
    for (const name of ['a\u0000.pdf', 'a\n.pdf', 'a\t.pdf', '\ud800.pdf', 'a\udc00']) {
      expect(displayFileName(name), JSON.stringify(name)).toMatchObject({ ok: false, message: expect.stringContaining('control characters') });
    }
  });
});
