// @ts-check
/**
 * StrykerJS mutation testing of the security-critical modules: `npm run mutate` (scripts/mutate.ts)
 * runs it once per group of scripts/mutationGroups.ts, `npm run mutate -- store sdk` for some groups only. Not part of
 * `npm test`: it takes a long while.
 *
 * Each group's modules are mutated and held to the tests of their own area only (`testFiles`), on
 * the sql.js engine (vitest.mutate.config.ts); every mutant runs the tests that reach it
 * (perTest coverage). Without the groups, a mutant of the journal or of the edge would run every
 * API test file of the list, each starting an app: hours on two cores instead of minutes.
 *
 * Reports go to reports/mutation/<group>/ (git-ignored): index.html to browse, mutation.json for
 * tools (scripts/mutate.ts sums them up per module), and the incremental file a next run starts
 * from (only mutants whose code or tests changed are run again; `npm run mutate -- --force` runs all).
 *
 * Left out on purpose: src/services/rateLimits.ts (the counters instances share run on PostgreSQL
 * only, so a sql.js run would leave them uncovered; test/postgres/scaleOut.test.ts holds them).
 */

import { MUTATION_GROUPS as GROUPS } from './scripts/mutationGroups.ts';

const name = process.env.MUTATE_GROUP ?? '';
const group = GROUPS[name];
if (!group) throw new Error(`MUTATE_GROUP must be one of ${Object.keys(GROUPS).join(', ')} (run npm run mutate)`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  mutate: group.mutate,
  testFiles: group.testFiles,
  coverageAnalysis: 'perTest',
  // A mutant reached only while a module loads or a beforeAll sets up (never inside a test) would
  // need every test file of the group run again for it. Those are left out (reported as Ignored);
  // a mutant reached both there and in tests runs against the tests that reach it, active in
  // their beforeAll hooks too.
  ignoreStatic: true,
  // Two cores: two workers, each running one test file at a time.
  concurrency: 2,
  // A mutant's tests get their normal time times timeoutFactor plus timeoutMS before it counts as timed out (an endless loop).
  timeoutMS: 20_000,
  timeoutFactor: 2,
  incremental: true,
  incrementalFile: `reports/mutation/${name}/stryker-incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${name}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  tempDirName: `.stryker-tmp/${name}`,
  thresholds: { high: 90, low: 85, break: null },
};
