import { defineConfig } from 'vitest/config';

/**
 * Two projects: `sqljs` runs every test on the embedded engine; `postgres` runs the API suite and
 * the contract harnesses again (and the dashboard's HTTP tests: sessions, sign-in limits and the
 * pages' use cases live in the database there) with TEST_ENGINE=postgres (each app on a database of its own, see
 * test/helpers/testApp.ts), plus the tests that need PostgreSQL itself (test/postgres/).
 */
const POSTGRES_ONLY = ['test/postgres/**/*.test.ts'];
/** API tests of the sql.js data directory itself (its files, disk, lock and admin socket): nothing of theirs exists on PostgreSQL. */
const SQLJS_DATA_DIR_ONLY = ['test/api/archive.test.ts', 'test/api/fullDisk.test.ts', 'test/api/dataDirDamage.test.ts', 'test/api/adminSocket.test.ts', 'test/api/backup.test.ts', 'test/api/backupVerify.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // API tests start real servers on loopback; two cores run two files at once comfortably.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'reports/vitest.json' }]] : ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'sqljs', include: ['test/**/*.test.ts'], exclude: POSTGRES_ONLY, env: { TEST_ENGINE: 'sqljs' } },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/api/**/*.test.ts', 'test/dashboard/security.test.ts', 'test/dashboard/prototypePollution.test.ts', 'test/dashboard/environments.test.ts', 'test/dashboard/integrations.test.ts', 'test/dashboard/audit.test.ts', 'test/dashboard/mfa.test.ts', 'test/dashboard/routeAccess.test.ts', 'test/dashboard/sessionRenewal.test.ts', 'test/dashboard/requestLogs.test.ts', 'test/dashboard/desk.test.ts', 'test/contract/authMatrix.test.ts', 'test/contract/scopeMatrix.test.ts', 'test/contract/badInput.test.ts', 'test/contract/coverage.test.ts', 'test/store/**/*.test.ts', ...POSTGRES_ONLY],
          exclude: SQLJS_DATA_DIR_ONLY,
          env: { TEST_ENGINE: 'postgres' },
        },
      },
    ],
  },
});
