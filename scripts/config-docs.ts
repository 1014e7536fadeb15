/**
 * Renders the configuration reference, docs/operators/configuration.md, from src/config.ts (and
 * the settings it reads through src/config/*.ts):
 * every environment variable `loadConfig` reads, with its default and range (read from the code)
 * and its meaning (the JSDoc comment of the field it fills, which starts with the variable's name:
 * `/** DASHBOARD_SESSION_IDLE_MINUTES: ... *\/`). Fields are grouped by the interface they belong to.
 *
 *   npm run docs:config          writes docs/operators/configuration.md
 *   npm run check:config-docs    renders to a temporary file and fails when the committed page differs
 *
 * It fails, naming the variable, when config.ts reads a variable no comment names, or a comment
 * names a variable config.ts does not read.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = path.join(root, 'src', 'config.ts');
/** Settings kept apart by concern (src/config/storage.ts …): every variable they read and every comment count as config.ts's own. */
const CONFIG_PARTS = path.join(root, 'src', 'config');
const PAGE = path.join(root, 'docs', 'operators', 'configuration.md');
const VARIABLE = /^([A-Z][A-Z0-9_]*[A-Z0-9]):\s*/;

interface Read {
  name: string;
  /** The default as a reader would write it, or null when the code derives it (the comment says how). */
  fallback: string | null;
  range: string | null;
}

interface Documented {
  name: string;
  group: string;
  meaning: string;
}

/** A whole-number expression of the config (`20 * 1024 * 1024`, `60_000`), or null. */
function wholeNumber(node: ts.Expression): number | null {
  const text = node.getText().replace(/_/g, '');
  if (!/^[\d\s*+()-]+$/.test(text)) return null;
  return text.split('*').reduce((product, factor) => product * Number(factor.trim()), 1);
}

/** Every environment variable `loadConfig` reads, in the order it reads them. */
function reads(scope: ts.Node): Read[] {
  const found = new Map<string, Read>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.getText() === 'integer' && node.arguments.length >= 5) {
      const [, nameArg, fallbackArg, minArg, maxArg] = node.arguments;
      if (nameArg && ts.isStringLiteral(nameArg)) {
        const fallback = wholeNumber(fallbackArg!);
        const [min, max] = [wholeNumber(minArg!), wholeNumber(maxArg!)];
        found.set(nameArg.text, {
          name: nameArg.text,
          fallback: fallback === null ? null : `\`${fallback}\``,
          range: min === null || max === null ? null : `${min}–${max}`,
        });
      }
    } else if (ts.isPropertyAccessExpression(node) && node.expression.getText() === 'env' && !found.has(node.name.text)) {
      found.set(node.name.text, { name: node.name.text, fallback: fallbackOf(node), range: null });
    }
    ts.forEachChild(node, visit);
  };
  visit(scope);
  return [...found.values()];
}

/** `env.X?.trim() || 'value'` → `value`; `|| null`, `?? ''` or no fallback → unset; anything else is derived. */
function fallbackOf(read: ts.Node): string | null {
  let node: ts.Node = read;
  while (ts.isPropertyAccessExpression(node.parent) || ts.isCallExpression(node.parent) || ts.isParenthesizedExpression(node.parent)) {
    if (ts.isCallExpression(node.parent) && node.parent.expression !== node) break;
    node = node.parent;
  }
  const parent = node.parent;
  if (!ts.isBinaryExpression(parent) || parent.left !== node) return 'unset';
  const op = parent.operatorToken.kind;
  if (op !== ts.SyntaxKind.BarBarToken && op !== ts.SyntaxKind.QuestionQuestionToken) return 'unset';
  const right = parent.right;
  if (right.kind === ts.SyntaxKind.NullKeyword) return 'unset';
  if (ts.isStringLiteral(right)) return right.text === '' ? 'unset' : `\`${right.text}\``;
  return null;
}

/** The JSDoc comments that name a variable, with the group (the interface's own comment) they belong to. */
function documented(source: ts.SourceFile): { groups: Map<string, string>; variables: Documented[] } {
  const groups = new Map<string, string>();
  const variables: Documented[] = [];
  const text = (node: ts.Node): string =>
    ts
      .getJSDocCommentsAndTags(node)
      .filter(ts.isJSDoc)
      .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
  for (const statement of source.statements) {
    if (!ts.isInterfaceDeclaration(statement)) continue;
    const group = statement.name.text;
    groups.set(group, text(statement));
    for (const member of statement.members) {
      const comment = text(member);
      const match = VARIABLE.exec(comment);
      if (match) variables.push({ name: match[1]!, group, meaning: comment.slice(match[0].length) });
    }
  }
  return { groups, variables };
}

