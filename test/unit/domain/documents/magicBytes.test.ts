import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SNIFF_BYTES, sniffContentType } from '../../../../src/domain/documents/magicBytes.ts';

const hex = (text: string) => new Uint8Array(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
const ascii = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));

describe('document type by magic bytes', () => {
  it.each([
    ['a PDF 1.4 header', ascii('%PDF-1.4\n%âãÏÓ\n'), 'application/pdf'],
    ['a PDF 2.0 header', ascii('%PDF-2.0\n'), 'application/pdf'],
    ['a PNG signature with its IHDR chunk', hex('89504e470d0a1a0a 0000000d 49484452 00000001'), 'image/png'],
    ['a JPEG/JFIF start (FF D8 FF E0)', hex('ffd8ffe000104a464946'), 'image/jpeg'],
    ['a JPEG/Exif start (FF D8 FF E1)', hex('ffd8ffe1001845786966'), 'image/jpeg'],
    ['a raw JPEG start with a quantisation table (FF D8 FF DB)', hex('ffd8ffdb0043'), 'image/jpeg'],
  ] as const)('recognises %s', (_label, bytes, type) => {
    expect(sniffContentType(bytes)).toBe(type);
  });

  it.each([
    ['plain text', ascii('hello, I am a PDF, honest')],
    ['a PDF header not at offset 0', ascii(' %PDF-1.4\n')],
    ['"%PDF-" without a version', ascii('%PDF-x')],
    ['a truncated PDF header', ascii('%PDF')],
    ['a PNG signature without IHDR', hex('89504e470d0a1a0a 0000000d 49444154')],
    ['a truncated PNG signature', hex('89504e47')],
    ['JPEG SOI followed by padding', hex('ffd8ffff')],
    ['a GIF', ascii('GIF89a\x01\x00')],
    ['a ZIP (docx, xlsx)', hex('504b0304140006000800')],
    ['an HTML page', ascii('<!DOCTYPE html><html>')],
    ['an ELF executable', hex('7f454c4602010100')],
    ['nothing', new Uint8Array()],
  ] as const)('refuses %s', (_label, bytes) => {
    expect(sniffContentType(bytes)).toBeNull();
  });

  it('sniffing needs no more than SNIFF_BYTES and ignores what follows', () => {
    const pdf = ascii('%PDF-1.7\n');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (tail) => {
        const bytes = new Uint8Array([...pdf, ...tail]);
        expect(sniffContentType(bytes.subarray(0, SNIFF_BYTES))).toBe('application/pdf');
      }),
    );
  });

  it('random bytes are accepted only when they start with a known signature', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: SNIFF_BYTES }), (bytes) => {
        const type = sniffContentType(bytes);
        if (type === 'application/pdf') expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
        if (type === 'image/png') expect(bytes[0]).toBe(0x89);
        if (type === 'image/jpeg') expect([bytes[0], bytes[1], bytes[2]]).toEqual([0xff, 0xd8, 0xff]);
      }),
    );
  });
});
