/**
 * Forwards the account's events to a receiver on your machine, signed like real deliveries: it
 * follows the events feed (GET /v1/events) from now on, and POSTs each new event's payload to
 * --to with Standard Webhooks headers (`webhook-id` is the event's id, as in a real delivery). No
 * endpoint is registered and no allow-list is needed: the service never connects to your machine,
 * this tool does. The key decides whose events: a test-mode key forwards test-mode events.
 *
 *   npm run webhooks:forward -- --api-key $KEY --to http://localhost:9000/hooks
 *   npm run webhooks:forward -- --api-key $KEY --to http://localhost:9000/hooks --secret whsec_... --base-url https://api.example
 *
 * Options: --api-key (required; any role may read the feed), --to (required; the receiver's URL),
 * --secret (the whsec_ secret to sign with; without it a new one is made and printed, give it to
 * your receiver), --base-url (the service; default http://127.0.0.1:3000), --interval (ms between
 * polls, default 1000), --version (the API version to deliver in, as an endpoint pinned to it
 * receives events; default the account's pinned version, as a new endpoint's). The feed is read in
 * the current version and each payload rendered in --version by the version changes: an event
 * that version does not have is skipped (printed as such), as its endpoints are not sent one.
 *
 * Prints JSON lines: first `{"msg":"forwarding",…}` (with the secret when it made one), then one
 * line per event with the receiver's status (or the error). Each event is sent once: a receiver
 * that fails it is not retried (the real service retries; here, fix the receiver and send it again
 * with webhooks:send or the recover operation). Stops on Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { createMortgageClient, isProblemError, type Schemas } from '../sdk/src/index.ts';
import { newWebhookSecret, signDelivery } from '../src/events/signing.ts';
import { CURRENT_VERSION, renderEventText, VERSIONS } from '../src/domain/versions/registry.ts';

type FeedEvent = Schemas['Event'];

const { values } = parseArgs({
  options: {
    'api-key': { type: 'string' },
    to: { type: 'string' },
    secret: { type: 'string' },
    'base-url': { type: 'string', default: 'http://127.0.0.1:3000' },
    interval: { type: 'string', default: '1000' },
    version: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});

function usage(message?: string): never {
  if (message) console.error(`webhooks:forward: ${message}`);
  console.error('usage: npm run webhooks:forward -- --api-key KEY --to http://localhost:9000/hooks [--secret whsec_...] [--base-url URL] [--interval 1000] [--version YYYY-MM-DD]');
  process.exit(message ? 2 : 0);
}

function httpUrl(value: string, option: string): URL {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // refused below
  }
  usage(`${option} ${value} is not an http(s) URL`);
}

if (values.help) usage();
const apiKey = values['api-key'];
if (!apiKey) usage('--api-key is required (an API key of the account whose events to forward)');
if (!values.to) usage('--to is required (your receiver, e.g. http://localhost:9000/hooks)');
const to = httpUrl(values.to, '--to');
const baseUrl = httpUrl(values['base-url'], '--base-url');
const intervalMs = Number(values.interval);
if (!Number.isInteger(intervalMs) || intervalMs < 50 || intervalMs > 600_000) usage('--interval must be a whole number of milliseconds from 50 to 600000');
const generated = values.secret === undefined;
const secret = values.secret ?? newWebhookSecret();
try {
  if (!secret.startsWith('whsec_')) throw new Error('it does not start with whsec_');
  signDelivery('evt-check', new Date(), '', [secret]);
} catch (err) {
  usage(`--secret is not a valid whsec_ secret: ${(err as Error).message}`);
}

if (values.version !== undefined && !VERSIONS.includes(values.version)) usage(`--version must be one of ${VERSIONS.join(', ')}`);
/** The version deliveries are rendered in: --version, else the account's (read at start). */
let version = values.version ?? CURRENT_VERSION;

// The feed in the current version, every kind in today's shape: each payload is rendered in `version` here.
const client = createMortgageClient({ baseUrl: baseUrl.toString(), apiKey, apiVersion: CURRENT_VERSION });

