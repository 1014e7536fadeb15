/**
 * A notice as a PDF (pdf-lib, standard Helvetica: nothing embedded, nothing fetched). The same
 * sections as the HTML, wrapped to the page. Deterministic: its dates are the notice's, so a
 * notice rendered twice is the same bytes. The text is drawn as WinAnsi strings, which the
 * standard fonts can show: a character outside it (a name in another script) is drawn as "?" here
 * and kept whole in the HTML.
 */
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { noticeSections, type NoticeContent } from '../domain/adverseAction/notice.ts';

const PAGE = { width: 612, height: 792 }; // US Letter, points
const MARGIN = 64;
const SIZE = 10.5;
const HEADING_SIZE = 12;
const LEADING = 14;

/** WinAnsi's printable characters beyond ASCII and Latin-1 (cp1252 0x80–0x9F). */
const CP1252_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** `text` with every character Helvetica's WinAnsi encoding cannot draw replaced by "?". */
function winAnsiText(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    out += (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || CP1252_EXTRA.has(ch) ? ch : '?';
  }
  return out;
}

/** Words packed into lines no wider than `width` (a word wider than a line is cut). */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (font.widthOfTextAtSize(candidate, size) <= width) {
      line = candidate;
      continue;
    }
    if (line !== '') lines.push(line);
    let rest = word;
    while (font.widthOfTextAtSize(rest, size) > width) {
      let cut = rest.length - 1;
      while (cut > 1 && font.widthOfTextAtSize(rest.slice(0, cut), size) > width) cut--;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    line = rest;
  }
  if (line !== '') lines.push(line);
  return lines;
}

export async function renderNoticePdf(notice: NoticeContent): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const at = new Date(notice.decidedAt);
  doc.setTitle(`Notice of action taken: ${notice.mortgageId}`);
  doc.setSubject('Adverse action notice (ECOA, 12 CFR 1002.9)');
  doc.setAuthor(winAnsiText(notice.lender.name));
  doc.setProducer('mortgage-origination-service');
  doc.setCreator('mortgage-origination-service');
  doc.setCreationDate(at);
  doc.setModificationDate(at);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const width = PAGE.width - 2 * MARGIN;
  let page: PDFPage = doc.addPage([PAGE.width, PAGE.height]);
  let y = PAGE.height - MARGIN;
  const draw = (text: string, font: PDFFont, size: number) => {
    if (y < MARGIN) {
      page = doc.addPage([PAGE.width, PAGE.height]);
      y = PAGE.height - MARGIN;
    }
    page.drawText(text, { x: MARGIN, y, size, font, color: rgb(0, 0, 0) });
    y -= LEADING;
  };
  for (const section of noticeSections(notice)) {
    if (section.heading !== null) {
      y -= LEADING / 2;
      draw(section.heading, bold, HEADING_SIZE);
    }
    for (const line of section.lines) for (const wrapped of wrap(winAnsiText(line), regular, SIZE, width)) draw(wrapped, regular, SIZE);
  }
  // Object streams off: a plainer file that older readers and text extractors open.
  return doc.save({ useObjectStreams: false });
}
