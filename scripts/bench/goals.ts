/**
 * The performance goals of the service (issue 17's table), reported by the benchmark that measures
 * each as soon as it has the figure, so that a later failure does not lose it. `npm run bench`
 * prints them all at the end, every figure beside its goal and "met" or "NOT met". Each figure is
 * a ratio to, or a figure taken beside, a baseline measured in the same run: absolute numbers
 * depend on the machine (and on what else runs on it), ratios much less.
 */

export interface GoalResult {
  /** What is measured, as the table names it. */
  figure: string;
  /** The measured figure and its baseline, as printed ("2,355 vs 14,176 req/s = 0.17×"). */
  measured: string;
  /** The goal as printed ("≥ 0.50×"). */
  goal: string;
  met: boolean;
}

/** Every goal of the table, in its order; a benchmark that did not run leaves its rows "not measured". */
export const GOALS = [
  'GET /v1/account vs bare node:http answering the same JSON',
  'POST /v1/quotes vs GET /v1/account on the same server',
  'POST /v1/quotes vs the Prism mock of the same operation',
  'submit decision p99, 4,000 applications, 50 connections',
  'CSV export, 1,000,000 records, first',
  'CSV export, 1,000,000 records, repeated',
  'RSS growth during the first CSV export',
  'POST /v1/quotes with metrics on (tracing off) vs both off',
  'POST /v1/quotes with metrics and tracing on, 100 % sampled, vs both off',
  // request logs (issue 28)
  'POST /v1/quotes with request logging on vs off',
  // the continuous archive (issue 42): scripts/bench/archive.ts
  'POST /v1/quotes with the continuous archive on vs off',
  'continuous archive: acknowledgement to archive, p99',
  // PostgreSQL (issue 30): scripts/bench/postgres.ts and soak.ts
  'PostgreSQL: POST /v1/quotes vs sql.js, same run',
  'PostgreSQL: GET /v1/account vs sql.js, same run',
  'PostgreSQL: CSV export, 1,000,000 records',
  'PostgreSQL: CSV export in the oldest API version',
  'PostgreSQL: two instances vs one, POST /v1/quotes',
  // many instances on one primary (issue 45): scripts/bench/fleet.ts
  'fleet: 8 instances through PgBouncer vs 2 direct, mixed load',
  'fleet: server connections on the primary',
  'fleet: reads of x-read-replica operations served by the replica',
  'soak, sql.js: drift after the first 2 minutes, errors, webhooks',
  'soak, PostgreSQL: drift after the first 2 minutes, errors, webhooks',
  // API versions (issue 43): scripts/bench/versions.ts
  'GET /v1/applications/{mortgageId} in the oldest version vs the current one',
  'POST /v1/quotes in the oldest version vs the current one',
] as const;

export type GoalFigure = (typeof GOALS)[number];

const results = new Map<GoalFigure, GoalResult>();

export function reportGoal(figure: GoalFigure, measured: string, goal: string, met: boolean): void {
  results.set(figure, { figure, measured, goal, met });
  console.log(`  goal: ${figure}: ${measured} (goal ${goal}): ${met ? 'met' : 'NOT met'}`);
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A change as a signed percentage with one decimal: 0.396 → "+39.6 %". */
export const signedPercent = (x: number): string => `${x >= 0 ? '+' : ''}${fmt(x * 100, 1)} %`;

/** The table of every goal: figure, measured, goal, met / NOT met / not measured. */
export function goalTable(): string {
  const rows = GOALS.map((figure) => {
    const r = results.get(figure);
    return r ? [figure, r.measured, r.goal, r.met ? 'met' : 'NOT met'] : [figure, '—', '', 'not measured'];
  });
  const header = ['figure', 'measured (same run)', 'goal', ''];
  const widths = header.map((h, k) => Math.max(h.length, ...rows.map((row) => row[k]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, k) => c.padEnd(widths[k]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function goalsMeasured(): number {
  return results.size;
}
