/**
 * Every setting of the service, read once from the environment and validated at start.
 * Nothing else in the code reads process.env.
 */
import path from 'node:path';
import { integer, type Env } from './configValues.ts';
import { storageSettings, type ArchiveConfig, type DatabaseConfig, type SecretsConfig } from './config/storage.ts';
import { allowedHostProblem, parseAllowedHosts } from './domain/webhooks/addressPolicy.ts';
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

/** Where metrics are served (docs/operators/metrics.md) and whether traces are exported: the OTEL_* variables are in docs/operators/tracing.md. */
interface TelemetryConfig {
  /**
   * METRICS_PORT: the port of the metrics listener (Prometheus text format at /metrics, no API key),
   * separate from the API's. Unset (the default): no listener and no metrics kept; 0 picks a free port.
   */
  metricsPort: number | null;
  /** METRICS_HOST: the address the metrics listener binds (default 127.0.0.1, so it is never public by accident). */
  metricsHost: string;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER: tracing
   * is on when one of them is set (and OTEL_TRACES_EXPORTER is not `none`, OTEL_SDK_DISABLED not
   * `true`). The OpenTelemetry SDK reads the standard OTEL_* variables itself (exporter, headers,
   * sampler, service name): they are listed in `otel` as read here, and handed to it unchanged.
   */
  tracing: boolean;
  /** OTEL_*: every OpenTelemetry variable set, as read once here (what the SDK will use). */
  otel: Record<string, string>;
}

/** Settings of the dashboard's sign-in; see docs/operators/security.md. */
interface DashboardConfig {
  /** DASHBOARD_SESSION_IDLE_MINUTES: a session with no request for this long ends (default 30). */
  sessionIdleMinutes: number;
  /** DASHBOARD_SESSION_ABSOLUTE_HOURS: a session ends this long after sign-in, however active (default 8). */
  sessionAbsoluteHours: number;
  /**
   * DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE: failed sign-ins one email may have
   * a minute from one client address (an IPv6 client by its /64); beyond it sign-ins with that email
   * from that address get 429 until the minute ends, whatever the password (default 5; 0: no limit).
   * A stranger guessing from one address locks out only that address, never the owner elsewhere.
   */
  signInFailuresPerEmailAndAddressPerMinute: number;
  /**
   * DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE: the ceiling for one email from every address
   * together (default 100; 0: no limit). It is set well above the per-address limit, so that no one
   * address can hold an email at it: holding it takes failures from at least
   * ceiling / per-address-limit addresses at once (5 with the defaults).
   */
  signInFailuresPerEmailPerMinute: number;
  /** DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE: the same per client address (an IPv6 client by its /64; default 20; 0: no limit). */
  signInFailuresPerAddressPerMinute: number;
  /**
   * DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: sign-up attempts a minute per client address (an IPv6
   * client by its /64; default 5; 0: no limit). Each runs a memory-hard password hash and may open
   * an account, so it is counted whether it succeeds or not.
   */
  signUpsPerAddressPerMinute: number;
}

/** Settings of webhook delivery; see docs/partners/webhooks.md. */
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

export interface WebhookConfig {
  /**
   * WEBHOOK_ALLOWED_HOSTS: comma-separated host names or IP addresses that endpoints may use even
   * when they resolve to loopback or private addresses, and the only hosts allowed plain http
   * (development and tests: `127.0.0.1,localhost`). Empty (the default): https to public addresses only.
   */
  allowedHosts: string[];
  /** WEBHOOK_CONCURRENCY: deliveries in flight at once, over all endpoints (default 64). */
  concurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: deliveries in flight at once to one endpoint (default 8), so a slow receiver holds up no other. */
  endpointConcurrency: number;
  /** WEBHOOK_POLL_INTERVAL_MS: how often the dispatcher looks for due deliveries besides being woken by a publish (default 200). */
  pollIntervalMs: number;
  /** WEBHOOK_TIMEOUT_MS: a delivery that has no complete answer after this long failed (default 15000). */
  timeoutMs: number;
  /**
   * WEBHOOK_ENDPOINTS_PER_ACCOUNT: endpoints one account may register, enabled or not (default 16;
   * payment and messaging platforms allow 10 to 20 per application). It bounds the fan-out of one event.
   */
  endpointsPerAccount: number;
}

