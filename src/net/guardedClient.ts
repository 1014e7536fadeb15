/**
 * The one outbound HTTP client (webhook deliveries and bank partners), guarded against
 * server-side request forgery at connect time: the address actually connected to is the one
 * checked.
 *
 * - A host on the allow-list connects wherever it resolves, and only it may use plain `http`.
 * - Any other host: an IP literal is checked before connecting (`publicLiteral`); a name is
 *   resolved by the connector's own `lookup` (`guardedLookup`), which refuses the connection
 *   unless every address is public (so a DNS answer that changes between registration and the
 *   call is caught).
 * - Redirects are never followed (a 3xx is an answer like any other), the whole exchange is
 *   bounded by the timeout, and at most `maxResponseBytes` of an answer are read (the rest is
 *   dropped with the connection).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, buildConnector, request } from 'undici';
import { normaliseHost } from '../domain/webhooks/addressPolicy.ts';
import { AddressNotAllowedError, guardedLookup, publicLiteral, systemResolver, type Resolver } from './resolve.ts';

/** The URL's scheme is not allowed for its host (nothing was resolved or sent). */
export class SchemeNotAllowedError extends Error {
  readonly code = 'ESCHEMENOTALLOWED';
  constructor(protocol: string, host: string) {
    super(`scheme ${protocol} not allowed for ${host}`);
    this.name = 'SchemeNotAllowedError';
  }
}

export interface GuardedClientOptions {
  /** Hosts exempt from the address check (and the only ones that may use plain http). */
  allowedHosts: readonly string[];
  /** Bounds the whole exchange: connecting, the headers and reading the body. */
  timeoutMs: number;
  /** Connections kept per origin; default no limit. */
  connectionsPerOrigin?: number;
  /** How long an idle connection is kept; default 4 s. */
  keepAliveTimeoutMs?: number;
  /** DNS for the connect-time guard (tests map names to loopback). */
  resolve?: Resolver;
  /** Largest part of an answer read (the rest is dropped with the connection); default 64 KiB. */
  maxResponseBytes?: number;
  /** Sent as User-Agent unless the call's headers name another. */
  userAgent?: string;
}

export interface GuardedRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | null;
  /** Aborts the call early (besides the timeout). */
  signal?: AbortSignal;
}

export interface GuardedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The answer's body, at most `maxResponseBytes` of it. */
  body: Buffer;
  /** The answer was (or declared itself) larger than `maxResponseBytes`: `body` is not all of it. */
  truncated: boolean;
}

/** What `post` reports: it never throws for the receiver's faults. */
export interface PostOutcome {
  /** The receiver's status code, or null when no answer came (refused, timed out, ...). */
  statusCode: number | null;
  /** The receiver's Retry-After header, if any. */
  retryAfter: string | null;
  /** Why the attempt failed before a status code, or null. */
  error: string | null;
  durationMs: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

export class GuardedClient {
  private readonly agent: Agent;
  private readonly allowedHosts: ReadonlySet<string>;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly userAgent: string | undefined;

  constructor(options: GuardedClientOptions) {
    this.allowedHosts = new Set(options.allowedHosts.map(normaliseHost));
    this.timeoutMs = options.timeoutMs;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.userAgent = options.userAgent;
    const timeout = options.timeoutMs;
    const allowed = this.allowedHosts;
    const connect = buildConnector({ timeout, lookup: guardedLookup(allowed, options.resolve ?? systemResolver) } as buildConnector.BuildOptions);
    this.agent = new Agent({
      ...(options.connectionsPerOrigin !== undefined ? { connections: options.connectionsPerOrigin } : {}),
      pipelining: 1,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 4_000,
      connect: (opts, callback) => {
        const host = normaliseHost(opts.hostname);
        if (!allowed.has(host)) {
          // net.connect skips `lookup` for literals: check the address here, before any socket exists.
          try {
            publicLiteral(host);
          } catch (err) {
            return callback(err as Error, null);
          }
        }
        return connect(opts, callback);
      },
    });
  }

  /** Parses `url` and checks its scheme: https, or plain http to an allow-listed host. */
  private target(url: string | URL): URL {
    const parsed = new URL(url);
    const host = normaliseHost(parsed.hostname);
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && this.allowedHosts.has(host))) {
      throw new SchemeNotAllowedError(parsed.protocol, host);
    }
    return parsed;
  }

  /**
   * One call, no redirect followed, bounded by the timeout; reads at most `maxResponseBytes` of
   * the answer. Throws SchemeNotAllowedError, AddressNotAllowedError (possibly as the `cause`),
   * or the transport's error.
   */
  async request(url: string | URL, init: GuardedRequest): Promise<GuardedResponse> {
    const target = this.target(url);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const response = await request(target, {
      method: init.method,
      dispatcher: this.agent,
      headers: { ...(this.userAgent ? { 'user-agent': this.userAgent } : {}), ...init.headers },
      body: init.body ?? null,
      signal: init.signal ? AbortSignal.any([timeout, init.signal]) : timeout,
    });
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > this.maxResponseBytes) {
      response.body.destroy();
      return { statusCode: response.statusCode, headers: response.headers, body: Buffer.alloc(0), truncated: true };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > this.maxResponseBytes) {
        truncated = true;
        response.body.destroy();
        break;
      }
      chunks.push(chunk as Buffer);
    }
    return { statusCode: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), truncated };
  }

  /** POSTs a JSON `body` to `url`; never throws for the receiver's faults, reports them instead. */
  async post(url: string, body: string, headers: Record<string, string>, abort?: AbortSignal): Promise<PostOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = this.target(url);
    } catch (err) {
      const error = err instanceof SchemeNotAllowedError ? err.message : 'invalid url';
      return { statusCode: null, retryAfter: null, error, durationMs: 0 };
    }
    try {
      const response = await this.request(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        ...(abort ? { signal: abort } : {}),
      });
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

type ErrorLike = NodeJS.ErrnoException & { cause?: unknown };

/** The policy's refusal behind `err` (thrown directly or as the transport error's cause), or null. */
export function refusal(err: unknown): AddressNotAllowedError | SchemeNotAllowedError | null {
  const refused = (e: unknown) => e instanceof AddressNotAllowedError || e instanceof SchemeNotAllowedError;
  if (refused(err)) return err as AddressNotAllowedError | SchemeNotAllowedError;
  const cause = (err as ErrorLike | null)?.cause;
  return refused(cause) ? (cause as AddressNotAllowedError | SchemeNotAllowedError) : null;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Did the call give up because the timeout ran out? */
export function isTimeout(err: unknown): boolean {
  const e = err as ErrorLike | null;
  const inner = e?.cause && typeof e.cause === 'object' ? (e.cause as ErrorLike) : undefined;
  return e?.name === 'TimeoutError' || TIMEOUT_CODES.has(e?.code ?? '') || TIMEOUT_CODES.has(inner?.code ?? '');
}

/** A short, secret-free description of why a call got no answer. */
function describeError(err: unknown, timeoutMs: number): string {
  const e = err as ErrorLike | null;
  const inner = e?.cause && typeof e.cause === 'object' ? (e.cause as ErrorLike) : undefined;
  const code = e?.code ?? inner?.code;
  const refused = refusal(err);
  if (refused) return refused.message;
  if (isTimeout(err) || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
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
