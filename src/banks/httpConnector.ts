/**
 * The `http` connector: a partner bank's own API, called over HTTPS with undici.
 *
 * The partner API (see docs/partners/bank-verification.md, "Partner API", for partners):
 * - `POST {baseUrl}token/introspect` with `{ "token": "<partner token>" }` →
 *   `200 { "active": true, "accountRef": "…", "expiresAt": "…" | null }` or `200 { "active": false }`;
 * - `GET {baseUrl}accounts/{accountRef}` →
 *   `200 { "accountRef": "…", "holderName": "…", "accountNumber": "…" }`, `404` when the account is gone.
 * Both carry `Authorization: Bearer <credential>` when the operator stored one for the partner.
 *
 * Everything the partner returns is untrusted input: the status must be the expected one, the
 * content type JSON, the body at most 64 KiB, and the JSON must match a strict schema (no extra
 * fields, bounded strings). Anything else is BankPartnerBadResponse (502), never a guess.
 *
 * Each try gives up after BANK_PARTNER_TIMEOUT_MS. A 5xx answer or a failed connection is tried
 * again, up to BANK_PARTNER_MAX_ATTEMPTS, after BANK_PARTNER_RETRY_BASE_MS doubled each time (with
 * up to 50 % jitter). A timeout is not tried again: the caller is waiting, and a partner that did
 * not answer in time rarely answers the next try sooner.
 *
 * Connections go only where the address policy allows (the webhooks' rules,
 * src/domain/webhooks/addressPolicy.ts, enforced by the one outbound client, src/net/): the base
 * URL is checked before each call, and its host is checked at connect time (an IP literal before
 * connecting, a name resolved with every address public) unless the host is in
 * BANK_PARTNER_ALLOWED_HOSTS. Redirects are not followed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Metrics } from '../observability/metrics.ts';
import { inSpan, SpanKind, type Tracer } from '../observability/tracing.ts';
import type { BankConfig } from '../config/integrations.ts';
import { createAjv } from '../contract/spec.ts';
import { ACCOUNT_NUMBER_PATTERN } from '../domain/banks/accountNumber.ts';
import { partnerBaseUrlDecision } from '../domain/banks/partnerUrl.ts';
import type { Logger } from '../log.ts';
import { GuardedClient, isTimeout, refusal } from '../net/guardedClient.ts';
import { BankPartnerBadResponse, BankPartnerUnavailable, BankTokenRejected, type BankConnector, type BankGrant, type PartnerAccount } from './connector.ts';

export const MAX_PARTNER_RESPONSE_BYTES = 64 * 1024;
const ACCOUNT_REF = { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' } as const;

const ajv = createAjv({ strict: true, allErrors: false });

interface Introspection {
  active: boolean;
  accountRef?: string;
  expiresAt?: string | null;
}

const validateIntrospection = ajv.compile<Introspection>({
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['active', 'accountRef'],
      properties: {
        active: { const: true },
        accountRef: ACCOUNT_REF,
        expiresAt: { anyOf: [{ type: 'string', format: 'date-time', maxLength: 40 }, { type: 'null' }] },
      },
    },
    { type: 'object', additionalProperties: false, required: ['active'], properties: { active: { const: false } } },
  ],
});

const validateAccount = ajv.compile<{ accountRef: string; holderName: string; accountNumber: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['accountRef', 'holderName', 'accountNumber'],
  properties: {
    accountRef: ACCOUNT_REF,
    // Letters, marks, digits, spaces and the punctuation names use; no control characters.
    holderName: { type: 'string', minLength: 1, maxLength: 200, pattern: "^[\\p{L}\\p{M}\\p{N} .,'’\\-]+$" },
    accountNumber: { type: 'string', pattern: ACCOUNT_NUMBER_PATTERN.source },
  },
});

export interface HttpPartner {
  partnerId: string;
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; null for none. */
  credential: string | null;
}

type PartnerConfig = Pick<BankConfig, 'partnerAllowedHosts' | 'partnerTimeoutMs' | 'partnerMaxAttempts' | 'partnerRetryBaseMs'>;

const clients = new Map<string, GuardedClient>();
/** One client (and its connections) per partner configuration, shared by every partner call. */
function clientFor(config: PartnerConfig): GuardedClient {
  const key = `${config.partnerAllowedHosts.join(',')}|${config.partnerTimeoutMs}`;
  let client = clients.get(key);
  if (!client) {
    client = new GuardedClient({
      allowedHosts: config.partnerAllowedHosts,
      timeoutMs: config.partnerTimeoutMs,
      keepAliveTimeoutMs: 10_000,
      maxResponseBytes: MAX_PARTNER_RESPONSE_BYTES,
      userAgent: 'mortgage-origination-bank-verification/1',
    });
    clients.set(key, client);
  }
  return client;
}

interface PartnerAnswer {
  status: number;
  body: unknown;
}

export class HttpConnector implements BankConnector {
  readonly provesLocally = false;
  readonly #partner: HttpPartner;
  readonly #config: PartnerConfig;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #telemetry: { metrics: Metrics | null; tracer: Tracer | null };

  constructor(partner: HttpPartner, config: PartnerConfig, clock: Clock, log: Logger, telemetry: { metrics: Metrics | null; tracer: Tracer | null } = { metrics: null, tracer: null }) {
    this.#telemetry = telemetry;
    this.#partner = partner;
    this.#config = config;
    this.#clock = clock;
    this.#log = log.child({ partnerId: partner.partnerId });
  }

