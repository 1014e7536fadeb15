/**
 * Name resolution under the address policy (src/domain/webhooks/addressPolicy.ts), for every
 * outbound connection the service makes (webhook deliveries, bank partners) and for the checks
 * made when an endpoint is registered.
 *
 * - `publicLiteral` is the one check of IP literals: net/tls.connect never calls `lookup` for
 *   them, so the connector calls it before any socket exists, and `resolvePublic` calls it too.
 * - `resolvePublic` resolves a name that is not allow-listed, never asking DNS about special-use
 *   names, and accepts the answer only when every address is public.
 * - `guardedLookup` is the `lookup` given to net/tls.connect: allow-listed hosts resolve wherever
 *   they point, every other host through `resolvePublic`, so the address connected to is the one
 *   checked (a DNS answer that changed since registration is caught).
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
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
 * The one check of an IP literal host (of a host that is not allow-listed): null when `host` is
 * a name, the address when the literal is public; throws AddressNotAllowedError otherwise.
 */
export function publicLiteral(hostname: string): LookupAddress | null {
  const host = normaliseHost(hostname);
  if (!isIpLiteral(host)) return null;
  const verdict = addressDecision(host);
  if (!verdict.allowed) throw new AddressNotAllowedError(verdict.reason);
  return { address: host, family: host.includes(':') ? 6 : 4 };
}

/**
 * Resolves a host that is not allow-listed, without asking DNS about names that are loopback,
 * private or never resolve by definition (RFC 6761), and checks every address. Rejects with
 * AddressNotAllowedError or the resolver's error.
 */
export async function resolvePublic(hostname: string, resolve: Resolver): Promise<LookupAddress[]> {
  const host = normaliseHost(hostname);
  const literal = publicLiteral(host);
  if (literal) return [literal];
  const special = specialUseName(host);
  if (special === 'never-resolves') throw notFound(host);
  if (special !== null) throw new AddressNotAllowedError(`${host} is a ${special === 'loopback' ? 'loopback' : 'private-network'} name`);
  const addresses = await resolve(host);
  const verdict = resolvedAddressesDecision(host, addresses.map((a) => a.address));
  if (!verdict.allowed) throw new AddressNotAllowedError(verdict.reason);
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` for net/tls.connect: an allow-listed host resolves through `resolve` wherever it
 * points, any other host only when every address is public (`resolvePublic`).
 */
export function guardedLookup(allowedHosts: Iterable<string>, resolve: Resolver = systemResolver) {
  const allowed = new Set([...allowedHosts].map(normaliseHost));
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const host = normaliseHost(hostname);
    const found = allowed.has(host) ? resolve(host) : resolvePublic(host, resolve);
    found.then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) return callback(notFound(host), '');
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
