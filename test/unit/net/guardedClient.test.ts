/**
 * The outbound client's connect-time guard (webhook deliveries and bank partners). Only loopback
 * is ever connected to: names are mapped by a fake resolver, and refused addresses are refused
 * before any socket exists.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedClient, refusal, SchemeNotAllowedError } from '../../../src/net/guardedClient.ts';
import { AddressNotAllowedError, guardedLookup, resolvePublic, type Resolver } from '../../../src/net/resolve.ts';

let server: http.Server;
let port: number;
const seen: string[] = [];
let connections = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.headers.host}${req.url}`);
    if (req.url === '/endless') {
      // An answer that never ends: only a client that stops reading gets past it.
      res.writeHead(200);
      const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024, 120)), 1);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/redirect') {
      res.writeHead(302, { Location: `http://127.0.0.1:${port}/target` });
      res.end();
      return;
    }
    if (req.url === '/large') {
      res.writeHead(200, { 'Content-Length': String(100 * 1024) });
      res.end(Buffer.alloc(100 * 1024, 120));
      return;
    }
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
    res.writeHead(req.url === '/busy' ? 503 : 200, { 'Retry-After': '30' });
    res.end('ok');
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Maps names to addresses without DNS; any other name is "not found". */
function fakeDns(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

function client(allowedHosts: string[], resolve: Resolver, timeoutMs = 1_000) {
  return new GuardedClient({ allowedHosts, timeoutMs, connectionsPerOrigin: 2, resolve });
}

describe('GuardedClient.post', () => {
  it('delivers to an allow-listed host over plain http and reports status and Retry-After', async () => {
    const c = client(['127.0.0.1'], fakeDns({}));
    expect(await c.post(`http://127.0.0.1:${port}/ok`, '{}', {})).toMatchObject({ statusCode: 200, retryAfter: '30', error: null });
    expect(await c.post(`http://127.0.0.1:${port}/busy`, '{}', {})).toMatchObject({ statusCode: 503, retryAfter: '30' });
    await c.close();
  });

  it('resolves an allow-listed name through its resolver, wherever it points', async () => {
    const dns = fakeDns({ 'receiver.partner.com': ['127.0.0.1'] });
    const c = client(['receiver.partner.com'], dns);
    expect(await c.post(`http://receiver.partner.com:${port}/named`, '{}', {})).toMatchObject({ statusCode: 200 });
    expect(dns.asked).toContain('receiver.partner.com');
    expect(seen).toContain(`receiver.partner.com:${port}/named`);
    await c.close();
  });

  it.each([
    ['a loopback address that is not allow-listed', 'https://127.0.0.2:PORT/x', /127\.0\.0\.2 is not a public address \(loopback\)/],
    ['the IPv6 loopback', 'https://[::1]:PORT/x', /::1 is not a public address \(loopback\)/],
    ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]:PORT/x', /loopback/],
    ['a name that resolves to loopback (DNS rebinding)', 'https://rebind.partner.com:PORT/x', /rebind\.partner\.com resolves to a non-public address \(loopback\)/],
    ['a name with one private answer among public ones', 'https://mixed.partner.com:PORT/x', /mixed\.partner\.com resolves to a non-public address \(private network\)/],
    ['a localhost name', 'https://app.localhost:PORT/x', /loopback name/],
  ])('refuses %s before connecting', async (_label, template, reason) => {
    const dns = fakeDns({ 'rebind.partner.com': ['127.0.0.1'], 'mixed.partner.com': ['8.8.8.8', '10.0.0.1'] });
    const c = client(['127.0.0.1'], dns);
    const before = connections;
    const result = await c.post(template.replace('PORT', String(port)), '{}', {});
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/^address not allowed: /);
    expect(result.error).toMatch(reason);
    expect(connections).toBe(before);
    await c.close();
  });

  it('refuses plain http to a host that is not allow-listed, without resolving it', async () => {
    const dns = fakeDns({ 'hooks.partner.com': ['127.0.0.1'] });
    const c = client([], dns);
    expect(await c.post(`http://hooks.partner.com:${port}/x`, '{}', {})).toMatchObject({ statusCode: null, error: 'scheme http: not allowed for hooks.partner.com' });
    expect(dns.asked).toEqual([]);
    await c.close();
  });

  it('does not ask DNS about names that never resolve', async () => {
    const dns = fakeDns({});
    const c = client([], dns);
    expect(await c.post('https://hooks.harborlending.example/x', '{}', {})).toMatchObject({ statusCode: null, error: 'host not found (ENOTFOUND)' });
    expect(dns.asked).toEqual([]);
    await c.close();
  });

  it('does not follow a redirect', async () => {
    const c = client(['127.0.0.1'], fakeDns({}));
    const before = seen.length;
    expect(await c.post(`http://127.0.0.1:${port}/redirect`, '{}', {})).toMatchObject({ statusCode: 302 });
    expect(seen.slice(before)).toEqual([`127.0.0.1:${port}/redirect`]);
    await c.close();
  });

  it('gives up after the timeout', async () => {
    const c = client(['127.0.0.1'], fakeDns({}), 200);
    expect(await c.post(`http://127.0.0.1:${port}/slow`, '{}', {})).toMatchObject({ statusCode: null, error: 'timed out after 200 ms' });
    await c.close();
  });

  it('stops reading an answer after 64 KiB and still reports its status', async () => {
    const c = client(['127.0.0.1'], fakeDns({}), 2_000);
    expect(await c.post(`http://127.0.0.1:${port}/endless`, '{}', {})).toMatchObject({ statusCode: 200, error: null });
    await c.close();
  });

  it('reports a refused connection', async () => {
    const c = client(['127.0.0.1'], fakeDns({}));
    expect(await c.post('http://127.0.0.1:1/x', '{}', {})).toMatchObject({ statusCode: null, error: 'connection refused' });
    await c.close();
  });
});