/**
 * How far back each poll looks before the newest event seen. An event's time is when its change
 * committed on the service, but on several instances a slower transaction can commit an earlier
 * time after a later one is visible: the overlap catches it, and `seen` keeps it from going twice.
 */
const LOOKBACK_MS = 60_000;
/** Event ids already handled (forwarded, or there before the start), by their time. */
const seen = new Map<string, number>();
let newest: number | null = null;

async function eventsSince(from: number | null): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  const query = { limit: 100, ...(from === null ? {} : { createdFrom: new Date(from).toISOString() }) };
  for await (const event of client.list('/v1/events', { query })) events.push(event);
  return events;
}

function remember(event: FeedEvent): void {
  const at = Date.parse(event.createdAt);
  seen.set(event.eventId, at);
  if (newest === null || at > newest) newest = at;
}

async function forward(event: FeedEvent): Promise<void> {
  // The payload as the feed gives it serialises to the exact bytes a real delivery sends; rendered
  // in `version` as a delivery to an endpoint pinned to it is (the same bytes unless a change names its kind).
  const line = { id: event.eventId, event: event.event, createdAt: event.createdAt };
  const body = renderEventText(event.event, JSON.stringify(event.payload), version);
  if (body === null) {
    console.log(JSON.stringify({ ...line, skipped: `API version ${version} has no ${event.event} event` }));
    return;
  }
  const headers = signDelivery(event.eventId, new Date(), body, [secret]);
  const started = performance.now();
  try {
    const response = await fetch(to, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'mortgage-origination-webhooks/1.0 (webhooks:forward)', ...headers },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    console.log(JSON.stringify({ ...line, status: response.status, ms: Math.round(performance.now() - started) }));
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    console.log(JSON.stringify({ ...line, error: cause ?? (err as Error).message }));
  }
}

/** Refused credentials end the tool; anything else (the service restarting, a network blip) is retried at the next poll. */
function fatal(err: unknown): boolean {
  return isProblemError(err) && (err.status === 401 || err.status === 403);
}

async function start(): Promise<void> {
  if (values.version === undefined) {
    const { data: account } = await client.api.GET('/v1/account', {});
    version = account!.apiVersion;
  }
  // Start from now: what the feed already holds is marked seen, not forwarded.
  const { data } = await client.api.GET('/v1/events', { params: { query: { limit: 1 } } });
  const latest = data!.data[0];
  if (latest) for (const event of await eventsSince(Date.parse(latest.createdAt) - LOOKBACK_MS)) remember(event);
}

async function poll(): Promise<void> {
  const events = await eventsSince(newest === null ? null : newest - LOOKBACK_MS);
  for (const event of events.reverse()) {
    // Oldest first (the feed is newest first).
    if (seen.has(event.eventId)) continue;
    remember(event);
    await forward(event);
  }
  if (newest !== null) {
    for (const [id, at] of seen) if (at < newest - 2 * LOOKBACK_MS) seen.delete(id);
  }
}

let stopping = false;
let wake: (() => void) | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    wake?.();
  });
}

try {
  await start();
} catch (err) {
  console.error(`webhooks:forward: cannot read the events feed at ${baseUrl.origin}: ${(err as Error).message}`);
  process.exit(fatal(err) ? 2 : 1);
}
console.log(JSON.stringify({ msg: 'forwarding', from: baseUrl.toString(), to: to.toString(), apiVersion: version, ...(generated ? { secret } : {}) }));
if (generated) console.error(`webhooks:forward: signing with ${secret} (made for this run; verify with it, or pass --secret to keep one)`);

while (!stopping) {
  try {
    await poll();
  } catch (err) {
    if (fatal(err)) {
      console.error(`webhooks:forward: the service refused the API key: ${(err as Error).message}`);
      process.exit(2);
    }
    console.error(`webhooks:forward: polling failed, trying again: ${(err as Error).message}`);
  }
  if (stopping) break;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, intervalMs);
    wake = () => (clearTimeout(timer), resolve());
  });
}
process.exit(0);
