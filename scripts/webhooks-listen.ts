/**
 * A local webhook receiver for partners: verifies every delivery with the `standardwebhooks`
 * package (as your own receiver should), checks the payload against the contract's schema for
 * its event, prints it, and answers. It can answer a failure status on purpose, to watch the
 * service retry.
 *
 *   npm run webhooks:listen -- --port 9000 --secret whsec_...
 *   npm run webhooks:listen -- --port 9000 --secret whsec_... --status 503 --retry-after 10
 *   npm run webhooks:listen -- --port 9000 --secret whsec_... --fail-first 2     # 500 twice per event, then 200
 *
 * Options: --port (default 9000), --host (default 127.0.0.1), --path (default: any path),
 * --secret (required; repeat it to accept several, as during a rotation), --status (answer this
 * to every verified delivery), --fail-first N (answer --status, default 500, to the first N
 * attempts of each event id, then 200), --retry-after SECONDS (sent with failure answers),
 * --version (the API version the endpoint is pinned to: each payload is checked against that
 * version's events, from its frozen contract; default the current version).
 * A delivery whose signature does not verify gets 401 and is printed as rejected.
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { payloadProblemIn } from '../src/events/catalog.ts';
import { CURRENT_VERSION, VERSIONS } from '../src/domain/versions/registry.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9000' },
    host: { type: 'string', default: '127.0.0.1' },
    path: { type: 'string' },
    secret: { type: 'string', multiple: true },
    status: { type: 'string' },
    'fail-first': { type: 'string' },
    'retry-after': { type: 'string' },
    version: { type: 'string', default: CURRENT_VERSION },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});

function usage(message?: string): never {
  if (message) console.error(`webhooks:listen: ${message}`);
  console.error('usage: npm run webhooks:listen -- --port 9000 --secret whsec_... [--status 503] [--fail-first 2] [--retry-after 10] [--path /hooks] [--version YYYY-MM-DD]');
  process.exit(message ? 2 : 0);
}

if (values.help) usage();
const secrets = values.secret ?? [];
if (secrets.length === 0) usage('--secret is required (the whsec_... shown when you registered the endpoint)');
const verifiers = secrets.map((secret) => {
  try {
    return new Webhook(secret);
  } catch (err) {
    usage(`--secret ${secret.slice(0, 8)}… is not a valid whsec_ secret: ${(err as Error).message}`);
  }
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) usage('--port must be a port number');
const failStatus = values.status === undefined ? undefined : Number(values.status);
if (failStatus !== undefined && !(Number.isInteger(failStatus) && failStatus >= 100 && failStatus <= 599)) usage('--status must be an HTTP status code');
const failFirst = values['fail-first'] === undefined ? 0 : Number(values['fail-first']);
if (!Number.isInteger(failFirst) || failFirst < 0) usage('--fail-first must be a whole number');
const retryAfter = values['retry-after'];
if (!VERSIONS.includes(values.version)) usage(`--version must be one of ${VERSIONS.join(', ')}`);

const attemptsById = new Map<string, number>();

function verify(body: string, headers: http.IncomingHttpHeaders): { payload: unknown } | { error: string } {
  const flat: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headers[name];
    if (typeof value === 'string') flat[name] = value;
  }
  let lastError = 'no secret given';
  for (const verifier of verifiers) {
    try {
      return { payload: verifier.verify(body, flat) };
    } catch (err) {
      lastError = err instanceof WebhookVerificationError ? err.message : String(err);
    }
  }
  return { error: lastError };
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(req.headers['webhook-id'] ?? '');
    const at = new Date().toISOString();
    if (req.method !== 'POST' || (values.path !== undefined && req.url !== values.path)) {
      res.writeHead(404).end();
      console.log(JSON.stringify({ at, rejected: true, reason: `${req.method} ${req.url} is not a delivery` }));
      return;
    }
    const verified = verify(body, req.headers);
    if ('error' in verified) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('signature did not verify');
      console.log(JSON.stringify({ at, id, rejected: true, reason: verified.error }));
      return;
    }
    const attempt = (attemptsById.get(id) ?? 0) + 1;
    attemptsById.set(id, attempt);
    const fail = failStatus !== undefined && failFirst === 0 ? failStatus : attempt <= failFirst ? (failStatus ?? 500) : undefined;
    const status = fail ?? 200;
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (fail !== undefined && retryAfter !== undefined) headers['retry-after'] = retryAfter;
    res.writeHead(status, headers).end(status < 300 ? 'ok' : 'failing on purpose');
    const schemaProblem = payloadProblemIn(verified.payload, values.version);
    console.log(
      JSON.stringify({
        at,
        id,
        timestamp: req.headers['webhook-timestamp'],
        signatures: String(req.headers['webhook-signature']).split(' ').length,
        verified: true,
        matchesSpec: schemaProblem === null,
        ...(schemaProblem ? { specProblem: schemaProblem } : {}),
        attempt,
        answered: status,
        payload: verified.payload,
      }),
    );
  });
});

server.listen(port, values.host, () => {
  const address = server.address() as { port: number };
  console.log(JSON.stringify({ msg: 'listening', apiVersion: values.version, url: `http://${values.host}:${address.port}${values.path ?? '/'}`, port: address.port }));
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
