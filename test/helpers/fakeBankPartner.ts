/**
 * A fake partner bank API on 127.0.0.1 for the `http` connector's tests: it implements the
 * partner contract (token introspection, account lookup) over plain HTTP, and can be told to
 * misbehave for the next calls (status, body, content type, delay).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface FakeAccount {
  accountRef: string;
  holderName: string;
  accountNumber: string;
}

export interface ScriptedReply {
  status?: number;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  contentType?: string;
  /** Answer only after this long (to provoke timeouts). */
  delayMs?: number;
}

export interface FakePartner {
  baseUrl: string;
  /** Live tokens and the accounts they grant. */
  tokens: Map<string, FakeAccount>;
  /** Replies for the next calls of a route, used first to last before normal behaviour resumes. */
  script: Record<'introspect' | 'account', ScriptedReply[]>;
  /** Every request received: route, Authorization header, parsed body. */
  received: { route: string; authorization: string | undefined; body: unknown }[];
  close(): Promise<void>;
}

export async function startFakePartner(credential: string | null = null): Promise<FakePartner> {
  const tokens = new Map<string, FakeAccount>();
  const script: FakePartner['script'] = { introspect: [], account: [] };
  const received: FakePartner['received'] = [];

  const send = (res: http.ServerResponse, reply: ScriptedReply) => {
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? null);
    const write = () => {
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
      res.end(text);
    };
    if (reply.delayMs) setTimeout(write, reply.delayMs).unref();
    else write();
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const route = req.method === 'POST' && url.pathname === '/bank/token/introspect' ? 'introspect' : url.pathname.startsWith('/bank/accounts/') ? 'account' : 'other';
      const body = raw ? (JSON.parse(raw) as unknown) : null;
      received.push({ route, authorization: req.headers.authorization, body });
      if (route === 'other') return send(res, { status: 404, body: { error: 'no such route' } });
      const scripted = script[route].shift();
      if (scripted) return send(res, scripted);
      if (credential !== null && req.headers.authorization !== `Bearer ${credential}`) return send(res, { status: 401, body: { error: 'bad credential' } });
      if (route === 'introspect') {
        const account = tokens.get((body as { token?: string } | null)?.token ?? '');
        return send(res, { body: account ? { active: true, accountRef: account.accountRef, expiresAt: null } : { active: false } });
      }
      const ref = decodeURIComponent(url.pathname.slice('/bank/accounts/'.length));
      const account = [...tokens.values()].find((a) => a.accountRef === ref);
      return send(res, account ? { body: account } : { status: 404, body: { error: 'no such account' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/bank/`,
    tokens,
    script,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
