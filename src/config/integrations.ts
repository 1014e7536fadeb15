/**
 * The settings of the service's calls out: webhook delivery and the bank partners. Read by
 * loadConfig (src/config.ts) from the same environment, kept apart by concern;
 * docs/operators/configuration.md renders these comments too (scripts/config-docs.ts).
 */
import { integer, type Env } from '../configValues.ts';
import { allowedHostProblem, parseAllowedHosts } from '../domain/webhooks/addressPolicy.ts';

/** Settings of webhook delivery; see docs/partners/webhooks.md. */
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

export function integrationSettings(env: Env, problems: string[]): { bank: BankConfig; webhooks: WebhookConfig } {
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
  return { bank, webhooks };
}
