import { defineConfig } from 'vitest/config';

/**
 * Three projects: `sqljs` runs every test on the embedded engine; `postgres` runs the API suite and
 * the contract harnesses again (and the dashboard's HTTP tests: sessions, sign-in limits and the
 * pages' use cases live in the database there) with TEST_ENGINE=postgres (each app on a database of its own, see
 * test/helpers/testApp.ts), plus the tests that need PostgreSQL itself (test/postgres/).
 */
const POSTGRES_ONLY = ['test/postgres/**/*.test.ts'];
/** API tests of the sql.js data directory itself (its files, disk, lock and admin socket): nothing of theirs exists on PostgreSQL. */
/**
 * The `pgbouncer` project: a representative set of the PostgreSQL suite again, every database
 * reached through PgBouncer in transaction mode (TEST_POOLER=pgbouncer, test/helpers/engine.ts).
 * Not the whole suite: CI's time on 2 cores is the limit (about a minute more). Chosen for what a
 * transaction pooler breaks: scaleOut (two processes: one Idempotency-Key at once, 20 concurrent
 * submits with one winner, SIGKILL with nothing lost, NOTIFY invalidating remembered rate sheets,
 * the shared rate limits, the outbox's claims), the audit chain's head lock with two instances,
 * and exports (COPY and cursors on the session connection). idempotency, races and
 * apiKeyRevocation pass through it too (checked by hand: `npx vitest run --project pgbouncer FILE`).
 */
const THROUGH_PGBOUNCER = ['test/postgres/scaleOut.test.ts', 'test/postgres/auditChain.test.ts', 'test/api/exports/exports.test.ts'];
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
          include: ['test/api/**/*.test.ts', 'test/dashboard/security.test.ts', 'test/dashboard/prototypePollution.test.ts', 'test/dashboard/environments.test.ts', 'test/dashboard/integrations.test.ts', 'test/dashboard/audit.test.ts', 'test/dashboard/mfa.test.ts', 'test/dashboard/routeAccess.test.ts', 'test/dashboard/sessionRenewal.test.ts', 'test/dashboard/secondFactorService.test.ts', 'test/dashboard/pipeline.test.ts', 'test/dashboard/requestLogs.test.ts', 'test/dashboard/desk.test.ts', 'test/dashboard/loanEstimatesDue.test.ts', 'test/dashboard/lender.test.ts', 'test/contract/authMatrix.test.ts', 'test/contract/scopeMatrix.test.ts', 'test/contract/badInput.test.ts', 'test/contract/coverage.test.ts', 'test/store/**/*.test.ts', ...POSTGRES_ONLY],
          exclude: SQLJS_DATA_DIR_ONLY,
          env: { TEST_ENGINE: 'postgres' },
        },
      },
      {
        extends: true,
        test: { name: 'pgbouncer', include: THROUGH_PGBOUNCER, env: { TEST_ENGINE: 'postgres', TEST_POOLER: 'pgbouncer' } },
      },
    ],
  },
});
