import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import { MUTATION_GROUPS } from './scripts/mutationGroups.ts';

/**
 * The tests `npm run mutate` (StrykerJS, stryker.config.mjs) runs against the mutants: only the
 * files of its groups (scripts/mutationGroups.ts; each group narrows them to its own), on the
 * sql.js engine only: the PostgreSQL project of vitest.config.ts runs the same API tests again,
 * and one engine is enough to tell a mutant from the original.
 */
const TEST_FILES = [...new Set(Object.values(MUTATION_GROUPS).flatMap((group) => group.testFiles))];

/**
 * Files run in the order the groups list them, unit tests first: Stryker stops at a mutant's first
 * failing test, so a mutant a unit test kills costs milliseconds instead of an app's start
 * (vitest's own order runs the longest files first).
 */
class ListedOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => TEST_FILES.indexOf(relative(this.ctx.config.root, spec.moduleId));
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    name: 'mutate-sqljs',
    include: TEST_FILES,
    env: { TEST_ENGINE: 'sqljs' },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    sequence: { sequencer: ListedOrder },
  },
});