const GROUP_TITLES: Record<string, string> = {
  Config: 'The service',
  DatabaseConfig: 'Database',
  PostgresScaleConfig: 'PostgreSQL: pooler and replicas',
  ArchiveConfig: 'Continuous archive (embedded store)',
  SecretsConfig: 'Secrets at rest',
  WebhookConfig: 'Webhooks',
  RateLockConfig: 'Rate locks',
  BankConfig: 'Bank verification',
  DashboardConfig: 'Dashboard',
  TelemetryConfig: 'Metrics and traces',
  RequestLogConfig: 'Request logs',
};

/** A comment's text for the page: pipes escaped, and `docs/…md` paths made links relative to the page. */
function markdown(text: string): string {
  return text
    .replace(/\|/g, '\\|')
    .replace(/\bdocs\/([\w/.-]+\.md(?:#[\w-]+)?)/g, (_, target: string) => `[docs/${target}](${path.relative(path.dirname(PAGE), path.join(root, 'docs', target))})`);
}

/** The page, as Markdown. */
export async function renderConfigDocs(): Promise<string> {
  const source = ts.createSourceFile(CONFIG, await readFile(CONFIG, 'utf8'), ts.ScriptTarget.Latest, true);
  const loadConfig = source.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'loadConfig');
  if (!loadConfig) throw new Error('src/config.ts has no loadConfig function');
  const read = reads(loadConfig);
  const { groups, variables } = documented(source);
  for (const name of (await readdir(CONFIG_PARTS)).filter((n) => n.endsWith('.ts')).sort()) {
    const file = path.join(CONFIG_PARTS, name);
    const part = ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
    read.push(...reads(part));
    const more = documented(part);
    for (const [group, about] of more.groups) groups.set(group, about);
    variables.push(...more.variables);
  }

  const problems: string[] = [];
  for (const r of read) {
    if (!variables.some((v) => v.name === r.name)) problems.push(`src/config.ts reads ${r.name} but no JSDoc comment names it: start the comment of its field with "${r.name}: "`);
  }
  for (const v of variables) {
    if (!read.some((r) => r.name === v.name)) problems.push(`a JSDoc comment in src/config.ts (${v.group}) names ${v.name}, which loadConfig does not read`);
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));

  const lines = [
    '<!-- Generated by `npm run docs:config` from the JSDoc comments of src/config.ts. Do not edit: edit those comments and regenerate. -->',
    '',
    '# Configuration reference',
    '',
    'Every setting is an environment variable, read once in `src/config.ts` and validated at start: a',
    'bad value stops the service with a message naming the variable (exit code 2). A whole number',
    'outside its range is refused, and an empty value counts as unset.',
    '',
    'Where to set them, and what else an operator needs, is in [the operators\' pages](../README.md#operators).',
  ];
  for (const [group, title] of Object.entries(GROUP_TITLES)) {
    const rows = variables.filter((v) => v.group === group);
    if (rows.length === 0) continue;
    const about = groups.get(group);
    lines.push('', `## ${title}`, '');
    if (group !== 'Config' && about) lines.push(markdown(about), '');
    lines.push('| variable | default | range | meaning |', '|---|---|---|---|');
    for (const v of rows) {
      const r = read.find((x) => x.name === v.name)!;
      lines.push(`| \`${v.name}\` | ${r.fallback ?? 'see meaning'} | ${r.range ?? ''} | ${markdown(v.meaning)} |`);
    }
  }
  const ungrouped = variables.filter((v) => !(v.group in GROUP_TITLES));
  if (ungrouped.length > 0) throw new Error(`give these interfaces a title in scripts/config-docs.ts: ${[...new Set(ungrouped.map((v) => v.group))].join(', ')}`);
  return lines.join('\n') + '\n';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const page = await renderConfigDocs();
  if (process.argv[2] === '--check') {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'config-docs-'));
    try {
      const fresh = path.join(dir, 'configuration.md');
      await writeFile(fresh, page);
      const committed = await readFile(PAGE, 'utf8').catch(() => null);
      if (committed !== (await readFile(fresh, 'utf8'))) {
        console.error('docs/operators/configuration.md is out of date with src/config.ts.\nRun `npm run docs:config` and commit the result.');
        process.exitCode = 1;
      } else {
        console.log('docs/operators/configuration.md matches src/config.ts');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } else {
    await writeFile(PAGE, page);
    console.log(`wrote ${path.relative(process.cwd(), PAGE)}`);
  }
}
