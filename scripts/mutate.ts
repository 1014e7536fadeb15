/**
 * `npm run mutate [-- group…] [-- --force]`: StrykerJS mutation testing of the security-critical
 * modules, one run per group of stryker.config.mjs (all groups when none is named), then the
 * mutation score of every module from the groups' reports. `--force` runs every mutant again
 * instead of only those whose code or tests changed since the last run (incremental mode).
 *
 * Not part of `npm test`. Reports: reports/mutation/<group>/index.html (git-ignored).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTATION_GROUPS as GROUPS } from './mutationGroups.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('--'));
const named = args.filter((a) => !a.startsWith('--'));
const unknown = named.filter((g) => !(g in GROUPS));
if (unknown.length > 0) {
  console.error(`unknown group(s) ${unknown.join(', ')}; the groups are ${Object.keys(GROUPS).join(', ')}`);
  process.exit(2);
}
const groups = named.length > 0 ? named : Object.keys(GROUPS);

let failed = false;
for (const group of groups) {
  const started = Date.now();
  console.log(`\n=== mutation testing: ${group} (${GROUPS[group]!.mutate.join(', ')})`);
  const run = spawnSync('stryker', ['run', 'stryker.config.mjs', ...flags], { cwd: root, stdio: 'inherit', env: { ...process.env, MUTATE_GROUP: group } });
  console.log(`=== ${group}: ${run.status === 0 ? 'done' : `stryker exited with ${run.status ?? run.signal}`} in ${Math.round((Date.now() - started) / 1000)} s`);
  if (run.status !== 0) failed = true;
}

type Status = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';
interface Report {
  files: Record<string, { mutants: Array<{ status: Status }> }>;
}

/** Stryker's mutation score: detected (killed, timed out) out of valid mutants (those, survivors and uncovered). */
function score(counts: Partial<Record<Status, number>>): { detected: number; valid: number } {
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  return { detected, valid: detected + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0) };
}

const rows: Array<[string, Partial<Record<Status, number>>]> = [];
for (const group of Object.keys(GROUPS)) {
  const file = path.join(root, 'reports', 'mutation', group, 'mutation.json');
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  for (const [module, { mutants }] of Object.entries(report.files)) {
    const counts: Partial<Record<Status, number>> = {};
    for (const m of mutants) counts[m.status] = (counts[m.status] ?? 0) + 1;
    rows.push([path.relative(root, path.resolve(root, module)), counts]);
  }
}
if (rows.length > 0) {
  const total: Partial<Record<Status, number>> = {};
  for (const [, counts] of rows) for (const [status, n] of Object.entries(counts)) total[status as Status] = (total[status as Status] ?? 0) + n;
  const line = (name: string, counts: Partial<Record<Status, number>>) => {
    const { detected, valid } = score(counts);
    const pct = valid === 0 ? 'n/a' : `${((100 * detected) / valid).toFixed(1)} %`;
    const cells = [counts.Killed ?? 0, counts.Timeout ?? 0, counts.Survived ?? 0, counts.NoCoverage ?? 0, counts.Ignored ?? 0].map((n) => String(n).padStart(6));
    return `${name.padEnd(44)} ${pct.padStart(8)} ${cells.join(' ')}`;
  };
  console.log(`\n${'module (latest report of each group)'.padEnd(44)} ${'score'.padStart(8)} killed  t/out  surv. no-cov ignored`);
  for (const [name, counts] of rows) console.log(line(name, counts));
  console.log(line('all', total));
}
process.exitCode = failed ? 1 : 0;