/** Settings of bank verification; see docs/partners/bank-verification.md. */
export interface BankConfig {
  /**
   * BANK_SECRET: the server secret behind the keyed hash of account numbers, sandbox token
   * encryption and partner credential encryption (at least 32 characters). When unset, one is
   * generated once and kept in DATA_DIR/bank-secret.key: a keyed hash needs a key that survives restarts.
   */
  secret: string | null;
  /** BANK_PARTNER_ALLOWED_HOSTS: comma-separated hosts exempt from the https + public-address rule (tests, local partners). */
  partnerAllowedHosts: string[];
  /** BANK_PARTNER_TIMEOUT_MS: each call to a partner's API gives up after this long (default 5000). */
  partnerTimeoutMs: number;
  /** BANK_PARTNER_MAX_ATTEMPTS: tries per partner call when it answers 5xx or the connection fails (default 3). */
  partnerMaxAttempts: number;
  /** BANK_PARTNER_RETRY_BASE_MS: first backoff between tries, doubled each time (default 200). */
  partnerRetryBaseMs: number;
  /** BANK_SANDBOX_TOKEN_TTL_SECONDS: lifetime of sandbox tokens minted by the admin CLI (default 3600). */
  sandboxTokenTtlSeconds: number;
  /**
   * BANK_AUTH_FAILURES_PER_CLIENT_PER_MINUTE: bank tokens that may fail authentication a minute
   * from one client address (an IPv6 client by its /64); beyond it that address gets 429 on
   * POST /v1/banks/verify, before its token is looked at, until the minute ends (default 20; 0: no limit).
   */
  authFailuresPerClientPerMinute: number;
  /**
   * BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE: tokens one `http` partner may refuse a minute, all
   * clients together; beyond it tokens not yet proven are not sent to that partner (429) until the
   * minute ends, so junk tokens never make the service hammer a partner (default 300; 0: no limit).
   */
  authFailuresPerPartnerPerMinute: number;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

interface RequestLogConfig {
  /**
   * REQUEST_LOGS: `on` (default) records every /v1 request a key of an account makes, in batches
   * after the answers; `off` records nothing (the API and the dashboard then show only what was
   * recorded before). See docs/operators/request-logs.md.
   */
  enabled: boolean;
  /** REQUEST_LOG_RETENTION_DAYS: how long request log entries are kept (default 30, from 1 to 3650); older ones are deleted in the background. */
  retentionDays: number;
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

  const bankSecret = env.BANK_SECRET?.trim() || null;
  if (bankSecret !== null && bankSecret.length < 32) problems.push('BANK_SECRET must be at least 32 characters (e.g. openssl rand -base64 32)');
  const bank: BankConfig = {
    secret: bankSecret,
    partnerAllowedHosts: parseAllowedHosts(env.BANK_PARTNER_ALLOWED_HOSTS),
    partnerTimeoutMs: integer(env, 'BANK_PARTNER_TIMEOUT_MS', 5000, 50, 60_000, problems),
    partnerMaxAttempts: integer(env, 'BANK_PARTNER_MAX_ATTEMPTS', 3, 1, 10, problems),
    partnerRetryBaseMs: integer(env, 'BANK_PARTNER_RETRY_BASE_MS', 200, 0, 10_000, problems),
    sandboxTokenTtlSeconds: integer(env, 'BANK_SANDBOX_TOKEN_TTL_SECONDS', 3600, 60, 86_400, problems),
    authFailuresPerClientPerMinute: integer(env, 'BANK_AUTH_FAILURES_PER_CLIENT_PER_MINUTE', 20, 0, 1_000_000, problems),
    authFailuresPerPartnerPerMinute: integer(env, 'BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE', 300, 0, 1_000_000, problems),
  };

