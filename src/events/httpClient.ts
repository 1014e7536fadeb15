/**
 * The HTTP client that delivers webhooks, guarded against server-side request forgery at connect
 * time: the address actually connected to is the one checked.
 *
 * - A host on WEBHOOK_ALLOWED_HOSTS connects wherever it resolves.
 * - Any other host: an IP literal is checked before connecting; a name is resolved by the
 *   connector's own `lookup`, which refuses the connection unless every address is public
 *   (so a DNS answer that changes between registration and delivery is caught).
 * - Redirects are not followed (a 3xx is a failed attempt), the whole exchange is bounded by the
 *   timeout, and at most 64 KiB of the answer is read, then thrown away.
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, buildConnector, request } from 'undici';
import {
  addressDecision,
  isIpLiteral,
  normaliseHost,
  resolvedAddressesDecision,
  specialUseName,
} from '../domain/webhooks/addressPolicy.ts';

/** A DNS resolver with the shape of `dns.lookup` called with `{ all: true }`. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** The connection was refused by the address policy (nothing was sent). */
export class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
  constructor(reason: string) {
    super(`address not allowed: ${reason}`);
    this.name = 'AddressNotAllowedError';
  }
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}

/**
 * Resolves a host that is not allow-listed, without asking DNS about names that are loopback,
 * private or never resolve by definition (RFC 6761), and checks every address. Rejects with
 * AddressNotAllowedError or the resolver's error.
 */
export async function resolvePublic(hostname: string, resolve: Resolver): Promise<LookupAddress[]> {
  const host = normaliseHost(hostname);
  if (isIpLiteral(host)) {
    const verdict = addressDecision(host);
    if (!verdict.allowed) throw new AddressNotAllowedError(verdict.reason);
    return [{ address: host, family: host.includes(':') ? 6 : 4 }];
  }
  const special = specialUseName(host);
  if (special === 'never-resolves') throw notFound(host);
  if (special !== null) throw new AddressNotAllowedError(`${host} is a ${special === 'loopback' ? 'loopback' : 'private-network'} name`);
  const addresses = await resolve(host);
  const verdict = resolvedAddressesDecision(host, addresses.map((a) => a.address));
  if (!verdict.allowed) throw new AddressNotAllowedError(verdict.reason);
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls.connect that answers from `resolve`, checking the addresses unless `check` is false. */
function connectLookup(resolve: Resolver, check: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const found = check ? resolvePublic(hostname, resolve) : resolve(normaliseHost(hostname));
    found.then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) return callback(notFound(hostname), '');
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

export interface DeliveryResponse {
  /** The receiver's status code, or null when no answer came (refused, timed out, ...). */
  statusCode: number | null;
  /** The receiver's Retry-After header, if any. */
  retryAfter: string | null;
  /** Why the attempt failed before a status code, or null. */
  error: string | null;
  durationMs: number;
}

export interface SafeHttpClientOptions {
  allowedHosts: readonly string[];
  timeoutMs: number;
  /** Connections kept per origin (the endpoint concurrency limit). */
  connectionsPerOrigin: number;
  resolve?: Resolver;
  /** Largest part of an answer read (the rest is dropped with the connection); default 64 KiB. */
  maxResponseBytes?: number;
}

export const USER_AGENT = 'mortgage-origination-webhooks/1.0';

export class SafeHttpClient {
  private readonly agent: Agent;
  private readonly allowedHosts: ReadonlySet<string>;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;

  constructor(options: SafeHttpClientOptions) {
    this.allowedHosts = new Set(options.allowedHosts.map(normaliseHost));
    this.timeoutMs = options.timeoutMs;
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
    const resolve = options.resolve ?? systemResolver;
    const timeout = options.timeoutMs;
    const guarded = buildConnector({ timeout, lookup: connectLookup(resolve, true) } as buildConnector.BuildOptions);
    const trusted = buildConnector({ timeout, lookup: connectLookup(resolve, false) } as buildConnector.BuildOptions);
    const allowed = this.allowedHosts;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      pipelining: 1,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 4_000,
      connect: (opts, callback) => {
        const host = normaliseHost(opts.hostname);
        if (allowed.has(host)) return trusted(opts, callback);
        if (isIpLiteral(host)) {
          // net.connect skips `lookup` for literals: check the address here, before any socket exists.
          const verdict = addressDecision(host);
          if (!verdict.allowed) return callback(new AddressNotAllowedError(verdict.reason), null);
        }
        return guarded(opts, callback);
      },
    });
  }

  /** POSTs `body` to `url`; never throws for the receiver's faults, reports them instead. */
  async post(url: string, body: string, headers: Record<string, string>, abort?: AbortSignal): Promise<DeliveryResponse> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { statusCode: null, retryAfter: null, error: 'invalid url', durationMs: 0 };
    }
    const host = normaliseHost(parsed.hostname);
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && this.allowedHosts.has(host))) {
      return { statusCode: null, retryAfter: null, error: `scheme ${parsed.protocol} not allowed for ${host}`, durationMs: 0 };
    }
    try {
      const response = await request(parsed, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        body,
        signal: abort ? AbortSignal.any([AbortSignal.timeout(this.timeoutMs), abort]) : AbortSignal.timeout(this.timeoutMs),
      });
      let read = 0;
      for await (const chunk of response.body) {
        read += (chunk as Buffer).length;
        if (read > this.maxResponseBytes) {
          response.body.destroy();
          break;
        }
      }
      const retryAfter = response.headers['retry-after'];
      return {
        statusCode: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? (retryAfter[0] ?? null) : (retryAfter ?? null),
        error: null,
        durationMs: elapsed(),
      };
    } catch (err) {
      return { statusCode: null, retryAfter: null, error: describeError(err, this.timeoutMs), durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** A short, secret-free description of why an attempt got no answer. */
export function describeError(err: unknown, timeoutMs: number): string {
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const inner = e?.cause && typeof e.cause === 'object' ? e.cause : undefined;
  const code = e?.code ?? inner?.code;
  const name = e?.name;
  if (e instanceof AddressNotAllowedError || inner instanceof AddressNotAllowedError) return (inner instanceof AddressNotAllowedError ? inner : e).message;
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `timed out after ${timeoutMs} ms`;
  }
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      if (typeof e?.message === 'string' && /certificate|SSL|TLS/i.test(e.message)) return `TLS error: ${e.message.slice(0, 200)}`;
      return code ? `request failed (${code})` : `request failed: ${String(e?.message ?? err).slice(0, 200)}`;
  }
}
