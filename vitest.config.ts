import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // API tests start real servers on loopback; two cores run two files at once comfortably.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'reports/vitest.json' }]] : ['default'],
  },
});
