/**
 * Reads the API test sources for the coverage check "every operation has a test that calls it":
 * a `describe('<operationId>', …)` block counts only when it holds at least one test (`it`/`test`)
 * and, inside the block, calls the operation, directly or through a helper function of the same
 * file (helpers that call helpers included).
 *
 * A call is either the typed client's `.METHOD('<path template>'` (openapi-fetch, as most tests
 * call), or a raw request whose literal path (`'/v1/…'`, `` `${base}/v1/…/${id}` ``) fits the
 * template, with the method named in a `method: '…'` within the same call (GET when none is).
 *
 * This is a reading of source text, not a parser: it skips strings, template literals and
 * comments when it matches braces, which is what these files need.
 */

export interface OperationRef {
  operationId: string;
  method: string;
  pathTemplate: string;
}

/** The index just past the bracket that closes the one at `open` (`{`, `(` or `[`), skipping strings and comments. */
function closingIndex(source: string, open: number): number {
  const pairs: Record<string, string> = { '{': '}', '(': ')', '[': ']' };
  const stack: string[] = [];
  let i = open;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/') {
      i = source.indexOf('\n', i);
      if (i < 0) return source.length;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      i = source.indexOf('*/', i + 2);
      if (i < 0) return source.length;
      i += 2;
      continue;
    }
    if (c === "'" || c === '"') {
      i = stringEnd(source, i);
      continue;
    }
    if (c === '`') {
      i = templateEnd(source, i);
      continue;
    }
    if (pairs[c]) stack.push(pairs[c]!);
    else if (c === '}' || c === ')' || c === ']') {
      stack.pop();
      if (stack.length === 0) return i + 1;
    }
    i++;
  }
  return source.length;
}

function stringEnd(source: string, start: number): number {
  const quote = source[start];
  let i = start + 1;
  while (i < source.length && source[i] !== quote && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
  return i + 1;
}

function templateEnd(source: string, start: number): number {
  let i = start + 1;
  while (i < source.length && source[i] !== '`') {
    if (source[i] === '\\') i += 2;
    else if (source[i] === '$' && source[i + 1] === '{') i = closingIndex(source, i + 1);
    else i++;
  }
  return i + 1;
}

/** The text of `describe('<name>', …)`'s callback for every describe block of `source`, by name. */
export function describeBlocks(source: string): Array<{ name: string; body: string }> {
  const blocks: Array<{ name: string; body: string }> = [];
  for (const match of source.matchAll(/\bdescribe(?:\.\w+)*\(\s*(['"`])([^'"`]+)\1/g)) {
    const open = source.indexOf('{', match.index! + match[0].length);
    if (open < 0) continue;
    blocks.push({ name: match[2]!, body: source.slice(open, closingIndex(source, open)) });
  }
  return blocks;
}

/** Whether `text` holds at least one test. */
function holdsTest(text: string): boolean {
  return /\b(?:it|test)(?:\.\w+)*\(/.test(text);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function templateRegExp(pathTemplate: string): RegExp {
  const pattern = pathTemplate
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : escapeRegExp(part)))
    .join('');
  return new RegExp(`^${pattern}$`);
}

/** Whether `text` calls the operation itself (not through a helper). */
function callsDirectly(text: string, op: OperationRef): boolean {
  const method = op.method.toUpperCase();
  const typed = new RegExp(`\\.${method}\\(\\s*(['"\`])${escapeRegExp(op.pathTemplate)}\\1`);
  if (typed.test(text)) return true;
  const fits = templateRegExp(op.pathTemplate);
  // Literal paths: the part from /v1 to the end of the literal or its query; ${…} stands for a segment.
  for (const literal of stringLiterals(text)) {
    const raw = literal.content.replace(/\$\{[^}]*\}/g, 'x');
    const at = raw.indexOf('/v1');
    if (at < 0) continue;
    const path = raw.slice(at).split('?')[0]!;
    if (!fits.test(path)) continue;
    // The method named in the rest of the same call, if any.
    const rest = text.slice(literal.end);
    const callRest = rest.slice(0, closingIndex(`(${rest}`, 0) - 1);
    const named = /\bmethod:\s*['"`](\w+)['"`]/.exec(callRest);
    if ((named?.[1]?.toUpperCase() ?? 'GET') === method) return true;
  }
  return false;
}

/** The string and template literals of `text`, outside comments, with the index just past each. */
function stringLiterals(text: string): Array<{ content: string; end: number }> {
  const found: Array<{ content: string; end: number }> = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      const end = c === '`' ? templateEnd(text, i) : stringEnd(text, i);
      found.push({ content: text.slice(i + 1, end - 1), end });
      i = end;
    } else i++;
  }
  return found;
}

/** Named functions of a file (`function f(…) {…}`, `const f = (…) => …`) and their bodies. */
function helperFunctions(source: string): Map<string, string> {
  const helpers = new Map<string, string>();
  for (const match of source.matchAll(/\b(?:async\s+)?function\s+(\w+)\s*(?:<[^>]*>)?\s*\(/g)) {
    const paramsEnd = closingIndex(source, match.index! + match[0].length - 1);
    const open = bodyStart(source, paramsEnd);
    if (open >= 0) helpers.set(match[1]!, source.slice(open, closingIndex(source, open)));
  }
  for (const match of source.matchAll(/\bconst\s+(\w+)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:\(|\w+\s*=>)/g)) {
    const arrow = source.indexOf('=>', match.index! + match[0].length - 1);
    if (arrow < 0) continue;
    let start = arrow + 2;
    while (/\s/.test(source[start] ?? '')) start++;
    const end = '{(['.includes(source[start] ?? '') ? closingIndex(source, start) : lineEnd(source, start);
    helpers.set(match[1]!, source.slice(start, end));
  }
  return helpers;
}

/** The `{` that opens a function body after its parameter list, skipping a return type annotation. */
function bodyStart(source: string, from: number): number {
  let angle = 0;
  for (let i = from; i < source.length; i++) {
    const c = source[i]!;
    if (c === '<') angle++;
    else if (c === '>' && source[i - 1] !== '=') angle--;
    else if (c === '{') {
      if (angle === 0) return i;
      i = closingIndex(source, i) - 1;
    } else if (c === ';') return -1;
  }
  return -1;
}

function lineEnd(source: string, from: number): number {
  const end = source.indexOf('\n', from);
  return end < 0 ? source.length : end;
}

/** The helper functions of a file that call the operation, directly or through one another. */
function callingHelpers(helpers: Map<string, string>, op: OperationRef): Set<string> {
  const calling = new Set<string>();
  for (const [name, body] of helpers) if (callsDirectly(body, op)) calling.add(name);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, body] of helpers) {
      if (calling.has(name)) continue;
      if ([...calling].some((helper) => new RegExp(`\\b${helper}\\(`).test(body))) {
        calling.add(name);
        changed = true;
      }
    }
  }
  return calling;
}

/** Whether a describe block of `source` named after the operation holds a test and calls the operation. */
export function testsOperation(source: string, op: OperationRef): boolean {
  const blocks = describeBlocks(source).filter((block) => block.name === op.operationId);
  if (blocks.length === 0) return false;
  const helpers = callingHelpers(helperFunctions(source), op);
  return blocks.some(
    (block) => holdsTest(block.body) && (callsDirectly(block.body, op) || [...helpers].some((helper) => new RegExp(`\\b${helper}\\(`).test(block.body))),
  );
}
