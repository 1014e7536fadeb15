/** A notice as a self-contained HTML page: every value escaped, no script, no outside resource. */
import { noticeSections, type NoticeContent } from './notice.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export function renderNoticeHtml(notice: NoticeContent): string {
  const body = noticeSections(notice)
    .map((section) => {
      const heading = section.heading === null ? '' : `<h2>${escape(section.heading)}</h2>\n`;
      const bullets = section.lines.every((line) => line.startsWith('- '));
      const lines = bullets
        ? `<ul>\n${section.lines.map((line) => `<li>${escape(line.slice(2))}</li>`).join('\n')}\n</ul>`
        : section.lines.map((line) => `<p>${escape(line)}</p>`).join('\n');
      return `<section>\n${heading}${lines}\n</section>`;
    })
    .join('\n');
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    `<title>Notice of action taken: ${escape(notice.mortgageId)}</title>\n` +
    '<style>body{font-family:Helvetica,Arial,sans-serif;max-width:42rem;margin:2rem auto;line-height:1.4}h2{font-size:1.1rem}</style>\n' +
    `</head>\n<body>\n<main>\n${body}\n</main>\n</body>\n</html>\n`
  );
}