describe('GuardedClient.request', () => {
  it('returns the status, headers and body of an answer', async () => {
    const c = client(['127.0.0.1'], fakeDns({}));
    const answer = await c.request(`http://127.0.0.1:${port}/ok`, { method: 'GET' });
    expect(answer).toMatchObject({ statusCode: 200, truncated: false });
    expect(answer.headers['retry-after']).toBe('30');
    expect(answer.body.toString()).toBe('ok');
    await c.close();
  });

  it('reads at most maxResponseBytes, whether the answer declares its length or not', async () => {
    const c = new GuardedClient({ allowedHosts: ['127.0.0.1'], timeoutMs: 2_000, resolve: fakeDns({}), maxResponseBytes: 1024 });
    const declared = await c.request(`http://127.0.0.1:${port}/large`, { method: 'GET' });
    expect(declared).toMatchObject({ statusCode: 200, truncated: true });
    expect(declared.body.length).toBe(0);
    const endless = await c.request(`http://127.0.0.1:${port}/endless`, { method: 'GET' });
    expect(endless).toMatchObject({ statusCode: 200, truncated: true });
    expect(endless.body.length).toBeLessThanOrEqual(1024);
    await c.close();
  });

  it('throws the policy refusal: a scheme before resolving, an IP literal before connecting', async () => {
    const dns = fakeDns({ 'hooks.partner.com': ['127.0.0.1'] });
    const c = client([], dns);
    await expect(c.request(`http://hooks.partner.com:${port}/x`, { method: 'GET' })).rejects.toThrow(SchemeNotAllowedError);
    const before = connections;
    const err: unknown = await c.request(`https://127.0.0.1:${port}/x`, { method: 'GET' }).catch((e: unknown) => e);
    expect(refusal(err)).toBeInstanceOf(AddressNotAllowedError);
    expect(refusal(err)!.message).toMatch(/127\.0\.0\.1 is not a public address \(loopback\)/);
    expect(connections).toBe(before);
    expect(dns.asked).toEqual([]);
    await c.close();
  });
});

describe('resolvePublic', () => {
  it('returns the public addresses of a name and checks literals without DNS', async () => {
    const dns = fakeDns({ 'hooks.partner.com': ['8.8.8.8'] });
    await expect(resolvePublic('hooks.partner.com', dns)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(resolvePublic('10.0.0.1', dns)).rejects.toThrow(/private network/);
    await expect(resolvePublic('[2606:4700:4700::1111]', dns)).resolves.toEqual([{ address: '2606:4700:4700::1111', family: 6 }]);
    expect(dns.asked).toEqual(['hooks.partner.com']);
  });
});

describe('guardedLookup (the connect-time address check)', () => {
  // A resolver standing in for DNS: the check is on the addresses, never by connecting.
  const answers: Record<string, { address: string; family: number }[]> = {
    'api.firstharbor.com': [{ address: '93.184.215.14', family: 4 }],
    'rebound.firstharbor.com': [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }],
    'metadata.firstharbor.com': [{ address: '169.254.169.254', family: 4 }],
  };
  const resolver = async (host: string) => answers[host] ?? [];
  const lookup = (allowed: string[], host: string) =>
    new Promise<{ err: Error | null; addresses: unknown }>((done) => guardedLookup(allowed, resolver)(host, { all: true }, (err, addresses) => done({ err, addresses })));

  it('resolves a name whose every address is public', async () => {
    expect(await lookup([], 'api.firstharbor.com')).toEqual({ err: null, addresses: answers['api.firstharbor.com'] });
  });

  it.each([
    ['one private address among public ones', 'rebound.firstharbor.com', /rebound\.firstharbor\.com resolves to a non-public address \(private network\)/],
    ['a link-local (cloud metadata) address', 'metadata.firstharbor.com', /link-local/],
    ['a localhost name', 'localhost', /loopback/],
  ])('refuses %s', async (_what, host, reason) => {
    const { err } = await lookup([], host);
    expect(err).toBeInstanceOf(AddressNotAllowedError);
    expect(err!.message).toMatch(reason);
  });

  it('lets an allow-listed name resolve to any address', async () => {
    expect(await lookup(['metadata.firstharbor.com'], 'metadata.firstharbor.com')).toEqual({ err: null, addresses: answers['metadata.firstharbor.com'] });
  });
});
