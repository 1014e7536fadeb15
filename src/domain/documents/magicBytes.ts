/**
 * The type of a document from its leading bytes, never from the client's declared type or file
 * name. Only three kinds are accepted, each by its full signature:
 * - PDF: `%PDF-` at offset 0 followed by a version digit (ISO 32000-2 §7.5.2 allows the header
 *   later in the first 1024 bytes; we accept only offset 0, the form every producer writes).
 * - PNG: the 8-byte signature `89 50 4E 47 0D 0A 1A 0A` and the mandatory first chunk `IHDR`
 *   of length 13 (PNG spec §5.2, §11.2.2).
 * - JPEG: SOI `FF D8` followed by the start of another marker `FF xx` (ITU T.81 Annex B).
 */
import type { SniffedContentType } from './types.ts';

/** How many leading bytes sniffing needs. */
export const SNIFF_BYTES = 16;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IHDR = [0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52];
const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

function startsWith(bytes: Uint8Array, expected: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + expected.length) return false;
  return expected.every((byte, i) => bytes[offset + i] === byte);
}

export function sniffContentType(head: Uint8Array): SniffedContentType | null {
  if (startsWith(head, PDF_HEADER) && head.length > 5 && head[5]! >= 0x30 && head[5]! <= 0x39) return 'application/pdf';
  if (startsWith(head, PNG_SIGNATURE) && startsWith(head, IHDR, 8)) return 'image/png';
  // 0xFF 0xD8, then a marker: 0xFF followed by a marker code (never 0x00 or 0xFF padding in this position).
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff && head[3] !== 0x00 && head[3] !== 0xff) {
    return 'image/jpeg';
  }
  return null;
}
