/**
 * The problem codes the service can answer over HTTP, found by reading src/: every `fail.*(…)` and
 * `problems.*(…)` call, every `new AppError(…)` and `new ApiProblem(…)`, each with the status it
 * gets. A code passed as a variable must be resolved in INDIRECT_CODES, so a new way of making a
 * problem cannot slip past test/contract/problemCodes.test.ts unnoticed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './server.ts';

/** The status each `fail.*` constructor of src/errors.ts gives (via the kind's mapping in src/http/problem.ts). */
const FAIL_STATUS: Record<string, number> = {
  validation: 400,
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  denied: 403,
  notFound: 404,
  conflict: 409,
  unsupportedMediaType: 415,
  refused: 422,
  rateLimited: 429,
  upstreamFailed: 502,
  unavailable: 503,
};
/** `fail.*` constructors whose code is fixed, or their default when no code is passed. */
const FAIL_FIXED: Record<string, string> = {
  validation: 'validation_failed',
  unauthenticated: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'not_found',
  unsupportedMediaType: 'unsupported_media_type',
};
/** `problems.*` constructors of src/http/problem.ts: the status, and the code when it is fixed. */
const PROBLEMS: Record<string, { status: number; code?: string }> = {
  validation: { status: 400, code: 'validation_failed' },
  malformedJson: { status: 400, code: 'malformed_json' },
  badRequest: { status: 400 },
  unauthorized: { status: 401, code: 'unauthorized' },
  forbidden: { status: 403, code: 'forbidden' },
  notFound: { status: 404, code: 'not_found' },
  methodNotAllowed: { status: 405, code: 'method_not_allowed' },
  conflict: { status: 409 },
  payloadTooLarge: { status: 413, code: 'payload_too_large' },
  unsupportedMediaType: { status: 415, code: 'unsupported_media_type' },
  unprocessable: { status: 422 },
  rateLimited: { status: 429, code: 'rate_limited' },
  badGateway: { status: 502 },
  internal: { status: 500, code: 'internal_error' },
};
const KIND_STATUS: Record<string, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  refused: 422,
  rate_limited: 429,
  upstream_failed: 502,
  unavailable: 503,
};

/**
 * Codes passed as a variable, by file and expression: where their values come from. A new entry
 * names the file whose `code: '…'` literals are the values.
 */
const INDIRECT_CODES: Record<string, { from: string }> = {
  'src/services/webhooks.ts verdict.code': { from: 'src/domain/webhooks/addressPolicy.ts' },
};

/**
 * Files whose errors never reach the API: the operator's admin command line and what only it
 * calls (their codes are printed by the CLI), and the dashboard with the use cases only it calls
 * (users, sessions, mfa: their errors are shown on HTML pages, never
 * answered as problems).
 */
const NOT_HTTP = [
  /^src\/cli\//,
  /^src\/services\/bankPartners\.ts$/,
  /^src\/services\/secretsKey\.ts$/,
  /^src\/config\.ts$/,
  /^src\/dashboard\//,
  /^src\/services\/(users|sessions|mfa)\.ts$/,
];

/** Definitions, not uses: the constructors themselves. */
const DEFINITIONS = ['src/errors.ts', 'src/http/problem.ts'];

export interface Found {
  code: string;
  status: number;
  where: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(PROJECT_ROOT, path.join(entry.parentPath, entry.name)));
}

/** The first argument of a call starting at `open` (the index just after the parenthesis), as written. */
function firstArgument(source: string, open: number): { text: string; rest: string } {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < source.length; i += 1) {
    const ch = source[i]!;
    if (quote) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if ('([{'.includes(ch)) depth += 1;
    else if (')]}'.includes(ch)) {
      if (depth === 0) return { text: source.slice(open, i).trim(), rest: '' };
      depth -= 1;
    } else if (ch === ',' && depth === 0) return { text: source.slice(open, i).trim(), rest: source.slice(i + 1) };
  }
  return { text: source.slice(open).trim(), rest: '' };
}

const literal = (text: string): string | null => /^'([a-z][a-z0-9_]*)'$/.exec(text)?.[1] ?? null;

function codesFrom(file: string, expression: string, line: number): string[] {
  const key = `${file} ${expression}`;
  const indirect = INDIRECT_CODES[key];
  if (!indirect) {
    throw new Error(`${file}:${line} passes the problem code as \`${expression}\`: add '${key}' to INDIRECT_CODES in test/contract/problemCodes.test.ts, naming where its values come from`);
  }
  const source = readFileSync(path.join(PROJECT_ROOT, indirect.from), 'utf8');
  return [...source.matchAll(/code: '([a-z][a-z0-9_]*)'/g)].map((m) => m[1]!);
}

/** Every (code, status) the source under src/ can answer over HTTP. */
export function codesInSource(): Found[] {
  const found: Found[] = [];
  for (const file of sourceFiles('src')) {
    if (DEFINITIONS.includes(file) || NOT_HTTP.some((pattern) => pattern.test(file))) continue;
    const source = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
    const lineOf = (index: number) => source.slice(0, index).split('\n').length;
    const add = (codes: string[], status: number, index: number) => {
      for (const code of codes) found.push({ code, status, where: `${file}:${lineOf(index)}` });
    };
    const imports = (name: string, module: string) => new RegExp(`import \\{[^}]*\\b${name}\\b[^}]*\\} from '[^']*/${module}'`).test(source);
    const resolve = (text: string, index: number) => literal(text) ?? codesFrom(file, text, lineOf(index));

    for (const m of imports('fail', 'errors\\.ts') ? source.matchAll(/\bfail\.(\w+)\(/g) : []) {
      const kind = m[1]!;
      const status = FAIL_STATUS[kind];
      if (status === undefined) throw new Error(`${file}:${lineOf(m.index)}: fail.${kind} is not known to this test; add it to FAIL_STATUS`);
      const open = m.index + m[0].length;
      if (kind === 'notFound') {
        const { rest } = firstArgument(source, open);
        const second = rest ? firstArgument(rest, 0).text : '';
        add(second ? [resolve(second, m.index)].flat() : ['not_found'], status, m.index);
      } else if (FAIL_FIXED[kind]) add([FAIL_FIXED[kind]!], status, m.index);
      else add([resolve(firstArgument(source, open).text, m.index)].flat(), status, m.index);
    }
    for (const m of imports('problems', 'problem\\.ts') ? source.matchAll(/\bproblems\.(\w+)\(/g) : []) {
      const known = PROBLEMS[m[1]!];
      if (!known) throw new Error(`${file}:${lineOf(m.index)}: problems.${m[1]} is not known to this test; add it to PROBLEMS`);
      add(known.code ? [known.code] : [resolve(firstArgument(source, m.index + m[0].length).text, m.index)].flat(), known.status, m.index);
    }
    for (const m of source.matchAll(/\bnew AppError\(\s*'(\w+)',\s*/g)) {
      add([resolve(firstArgument(source, m.index + m[0].length).text, m.index)].flat(), KIND_STATUS[m[1]!]!, m.index);
    }
    for (const m of source.matchAll(/\bnew ApiProblem\(\s*(\d{3}),\s*/g)) {
      add([resolve(firstArgument(source, m.index + m[0].length).text, m.index)].flat(), Number(m[1]), m.index);
    }
  }
  return found;
}

