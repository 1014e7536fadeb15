/**
 * The SSRF guard's decisions, on tables of addresses and URLs: nothing here resolves a name or
 * opens a socket.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config.ts';
import {
  addressDecision,
  allowedHostProblem,
  isIpLiteral,
  normaliseHost,
  parseAllowedHosts,
  resolvedAddressesDecision,
  specialUseName,
  urlDecision,
} from '../../../../src/domain/webhooks/addressPolicy.ts';

describe('addressDecision', () => {
  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['0.0.0.0', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:a00:1::', '6to4'],
    ['2001:0:4136:e378::1', 'teredo'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::127.0.0.1', 'loopback'],
    ['::a00:1', 'ipv4Compatible'],
  ])('refuses %s (%s)', (address, range) => {
    const verdict = addressDecision(address);
    expect(verdict).toMatchObject({ allowed: false, range });
    expect(verdict.allowed || verdict.reason).toContain('is not a public address');
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '::ffff:8.8.8.8'])('allows the public address %s', (address) => {
    expect(addressDecision(address)).toEqual({ allowed: true });
  });

  it.each(['not-an-ip', '300.1.1.1', '10.1', '0x7f.0.0.1', '2130706433', ''])('refuses %j, which is not a plain IP address', (text) => {
    expect(addressDecision(text)).toMatchObject({ allowed: false, range: 'invalid' });
  });

  it('property: every address in the private, loopback, link-local, CGNAT and multicast IPv4 blocks is refused, in plain and IPv4-mapped form', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const blocked = fc.oneof(
      fc.tuple(octet, octet, octet).map(([b, c, d]) => `10.${b}.${c}.${d}`),
      fc.tuple(fc.integer({ min: 16, max: 31 }), octet, octet).map(([b, c, d]) => `172.${b}.${c}.${d}`),
      fc.tuple(octet, octet).map(([c, d]) => `192.168.${c}.${d}`),
      fc.tuple(octet, octet, octet).map(([b, c, d]) => `127.${b}.${c}.${d}`),
      fc.tuple(octet, octet).map(([c, d]) => `169.254.${c}.${d}`),
      fc.tuple(fc.integer({ min: 64, max: 127 }), octet, octet).map(([b, c, d]) => `100.${b}.${c}.${d}`),
      fc.tuple(fc.integer({ min: 224, max: 239 }), octet, octet, octet).map(([a, b, c, d]) => `${a}.${b}.${c}.${d}`),
    );
    fc.assert(
      fc.property(blocked, (address) => {
        expect(addressDecision(address).allowed).toBe(false);
        expect(addressDecision(`::ffff:${address}`).allowed).toBe(false);
      }),
    );
  });

  it('property: unique-local and link-local IPv6 addresses are refused', () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    const ula = fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), group, group).map(([a, b, c]) => `${a.toString(16)}:${b}:${c}::1`);
    const linkLocal = fc.tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), group).map(([a, b]) => `${a.toString(16)}::${b}`);
    fc.assert(
      fc.property(fc.oneof(ula, linkLocal), (address) => {
        expect(addressDecision(address).allowed).toBe(false);
      }),
    );
  });
});

describe('resolvedAddressesDecision', () => {
  it('refuses a name when any one of its addresses is not public', () => {
    expect(resolvedAddressesDecision('mixed.partner.com', ['8.8.8.8', '10.0.0.1'])).toMatchObject({
      allowed: false,
      reason: 'mixed.partner.com resolves to a non-public address (private network)',
    });
  });
  it('refuses a name with no address, and allows one with only public addresses', () => {
    expect(resolvedAddressesDecision('empty.partner.com', [])).toMatchObject({ allowed: false });
    expect(resolvedAddressesDecision('ok.partner.com', ['8.8.8.8', '2606:4700:4700::1111'])).toEqual({ allowed: true });
  });
});

describe('urlDecision', () => {
  const ALLOWED = ['127.0.0.1', 'localhost'];

  it.each([
    ['https://10.0.0.1/hook', 'webhook_url_not_allowed', /10\.0\.0\.1 is not a public address/],
    ['https://127.0.0.2/hook', 'webhook_url_not_allowed', /127\.0\.0\.2 is not a public address \(loopback\)/],
    ['https://[::1]/hook', 'webhook_url_not_allowed', /loopback/],
    ['https://[::ffff:127.0.0.1]/hook', 'webhook_url_not_allowed', /loopback/],
    ['https://[fc00::1]/hook', 'webhook_url_not_allowed', /unique-local/],
    ['https://169.254.169.254/latest/meta-data', 'webhook_url_not_allowed', /link-local/],
    ['https://100.64.0.1/hook', 'webhook_url_not_allowed', /carrier-grade NAT/],
    ['https://0x0a.0.0.1/hook', 'webhook_url_not_allowed', /10\.0\.0\.1/],
    ['https://167772161/hook', 'webhook_url_not_allowed', /10\.0\.0\.1/],
    ['http://hooks.partner.com/hook', 'webhook_url_not_allowed', /must use https/],
    ['http://127.0.0.2/hook', 'webhook_url_not_allowed', /must use https/],
    ['ftp://hooks.partner.com/hook', 'webhook_url_not_allowed', /must use https, not ftp/],
    ['https://user:pass@hooks.partner.com/hook', 'webhook_url_not_allowed', /user name or password/],
    ['https://api.localhost/hook', 'webhook_url_not_allowed', /loopback name/],
    ['https://printer.local/hook', 'webhook_url_not_allowed', /private-network name/],
    ['https://db.internal/hook', 'webhook_url_not_allowed', /private-network name/],
    ['not a url', 'webhook_url_invalid', /absolute URL/],
    [`https://hooks.partner.com/${'a'.repeat(2100)}`, 'webhook_url_invalid', /at most 2048/],
  ])('refuses %s', (url, code, reason) => {
    const verdict = urlDecision(url, ALLOWED);
    expect(verdict).toMatchObject({ ok: false, code });
    expect(verdict.ok || verdict.reason).toMatch(reason);
  });

  it.each([
    ['https://hooks.partner.com/events', { host: 'hooks.partner.com', allowListed: false, needsResolution: true }],
    ['https://8.8.8.8/events', { host: '8.8.8.8', allowListed: false, needsResolution: false }],
    ['https://[2606:4700:4700::1111]/events', { host: '2606:4700:4700::1111', allowListed: false, needsResolution: false }],
    ['http://127.0.0.1:9000/hooks', { host: '127.0.0.1', allowListed: true, needsResolution: false }],
    ['http://LOCALHOST:9000/hooks', { host: 'localhost', allowListed: true, needsResolution: false }],
    ['https://hooks.harborlending.example/x', { host: 'hooks.harborlending.example', allowListed: false, needsResolution: false }],
  ])('accepts %s', (url, expected) => {
    expect(urlDecision(url, ALLOWED)).toMatchObject({ ok: true, ...expected });
  });

  it('without an allow-list, loopback hosts are refused and plain http is refused for every host', () => {
    expect(urlDecision('http://127.0.0.1:9000/hooks', [])).toMatchObject({ ok: false, code: 'webhook_url_not_allowed' });
    expect(urlDecision('https://127.0.0.1:9000/hooks', [])).toMatchObject({ ok: false, code: 'webhook_url_not_allowed' });
    expect(urlDecision('https://localhost/hooks', [])).toMatchObject({ ok: false, code: 'webhook_url_not_allowed' });
  });

  it('drops a fragment and normalises the URL', () => {
    expect(urlDecision('HTTPS://Hooks.Partner.COM:443/a/../events#frag', [])).toMatchObject({ ok: true, url: 'https://hooks.partner.com/events' });
  });
});

describe('host helpers', () => {
  it('parses WEBHOOK_ALLOWED_HOSTS: trims, lower-cases, drops brackets, duplicates and empties', () => {
    expect(parseAllowedHosts(' 127.0.0.1, LocalHost ,,[::1],localhost.')).toEqual(['127.0.0.1', 'localhost', '::1']);
    expect(parseAllowedHosts(undefined)).toEqual([]);
    expect(parseAllowedHosts('')).toEqual([]);
  });
  it('tells IP literals from names', () => {
    expect(isIpLiteral('10.0.0.1')).toBe(true);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('hooks.partner.com')).toBe(false);
    expect(isIpLiteral('10.1')).toBe(false);
    expect(normaliseHost('[FE80::1]')).toBe('fe80::1');
  });
  it.each([
    ['localhost', 'loopback'],
    ['a.b.localhost', 'loopback'],
    ['x.invalid', 'never-resolves'],
    ['hooks.harborlending.example', 'never-resolves'],
    ['hooks.test', 'never-resolves'],
    ['nas.local', 'private'],
    ['router.home.arpa', 'private'],
    ['hooks.partner.com', null],
    ['localhost.partner.com', null],
  ])('%s is a special-use name: %s', (host, kind) => {
    expect(specialUseName(host)).toBe(kind);
  });
});

describe('WEBHOOK_ALLOWED_HOSTS entries', () => {
  it.each(['127.0.0.1', 'localhost', '::1', 'receiver.partner.com', 'my_host'])('accepts %s', (host) => {
    expect(allowedHostProblem(host)).toBeNull();
  });
  it.each(['http://localhost', 'localhost:9000', 'hooks.partner.com/path', 'a b'])('refuses %s', (host) => {
    expect(allowedHostProblem(host)).toMatch(/is not a host name or IP address/);
  });
  it('loadConfig reports a bad entry and the webhook settings out of range', () => {
    const attempt = () => loadConfig({ WEBHOOK_ALLOWED_HOSTS: 'http://localhost:9000', WEBHOOK_ENDPOINT_CONCURRENCY: '0', WEBHOOK_TIMEOUT_MS: '5' });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        'WEBHOOK_ENDPOINT_CONCURRENCY must be from 1 to 256, got 0',
        'WEBHOOK_TIMEOUT_MS must be from 100 to 60000, got 5',
        'WEBHOOK_ALLOWED_HOSTS: "http://localhost:9000" is not a host name or IP address (no scheme, port or path: e.g. 127.0.0.1,localhost)',
      ]);
    }
  });
  it('loadConfig defaults: no allowed hosts, 64 in flight, 8 per endpoint, 200 ms poll, 15 s timeout, 16 endpoints per account', () => {
    expect(loadConfig({}).webhooks).toEqual({ allowedHosts: [], concurrency: 64, endpointConcurrency: 8, pollIntervalMs: 200, timeoutMs: 15_000, endpointsPerAccount: 16 });
  });
});