  const webhooks: WebhookConfig = {
    allowedHosts: parseAllowedHosts(env.WEBHOOK_ALLOWED_HOSTS),
    concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 64, 1, 1024, problems),
    endpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 8, 1, 256, problems),
    pollIntervalMs: integer(env, 'WEBHOOK_POLL_INTERVAL_MS', 200, 10, 60_000, problems),
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000, problems),
    endpointsPerAccount: integer(env, 'WEBHOOK_ENDPOINTS_PER_ACCOUNT', 16, 1, 1000, problems),
  };
  for (const host of webhooks.allowedHosts) {
    const problem = allowedHostProblem(host);
    if (problem) problems.push(`WEBHOOK_ALLOWED_HOSTS: ${problem}`);
  }

  const eventRetentionDays = integer(env, 'EVENT_RETENTION_DAYS', 30, 7, 3650, problems);
  const auditRetentionDays = integer(env, 'AUDIT_RETENTION_DAYS', 400, 30, 36500, problems);

  const requestLogsRaw = (env.REQUEST_LOGS?.trim() || 'on').toLowerCase();
  if (requestLogsRaw !== 'on' && requestLogsRaw !== 'off') problems.push(`REQUEST_LOGS must be on or off, got "${env.REQUEST_LOGS}"`);
  const requestLogs: RequestLogConfig = {
    enabled: requestLogsRaw !== 'off',
    retentionDays: integer(env, 'REQUEST_LOG_RETENTION_DAYS', 30, 1, 3650, problems),
  };

  const rateLocks: RateLockConfig = {
    expiringLeadHours: integer(env, 'RATE_LOCK_EXPIRING_LEAD_HOURS', 72, 1, 720, problems),
    sweepIntervalMs: integer(env, 'RATE_LOCK_SWEEP_INTERVAL_MS', 60_000, 100, 3_600_000, problems),
  };

  const loanEstimateTimeZone = env.LOAN_ESTIMATE_TIME_ZONE?.trim() || 'America/New_York';
  if (!isKnownTimeZone(loanEstimateTimeZone)) problems.push(`LOAN_ESTIMATE_TIME_ZONE must be an IANA time zone such as America/Chicago, got "${env.LOAN_ESTIMATE_TIME_ZONE}"`);

  const documentMaxBytes = integer(env, 'DOCUMENT_MAX_BYTES', 20 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems);
  const exportBatchSize = integer(env, 'EXPORT_BATCH_SIZE', 1000, 1, 100_000, problems);

  const { secrets, storageProbeIntervalMs, database, archive } = storageSettings(env, cwd, dataDir, problems);

  const dashboard: DashboardConfig = {
    sessionIdleMinutes: integer(env, 'DASHBOARD_SESSION_IDLE_MINUTES', 30, 1, 24 * 60, problems),
    sessionAbsoluteHours: integer(env, 'DASHBOARD_SESSION_ABSOLUTE_HOURS', 8, 1, 30 * 24, problems),
    signInFailuresPerEmailAndAddressPerMinute: integer(env, 'DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE', 5, 0, 1_000_000, problems),
    signInFailuresPerEmailPerMinute: integer(env, 'DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE', 100, 0, 1_000_000, problems),
    signInFailuresPerAddressPerMinute: integer(env, 'DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE', 20, 0, 1_000_000, problems),
    signUpsPerAddressPerMinute: integer(env, 'DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE', 5, 0, 1_000_000, problems),
  };

  const metricsPortText = env.METRICS_PORT?.trim() || null;
  const metricsPort = metricsPortText === null ? null : Number(metricsPortText);
  if (metricsPort !== null && !(/^\d{1,5}$/.test(metricsPortText!) && metricsPort <= 65535)) problems.push(`METRICS_PORT must be a port number from 0 to 65535, got "${env.METRICS_PORT}"`);
  const telemetry: TelemetryConfig = { metricsPort, metricsHost: env.METRICS_HOST?.trim() || '127.0.0.1', ...tracingConfig(env, problems) };

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

/** The OTLP protocols the traces exporter speaks (src/observability/tracingSdk.ts). */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'];

/** Whether traces are exported, and the OTEL_* variables as read (handed to the OpenTelemetry SDK). */
function tracingConfig(env: Env, problems: string[]): Pick<TelemetryConfig, 'tracing' | 'otel'> {
  const otel: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith('OTEL_') && value !== undefined && value.trim() !== '') otel[name] = value.trim();
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
    const protocol = otel[name];
    if (protocol !== undefined && !OTLP_PROTOCOLS.includes(protocol.toLowerCase())) {
      problems.push(`${name} must be ${OTLP_PROTOCOLS.join(' or ')} (grpc is not supported), got "${protocol}"`);
    }
  }
  const exporter = otel.OTEL_TRACES_EXPORTER?.toLowerCase();
  const tracing =
    otel.OTEL_SDK_DISABLED?.toLowerCase() !== 'true' &&
    exporter !== 'none' &&
    (exporter !== undefined || otel.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined);
  return { tracing, otel };
}
