/**
 * Where the service may send webhook deliveries: the decisions behind the SSRF guard, pure (no
 * DNS, no sockets), so they are tested with tables of addresses without connecting anywhere.
 *
 * - An address is public when ipaddr.js classifies it as plain `unicast`: loopback, private,
 *   link-local, carrier-grade NAT, multicast, broadcast, unspecified, reserved and documentation
 *   ranges, unique-local IPv6 and the IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64,
 *   6to4, Teredo) are not. An IPv4-mapped address is judged as the IPv4 address it carries.
 * - A URL must be `https` to a public host. Hosts the operator lists in WEBHOOK_ALLOWED_HOSTS
 *   are exempt from the address check, and only they may use plain `http`.
 */
import ipaddr from 'ipaddr.js';

export type AddressVerdict = { allowed: true } | { allowed: false; range: string; reason: string };

/** Lower-case, without IPv6 brackets or a trailing dot: the form hosts are compared in. */
export function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** Parses WEBHOOK_ALLOWED_HOSTS (comma-separated host names or IP addresses). */
export function parseAllowedHosts(raw: string | undefined): string[] {
  if (!raw) return [];
  return [...new Set(raw.split(',').map(normaliseHost).filter((h) => h !== ''))];
}

/** Why an entry of WEBHOOK_ALLOWED_HOSTS is not a bare host name or IP address, or null when it is. */
export function allowedHostProblem(host: string): string | null {
  if (isIpLiteral(host)) return null;
  if (/^[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?)*$/.test(host) && host.length <= 253) return null;
  return `"${host}" is not a host name or IP address (no scheme, port or path: e.g. 127.0.0.1,localhost)`;
}

/** True when `host` is an IP address literal (IPv4 dotted quad or IPv6, brackets allowed). */
export function isIpLiteral(host: string): boolean {
  const h = normaliseHost(host);
  return ipaddr.IPv4.isValidFourPartDecimal(h) || ipaddr.IPv6.isValid(h);
}

/** May a delivery connect to this resolved address (of a host that is not allow-listed)? */
export function addressDecision(address: string): AddressVerdict {
  const text = normaliseHost(address);
  // Only the canonical forms DNS answers use: a dotted quad or IPv6 (never 0x7f.1 or 2130706433).
  if (!ipaddr.IPv4.isValidFourPartDecimal(text) && !(text.includes(':') && ipaddr.IPv6.isValid(text))) {
    return { allowed: false, range: 'invalid', reason: `${address} is not an IP address` };
  }
  const parsed = ipaddr.process(text); // an IPv4-mapped IPv6 address becomes the IPv4 address it carries
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291) is "unicast" to ipaddr.js, but carries
  // an IPv4 address all the same; no public service is reached that way, so refuse the whole ::/96.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) {
    const range = (parsed as ipaddr.IPv6).range();
    if (range === 'unicast') return { allowed: false, range: 'ipv4Compatible', reason: `${address} is not a public address (IPv4-compatible IPv6)` };
  }
  const range = parsed.range();
  if (range === 'unicast') return { allowed: true };
  const shown = parsed.kind() === 'ipv4' && text !== parsed.toString() ? `${address} (${parsed.toString()})` : address;
  return { allowed: false, range, reason: `${shown} is not a public address (${RANGE_NAMES[range] ?? range})` };
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private network',
  reserved: 'reserved or documentation range',
  as112: 'AS112 sink',
  amt: 'AMT relay',
  uniqueLocal: 'unique-local IPv6',
  ipv4Mapped: 'IPv4-mapped',
  deprecatedSiteLocal: 'site-local IPv6',
  discard: 'discard-only',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  as112v6: 'AS112 sink',
  deprecatedOrchid: 'ORCHID',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'DRIP',
  segmentRouting: 'segment routing',
};

/**
 * Names that never go to DNS (RFC 6761 and the special-use registry): `localhost` names are the
 * loopback, `.invalid`/`.example`/`.test` names never resolve on the public internet, and
 * `.local`/`.internal`/`.home.arpa`/`.lan` names are private by definition.
 */
export type SpecialName = 'loopback' | 'never-resolves' | 'private';

export function specialUseName(host: string): SpecialName | null {
  const h = normaliseHost(host);
  const tld = (suffix: string) => h === suffix || h.endsWith(`.${suffix}`);
  if (tld('localhost')) return 'loopback';
  if (tld('invalid') || tld('example') || tld('test')) return 'never-resolves';
  if (tld('local') || tld('internal') || tld('home.arpa') || tld('lan') || tld('intranet') || tld('corp')) return 'private';
  return null;
}

export type UrlVerdict =
  | {
      ok: true;
      /** The URL as it will be stored and called (WHATWG-normalised). */
      url: string;
      host: string;
      /** The host is on WEBHOOK_ALLOWED_HOSTS: no address check. */
      allowListed: boolean;
      /** The host still has to be resolved (and every address checked) before it is known to be safe. */
      needsResolution: boolean;
    }
  | { ok: false; code: 'webhook_url_invalid' | 'webhook_url_not_allowed'; reason: string };

const MAX_URL_LENGTH = 2048;

/** Checks an endpoint URL before any DNS lookup: form, scheme, credentials, literal addresses, special names. */
export function urlDecision(raw: string, allowedHosts: readonly string[]): UrlVerdict {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, code: 'webhook_url_invalid', reason: `url must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, code: 'webhook_url_invalid', reason: 'url must be an absolute URL such as https://hooks.example.com/mortgage-events' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, code: 'webhook_url_not_allowed', reason: `url must use https, not ${url.protocol.replace(/:$/, '')}` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, code: 'webhook_url_not_allowed', reason: 'url must not carry a user name or password' };
  }
  const host = normaliseHost(url.hostname);
  const allowListed = allowedHosts.includes(host);
  if (url.protocol === 'http:' && !allowListed) {
    return { ok: false, code: 'webhook_url_not_allowed', reason: 'url must use https (plain http is allowed only for hosts the operator lists in WEBHOOK_ALLOWED_HOSTS)' };
  }
  url.hash = '';
  if (allowListed) return { ok: true, url: url.toString(), host, allowListed, needsResolution: false };
  if (isIpLiteral(host)) {
    const verdict = addressDecision(host);
    if (!verdict.allowed) return { ok: false, code: 'webhook_url_not_allowed', reason: `url host ${verdict.reason}` };
    return { ok: true, url: url.toString(), host, allowListed, needsResolution: false };
  }
  const special = specialUseName(host);
  if (special === 'loopback' || special === 'private') {
    return { ok: false, code: 'webhook_url_not_allowed', reason: `url host ${host} is a ${special === 'loopback' ? 'loopback' : 'private-network'} name` };
  }
  return { ok: true, url: url.toString(), host, allowListed, needsResolution: special === null };
}

/**
 * The check made at connect time for a host that is not allow-listed: every address it resolved
 * to must be public (one bad answer refuses them all: a name that mixes public and private
 * answers is not to be trusted).
 */
export function resolvedAddressesDecision(host: string, addresses: readonly string[]): AddressVerdict {
  if (addresses.length === 0) return { allowed: false, range: 'none', reason: `${host} resolved to no address` };
  for (const address of addresses) {
    const verdict = addressDecision(address);
    if (!verdict.allowed) {
      // The address itself stays out of the reason: callers see it, and it would map internal DNS for them.
      return { allowed: false, range: verdict.range, reason: `${host} resolves to a non-public address (${RANGE_NAMES[verdict.range] ?? verdict.range})` };
    }
  }
  return { allowed: true };
}
