/**
 * Every setting of the service, read once from the environment and validated at start.
 * Nothing else in the code reads process.env.
 */
import path from 'node:path';
import { integer, type Env } from './configValues.ts';
import { storageSettings, type ArchiveConfig, type DatabaseConfig, type SecretsConfig } from './config/storage.ts';
import { dashboardSettings, type DashboardConfig } from './config/dashboard.ts';
import { integrationSettings, type BankConfig, type WebhookConfig } from './config/integrations.ts';
import { requestLogSettings, telemetrySettings, type RequestLogConfig, type TelemetryConfig } from './config/observability.ts';
import { isKnownTimeZone } from './domain/disclosures/businessDays.ts';

export interface Config {
  /** PORT: TCP port to listen on; 0 picks a free one (tests). */
  port: number;
  /** HOST: the address to listen on. */
  host: string;
  /**
   * DATA_DIR: where the database snapshot and journal, uploaded documents, the bank secret and the
   * admin socket live (with DATABASE_URL: only uploads being received and, without BANK_SECRET, the bank secret).
   */
  dataDir: string;
  /** LOG_LEVEL: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; logs are JSON lines (pino). */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** RATE_LIMIT_PER_MINUTE: requests a minute per API key, and per bank partner for tokens proven valid; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** JSON_BODY_LIMIT_BYTES: largest JSON request body accepted, in bytes; larger gets 413. */
  jsonBodyLimitBytes: number;
  /**
   * API_KEYS_PER_ACCOUNT: active (unrevoked) API keys one account may hold (default 100). Rate
   * limits are per key, so without a cap an admin could multiply its allowance by minting keys.
   */
  apiKeysPerAccount: number;
  /**
   * PUBLIC_BASE_URL: the URL partners reach this service at (default `http://HOST:PORT`), used in links
   * the service hands out (document URLs, the dashboard's `curl` commands and invitation links) and as
   * the first server of /openapi.json; when it is https the dashboard's cookies are `Secure` and `__Host-`.
   */
  publicBaseUrl: string;
  /** Bank verification (issue 7). */
  bank: BankConfig;
  /** Webhook delivery (issue 4). */
  webhooks: WebhookConfig;
  /**
   * EVENT_RETENTION_DAYS: how long the account's events stay in the events feed and can be
   * recovered for an endpoint (default 30, from 7 to 3650). Older events, with their deliveries
   * and delivery log, are deleted in the background. At least 7 days, so that retention never
   * takes an event whose delivery the retry schedule (about a day) or the 5-day failing rule is
   * still working on.
   */
  eventRetentionDays: number;
  /**
   * AUDIT_RETENTION_DAYS: how long entries of the audit log are kept (default 400, from 30 to
   * 36500): longer than the events feed, so a year's reviews find every change. Older entries are
   * deleted in the background, oldest first, and the chain remembers the last deleted entry's hash
   * so `audit verify` still checks what is kept (docs/operators/audit-log.md).
   */
  auditRetentionDays: number;
  /** The request log lenders read (GET /v1/request-logs, the dashboard's Request logs page). */
  requestLogs: RequestLogConfig;
  /** Rate locks (issue 29). */
  rateLocks: RateLockConfig;
  /**
   * LOAN_ESTIMATE_TIME_ZONE: the IANA time zone whose days the Loan Estimate's clock counts
   * (default America/New_York): the day an application is received and the end of the third
   * business day after it are days of the lender's offices (docs/partners/loan-estimate.md).
   */
  loanEstimateTimeZone: string;
  /** DOCUMENT_MAX_BYTES: largest document upload accepted, in bytes (default 20 MiB); larger gets 413. */
  documentMaxBytes: number;
  /**
   * EXPORT_BATCH_SIZE: rows an export reads from the store at a time (default 1000). Each batch
   * holds the single-threaded store briefly, so writes wait at most one batch; larger batches
   * export a little faster and hold it longer.
   */
  exportBatchSize: number;
  /** Sealing of secrets at rest (webhook signing secrets, bank partner credentials); see docs/operators/storage-and-recovery.md#secrets-at-rest. */
  secrets: SecretsConfig;
  /** STORAGE_PROBE_INTERVAL_MS: how often a store degraded by a failed disk write tries again (default 1000); its 503s say Retry-After accordingly. */
  storageProbeIntervalMs: number;
  /** Which database engine: PostgreSQL when DATABASE_URL is set, else sql.js in DATA_DIR. */
  database: DatabaseConfig;
  /** Continuous archiving of the embedded store; see docs/operators/backups.md#continuous-archiving. */
  archive: ArchiveConfig;
  /** The dashboard at /dashboard (issue 15); see docs/partners/dashboard.md. */
  dashboard: DashboardConfig;
  /** Metrics and traces (issue 28); see docs/operators/metrics.md and docs/operators/tracing.md. */
  telemetry: TelemetryConfig;
}

