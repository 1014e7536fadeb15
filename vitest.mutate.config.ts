import { defineConfig } from 'vitest/config';
import { MUTATION_GROUPS } from './scripts/mutationGroups.ts';

/**
 * The tests `npm run mutate` (StrykerJS, stryker.config.mjs) runs against the mutants: only the
 * files of its groups (scripts/mutationGroups.ts; each group narrows them to its own), on the
 * sql.js engine only: the PostgreSQL project of vitest.config.ts runs the same API tests again,
 * and one engine is enough to tell a mutant from the original.
 */
export default defineConfig({
  test: {
    name: 'mutate-sqljs',
    include: [...new Set(Object.values(MUTATION_GROUPS).flatMap((group) => group.testFiles))],
    env: { TEST_ENGINE: 'sqljs' },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