  async authenticate(partnerToken: string): Promise<BankGrant> {
    const answer = await this.#call('introspect', 'POST', 'token/introspect', { token: partnerToken });
    if (answer.status !== 200) throw new BankPartnerBadResponse(`introspection answered ${answer.status}`);
    if (!validateIntrospection(answer.body)) throw new BankPartnerBadResponse(`introspection answer does not match the partner contract (${ajv.errorsText(validateIntrospection.errors)})`);
    const body = answer.body;
    if (!body.active) throw new BankTokenRejected('The bank partner says this token is not active.');
    const expiresAt = body.expiresAt ? new Date(body.expiresAt).toISOString() : null;
    if (expiresAt && Date.parse(expiresAt) <= this.#clock.now().getTime()) throw new BankTokenRejected('The bank token has expired.');
    return { accountRef: body.accountRef!, expiresAt };
  }

  async fetchAccount(grant: BankGrant): Promise<PartnerAccount> {
    const answer = await this.#call('account', 'GET', `accounts/${encodeURIComponent(grant.accountRef)}`);
    if (answer.status === 404) throw new BankTokenRejected('The bank account this token names no longer exists at the partner.');
    if (answer.status !== 200) throw new BankPartnerBadResponse(`account lookup answered ${answer.status}`);
    // The error text names schema paths and rules only, never the values (it could hold an account number).
    if (!validateAccount(answer.body)) throw new BankPartnerBadResponse(`account answer does not match the partner contract (${ajv.errorsText(validateAccount.errors)})`);
    if (answer.body.accountRef !== grant.accountRef) throw new BankPartnerBadResponse('account answer is for another account');
    return { holderName: answer.body.holderName, accountNumber: answer.body.accountNumber };
  }

  /**
   * One partner call with the retry policy, in a span `bank_partner.<name>` (partner id and status;
   * never the token, the credential or the account), counted by outcome.
   */
  #call(name: string, method: 'GET' | 'POST', relativePath: string, json?: unknown): Promise<PartnerAnswer> {
    const { metrics, tracer } = this.#telemetry;
    const started = performance.now();
    const attributes = { 'mos.bank_partner.id': this.#partner.partnerId, 'http.request.method': method };
    return inSpan(tracer, `bank_partner.${name}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      let outcome = 'unavailable';
      try {
        const answer = await this.#retried(name, method, relativePath, json);
        span?.setAttribute('http.response.status_code', answer.status);
        outcome = 'answered';
        return answer;
      } catch (err) {
        if (err instanceof BankPartnerBadResponse) outcome = 'bad_response';
        throw err;
      } finally {
        metrics?.bankPartnerCalls.inc({ call: name, outcome });
        metrics?.bankPartnerCallDuration.observe({ call: name, outcome }, (performance.now() - started) / 1000);
      }
    });
  }

  async #retried(name: string, method: 'GET' | 'POST', relativePath: string, json?: unknown): Promise<PartnerAnswer> {
    const base = partnerBaseUrlDecision(this.#partner.baseUrl, this.#config.partnerAllowedHosts);
    if (!base.ok) throw new BankPartnerUnavailable(`the partner's base URL is not allowed: ${base.reason}`);
    const url = new URL(relativePath, base.url);
    const { partnerMaxAttempts: attempts, partnerRetryBaseMs: baseDelay } = this.#config;
    let lastProblem = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(baseDelay * 2 ** (attempt - 2) * (1 + Math.random() * 0.5));
      const started = performance.now();
      try {
        const answer = await this.#once(method, url, json);
        const fields = { call: name, attempt, status: answer.status, ms: Math.round(performance.now() - started) };
        if (answer.status >= 500) {
          this.#log.warn(fields, 'bank partner answered 5xx');
          lastProblem = `answered ${answer.status}`;
          continue;
        }
        this.#log.debug(fields, 'bank partner answered');
        return answer;
      } catch (err) {
        if (err instanceof BankPartnerBadResponse) throw err;
        const code = (err as { code?: string }).code ?? (err as Error).name;
        this.#log.warn({ call: name, attempt, code, ms: Math.round(performance.now() - started) }, 'bank partner call failed');
        const refused = refusal(err);
        if (refused) throw new BankPartnerUnavailable(`the partner's ${refused.message}`);
        if (isTimeout(err)) throw new BankPartnerUnavailable(`the partner did not answer within ${this.#config.partnerTimeoutMs} ms`);
        lastProblem = `could not be reached (${code})`;
      }
    }
    throw new BankPartnerUnavailable(`the partner ${lastProblem} after ${attempts} tries`);
  }

  async #once(method: 'GET' | 'POST', url: URL, json: unknown): Promise<PartnerAnswer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#partner.credential) headers.authorization = `Bearer ${this.#partner.credential}`;
    if (json !== undefined) headers['content-type'] = 'application/json';
    const response = await clientFor(this.#config).request(url, { method, headers, body: json === undefined ? null : JSON.stringify(json) });
    const status = response.statusCode;
    if (status >= 500 || status === 404) return { status, body: null };
    if (response.truncated) throw new BankPartnerBadResponse(`answer is larger than ${MAX_PARTNER_RESPONSE_BYTES} bytes`);
    if (status !== 200) return { status, body: null };
    const contentType = String(response.headers['content-type'] ?? '');
    if (!/^application\/json\s*(;|$)/i.test(contentType)) throw new BankPartnerBadResponse(`answer has content type "${contentType.slice(0, 60)}", not application/json`);
    try {
      return { status, body: JSON.parse(response.body.toString('utf8')) as unknown };
    } catch {
      throw new BankPartnerBadResponse('answer is not valid JSON');
    }
  }
}
