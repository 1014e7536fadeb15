/**
 * The text a PDF draws, read back with pdf-lib itself (it has no text extraction): every page's
 * content streams decoded (FlateDecode), and the strings of their text operators (`<hex> Tj`,
 * `(literal) Tj`) in order, joined by spaces. Enough for the service's own PDFs, which pdf-lib
 * drew with a standard font (one-byte WinAnsi codes).
 */
import { decodePDFRawStream, PDFArray, PDFDocument, PDFRawStream, type PDFStream } from 'pdf-lib';

function streamsOf(contents: PDFStream | PDFArray | undefined, doc: PDFDocument): PDFRawStream[] {
  if (!contents) return [];
  if (contents instanceof PDFArray) return contents.asArray().map((ref) => doc.context.lookup(ref)).filter((s): s is PDFRawStream => s instanceof PDFRawStream);
  return contents instanceof PDFRawStream ? [contents] : [];
}

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

export async function pdfText(bytes: Uint8Array): Promise<{ text: string; pages: number; doc: PDFDocument }> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const parts: string[] = [];
  for (const page of doc.getPages()) {
    for (const stream of streamsOf(page.node.Contents(), doc)) {
      const operators = latin1(decodePDFRawStream(stream).decode());
      for (const m of operators.matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:\\.|[^\\)])*)\)\s*Tj/g)) {
        parts.push(m[1] !== undefined ? latin1(Buffer.from(m[1], 'hex')) : m[2]!.replace(/\\(.)/g, '$1'));
      }
    }
  }
  return { text: parts.join(' '), pages: doc.getPageCount(), doc };
}