/** Settings of rate locks; see docs/partners/rate-locks.md. */
interface RateLockConfig {
  /**
   * RATE_LOCK_EXPIRING_LEAD_HOURS: how long before a rate lock's expiry `rate_lock.expiring` is
   * sent, in hours (default 72, from 1 to 720). The same for every account: a lead time is a
   * notification policy of the service, not a price of the rate sheet.
   */
  expiringLeadHours: number;
  /** RATE_LOCK_SWEEP_INTERVAL_MS: how often the background job expires due locks and sends due warnings (default 60000, from 100 to 3600000). */
  sweepIntervalMs: number;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const port = integer(env, 'PORT', 3000, 0, 65535, problems);
  const host = env.HOST?.trim() || '127.0.0.1';
  const dataDir = path.resolve(cwd, env.DATA_DIR?.trim() || './data');

  const logLevelRaw = (env.LOG_LEVEL?.trim() || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const rateLimitPerMinute = integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000, problems);
  const jsonBodyLimitBytes = integer(env, 'JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024, problems);
  const apiKeysPerAccount = integer(env, 'API_KEYS_PER_ACCOUNT', 100, 1, 100_000, problems);

  const displayHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const explicitBaseUrl = env.PUBLIC_BASE_URL?.trim();
  let publicBaseUrl = explicitBaseUrl || `http://${displayHost}:${port}`;
  try {
    const url = new URL(publicBaseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    publicBaseUrl = url.origin + url.pathname.replace(/\/+$/, '');
  } catch {
    // A derived URL fails only through PORT (reported above) or HOST: name the variable to fix.
    if (explicitBaseUrl) problems.push(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${env.PUBLIC_BASE_URL}"`);
    else if (!problems.some((p) => p.startsWith('PORT '))) problems.push(`HOST must be a host name or IP address, got "${env.HOST}"`);
  }

  const { bank, webhooks } = integrationSettings(env, problems);

  const eventRetentionDays = integer(env, 'EVENT_RETENTION_DAYS', 30, 7, 3650, problems);
  const auditRetentionDays = integer(env, 'AUDIT_RETENTION_DAYS', 400, 30, 36500, problems);

  const requestLogs = requestLogSettings(env, problems);

  const rateLocks: RateLockConfig = {
    expiringLeadHours: integer(env, 'RATE_LOCK_EXPIRING_LEAD_HOURS', 72, 1, 720, problems),
    sweepIntervalMs: integer(env, 'RATE_LOCK_SWEEP_INTERVAL_MS', 60_000, 100, 3_600_000, problems),
  };

  const loanEstimateTimeZone = env.LOAN_ESTIMATE_TIME_ZONE?.trim() || 'America/New_York';
  if (!isKnownTimeZone(loanEstimateTimeZone)) problems.push(`LOAN_ESTIMATE_TIME_ZONE must be an IANA time zone such as America/Chicago, got "${env.LOAN_ESTIMATE_TIME_ZONE}"`);

  const documentMaxBytes = integer(env, 'DOCUMENT_MAX_BYTES', 20 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems);
  const exportBatchSize = integer(env, 'EXPORT_BATCH_SIZE', 1000, 1, 100_000, problems);

  const { secrets, storageProbeIntervalMs, database, archive } = storageSettings(env, cwd, dataDir, problems);

  const dashboard = dashboardSettings(env, problems);
  const telemetry = telemetrySettings(env, problems);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host,
    dataDir,
    logLevel: logLevelRaw as Config['logLevel'],
    rateLimitPerMinute,
    jsonBodyLimitBytes,
    apiKeysPerAccount,
    publicBaseUrl,
    bank,
    webhooks,
    eventRetentionDays,
    auditRetentionDays,
    requestLogs,
    rateLocks,
    loanEstimateTimeZone,
    documentMaxBytes,
    exportBatchSize,
    secrets,
    storageProbeIntervalMs,
    database,
    archive,
    dashboard,
    telemetry,
  };
}
