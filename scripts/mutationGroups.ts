/**
 * The groups of `npm run mutate` (stryker.config.mjs, scripts/mutate.ts): the modules each mutates
 * and the test files it holds them to (vitest.mutate.config.ts runs them). Each group lists its
 * unit tests first: the mutation run takes the files in this order.
 */
export interface MutationGroup {
  mutate: string[];
  testFiles: string[];
}

export const MUTATION_GROUPS: Record<string, MutationGroup> = {
  dashboard: {
    mutate: ['src/dashboard/security.ts', 'src/dashboard/forms.ts'],
    // Not integrations.test.ts too: the settings forms it posts are decoded in forms.test.ts, and
    // each of its runs (a sign-up and an invitation) doubled the cost of every dashboard mutant.
    testFiles: ['test/unit/dashboard/securityChecks.test.ts', 'test/dashboard/forms.test.ts', 'test/dashboard/security.test.ts'],
  },
  // What each dashboard route needs (routeAccess.ts), checked on the matched route: the form's
  // token, the sessions still owing a code or an enrolment, the step-up; and the session's new id
  // and token at every change of privilege.
  dashboardAccess: {
    // sessions.ts and mfa.ts: the lines the probe fixes changed (session renewal at every change of
    // privilege); the whole files are the `trust` audit's, and take hours through the dashboard's tests.
    mutate: ['src/dashboard/routeAccess.ts', 'src/dashboard/mfaGate.ts', 'src/dashboard/index.ts', 'src/services/sessions.ts:90-110', 'src/services/mfa.ts:175-290'],
    testFiles: [
      'test/unit/dashboard/routeAccess.test.ts',
      'test/dashboard/secondFactorService.test.ts',
      'test/dashboard/pipeline.test.ts',
      'test/dashboard/routeAccess.test.ts',
      'test/dashboard/sessionRenewal.test.ts',
      'test/dashboard/mfa.test.ts',
      'test/dashboard/security.test.ts',
      'test/api/auditMfa.test.ts',
    ],
  },
  // The edge's authentication: API keys and bank tokens.
  edge: {
    mutate: [
      'src/http/security.ts',
      'src/services/authentication.ts',
      'src/services/bankVerification.ts:104-136', // bankTokenAuthenticator
    ],
    testFiles: [
      'test/unit/http/security.test.ts',
      'test/unit/services/apiKeyCache.test.ts',
      'test/api/banks/rateLimit.test.ts',
      'test/api/apiKeys.test.ts',
      'test/api/banks/verification.test.ts',
      'test/contract/authMatrix.test.ts',
    ],
  },
  // Rate limits: per API key and partner, and the counters under them.
  limits: {
    mutate: ['src/http/rateLimit.ts', 'src/domain/limits/windowCounter.ts', 'src/domain/limits/clientAddress.ts'],
    testFiles: ['test/unit/http/rateLimit.test.ts', 'test/unit/domain/limits/windowCounter.test.ts', 'test/api/banks/rateLimit.test.ts', 'test/api/edge.test.ts'],
  },
  idempotency: {
    mutate: ['src/http/idempotency.ts', 'src/store/idempotency.ts'],
    testFiles: ['test/unit/http/idempotency.test.ts', 'test/api/idempotency.test.ts'],
  },
  store: {
    mutate: ['src/store/core/sealing.ts', 'src/store/sqljs/journal.ts', 'src/store/sqljs/journalRecords.ts'],
    testFiles: ['test/unit/store/core/sealing.test.ts', 'test/unit/store/sqljs/journalRecords.test.ts', 'test/unit/store/sqljs/sqljsStore.test.ts', 'test/api/secretsAtRest.test.ts'],
  },
  // Rate locks and the test clock: the lock arithmetic, durations, and the conditional transitions.
  rateLocks: {
    mutate: ['src/domain/rateLocks/lock.ts', 'src/domain/time/isoDuration.ts', 'src/store/rateLocks.ts', 'src/services/rateLocks.ts'],
    testFiles: ['test/unit/domain/rateLocks/lock.test.ts', 'test/unit/domain/time/isoDuration.test.ts', 'test/api/rateLocks.test.ts', 'test/api/testClock.test.ts'],
  },
  // Restricted keys' scopes: what a key may call, the checker that holds admin operations to
  // scopes no member operation needs, and escalation (requiredScopes.test.ts runs the checker in a
  // child process, out of the mutant's reach, so the unit tests hold the checker's rule).
  scopes: {
    mutate: ['src/domain/accounts/scopes.ts'],
    testFiles: ['test/unit/domain/accounts/scopes.test.ts', 'test/api/conditions.test.ts', 'test/api/apiKeys.test.ts'],
  },
  // The embedded store's backup file: its frame, its checksum and HMAC, and the checks of verify and restore.
  backups: {
    mutate: ['src/store/sqljs/backupFormat.ts', 'src/store/sqljs/backupFile.ts', 'src/store/sqljs/backupCheck.ts', 'src/store/sqljs/backupKeys.ts', 'src/services/backups.ts'],
    testFiles: [
      'test/unit/store/sqljs/backupFormat.test.ts',
      'test/unit/store/sqljs/backupFile.test.ts',
      'test/unit/services/backups.test.ts',
      'test/unit/services/backupRoundTrip.test.ts',
      'test/api/backupVerify.test.ts',
      'test/api/backup.test.ts',
    ],
  },
  // The request log: the per-minute budget, the entries' bounds, the batch rows, and request ids.
  requestLogs: {
    mutate: ['src/domain/limits/requestLogBudget.ts', 'src/services/requestLogs.ts', 'src/store/requestLogs.ts', 'src/http/requestId.ts'],
    testFiles: [
      'test/unit/domain/limits/requestLogBudget.test.ts',
      'test/unit/services/requestLogRecorder.test.ts',
      'test/unit/services/requestLogFlush.test.ts',
      'test/store/requestLogBatches.test.ts',
      'test/store/requestLogQueries.test.ts',
      'test/api/requestLogs.test.ts',
      'test/api/requestLogFlood.test.ts',
      'test/api/edge.test.ts',
    ],
  },
  // The audit log's tamper evidence: the hash chain, the MACs of its head and anchor, the key they are made under.
  audit: {
    mutate: ['src/domain/audit/chain.ts', 'src/domain/audit/anchors.ts', 'src/domain/keys/derivedKeys.ts', 'src/store/auditAnchors.ts'],
    testFiles: [
      'test/unit/domain/audit/chain.test.ts',
      'test/unit/domain/audit/anchors.test.ts',
      'test/unit/domain/keys/derivedKeys.test.ts',
      'test/store/auditAnchors.test.ts',
      'test/api/auditAnchors.test.ts',
      'test/api/auditChain.test.ts',
    ],
  },
  // The embedded store's continuous archive: its files, the plans made from their names, the archiver and the restore.
  archive: {
    mutate: ['src/store/sqljs/archive/archiveFile.ts', 'src/store/sqljs/archive/archivePlan.ts', 'src/store/sqljs/archive/archiver.ts', 'src/store/sqljs/archive/restoreArchive.ts'],
    testFiles: [
      'test/unit/store/sqljs/archiveFormat.test.ts',
      'test/unit/store/sqljs/archiveRestore.test.ts',
      'test/unit/store/sqljs/archiver.test.ts',
      'test/unit/store/sqljs/archive.test.ts',
    ],
  },
  // The APR over an odd first period (Appendix J) and the dates it is counted from: the lines of the
  // fixed-point search that the first period changed, and the Loan Estimate figures that use it.
  disclosures: {
    mutate: ['src/domain/disclosures/firstPeriod.ts', 'src/domain/pricing/aprFixedPoint.ts:40-145', 'src/domain/disclosures/loanEstimateFigures.ts:125-155'],
    testFiles: [
      'test/unit/domain/disclosures/firstPeriod.test.ts',
      'test/unit/domain/pricing/aprFirstPeriod.test.ts',
      'test/unit/domain/disclosures/loanEstimateFigures.test.ts',
      'test/unit/domain/pricing/apr.test.ts',
    ],
  },
  sdk: {
    mutate: ['sdk/src/retry.ts', 'sdk/src/webhooks.ts'],
    testFiles: ['test/sdk/retry.test.ts', 'test/sdk/webhookVerification.test.ts', 'test/sdk/sdk.test.ts'],
  },
};
