/**
 * A strict XML 1.0 well-formedness check for the tests, which also returns the element tree.
 * (xmlbuilder2's parser accepts unclosed tags, bare `&` and control characters, so it cannot
 * prove a document well-formed.) It knows what the MISMO writer may emit: an XML declaration,
 * elements, attributes, text, the five predefined entities and character references; anything
 * else (comments, CDATA, DTDs, processing instructions) is refused rather than skipped.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (not its descendants'), entities decoded. */
  text: string;
}

export class NotWellFormed extends Error {}

const NAME = /^[A-Za-z_][A-Za-z0-9._:-]*/;
const ILLEGAL_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function isLegalCodePoint(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/** Decodes references in character data or an attribute value; refuses a bare `&` or `<`. */
function decode(raw: string, where: string): string {
  if (raw.includes('<')) throw new NotWellFormed(`"<" in ${where}`);
  return raw.replace(/&([^;]*);?/g, (match, body: string) => {
    if (!match.endsWith(';')) throw new NotWellFormed(`bare "&" in ${where}`);
    if (body in PREDEFINED) return PREDEFINED[body]!;
    const numeric = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(body);
    if (!numeric) throw new NotWellFormed(`unknown entity &${body}; in ${where}`);
    const cp = numeric[1] !== undefined ? parseInt(numeric[1], 16) : Number(numeric[2]);
    if (!isLegalCodePoint(cp)) throw new NotWellFormed(`character reference to an illegal character in ${where}`);
    return String.fromCodePoint(cp);
  });
}

/** Parses `xml`, throwing NotWellFormed with the reason when it is not well-formed XML 1.0. */
export function parseStrictXml(xml: string): XmlElement {
  const illegal = ILLEGAL_CHAR.exec(xml);
  if (illegal) throw new NotWellFormed(`illegal character U+${illegal[0].charCodeAt(0).toString(16)} at ${illegal.index}`);
  let i = 0;
  if (xml.startsWith('<?xml')) {
    const end = xml.indexOf('?>');
    if (end < 0) throw new NotWellFormed('unterminated XML declaration');
    i = end + 2;
  }
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const text = xml.slice(i, lt < 0 ? xml.length : lt);
    if (text !== '') {
      if (text.includes(']]>')) throw new NotWellFormed('"]]>" in character data');
      const top = stack.at(-1);
      if (top) top.text += decode(text, `text of <${top.name}>`);
      else if (text.trim() !== '') throw new NotWellFormed('text outside the root element');
    }
    if (lt < 0) break;
    i = lt + 1;
    if (xml[i] === '/') {
      const name = NAME.exec(xml.slice(i + 1))?.[0];
      if (!name) throw new NotWellFormed(`bad end tag at ${lt}`);
      i += 1 + name.length;
      while (/\s/.test(xml[i] ?? '')) i++;
      if (xml[i] !== '>') throw new NotWellFormed(`bad end tag </${name} at ${lt}`);
      i++;
      const open = stack.pop();
      if (!open || open.name !== name) throw new NotWellFormed(`</${name}> closes <${open?.name ?? 'nothing'}>`);
      continue;
    }
    const name = NAME.exec(xml.slice(i))?.[0];
    if (!name) throw new NotWellFormed(`"<" not followed by a tag name at ${lt}`);
    i += name.length;
    const element: XmlElement = { name, attributes: {}, children: [], text: '' };
    for (;;) {
      const spaced = /^\s+/.exec(xml.slice(i));
      if (spaced) i += spaced[0].length;
      if (xml.startsWith('/>', i) || xml[i] === '>') break;
      if (!spaced) throw new NotWellFormed(`attributes of <${name}> not separated by space`);
      const attr = /^([A-Za-z_][A-Za-z0-9._:-]*)\s*=\s*("([^"]*)"|'([^']*)')/.exec(xml.slice(i));
      if (!attr) throw new NotWellFormed(`bad attribute in <${name}> at ${i}`);
      if (attr[1]! in element.attributes) throw new NotWellFormed(`attribute ${attr[1]} repeated in <${name}>`);
      element.attributes[attr[1]!] = decode(attr[3] ?? attr[4] ?? '', `attribute ${attr[1]}`);
      i += attr[0].length;
    }
    const parent = stack.at(-1);
    if (parent) parent.children.push(element);
    else if (root) throw new NotWellFormed('a second root element');
    else root = element;
    if (xml.startsWith('/>', i)) i += 2;
    else {
      i += 1;
      stack.push(element);
    }
  }
  if (stack.length > 0) throw new NotWellFormed(`<${stack.at(-1)!.name}> is never closed`);
  if (!root) throw new NotWellFormed('no root element');
  return root;
}

/** The first child named `name` on the path; throws when one is missing. */
export function child(element: XmlElement, ...path: string[]): XmlElement {
  let current = element;
  for (const name of path) {
    const next = current.children.find((c) => c.name === name);
    if (!next) throw new Error(`<${current.name}> has no <${name}>`);
    current = next;
  }
  return current;
}

/** The text of the element at `path` below `element`. */
export function textAt(element: XmlElement, ...path: string[]): string {
  return child(element, ...path).text;
}
