/**
 * Sends one signed sample delivery to a receiver, exactly as the service would (Standard Webhooks
 * headers, the contract's example payload for the event), so a partner can test a receiver
 * without the real service. The Prism mock sends no webhooks.
 *
 *   npm run webhooks:send -- --url http://localhost:9000/hooks --secret whsec_... --event application.approved
 *
 * Options: --url and --secret (required), --event (default application.approved; any name of the
 * contract's webhooks), --payload FILE (send this JSON instead of the example; it is checked
 * against the event's schema first), --id (the webhook-id; default a fresh evt- id), --version
 * (the API version to render the payload in, as an endpoint pinned to it receives it; default the
 * current one; a version without the event is refused).
 * Prints the receiver's answer; exits 0 on a 2xx, 1 otherwise.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { eventKind, eventTypes, isEventType, payloadProblem } from '../src/events/catalog.ts';
import { signDelivery } from '../src/events/signing.ts';
import { newId } from '../src/ids.ts';
import { CURRENT_VERSION, renderEventText, VERSIONS } from '../src/domain/versions/registry.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    secret: { type: 'string' },
    event: { type: 'string', default: 'application.approved' },
    payload: { type: 'string' },
    id: { type: 'string' },
    version: { type: 'string', default: CURRENT_VERSION },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});

function usage(message?: string): never {
  if (message) console.error(`webhooks:send: ${message}`);
  console.error(`usage: npm run webhooks:send -- --url http://localhost:9000/hooks --secret whsec_... [--event ${eventTypes().join('|')}] [--payload file.json]`);
  process.exit(message ? 2 : 0);
}

if (values.help) usage();
if (!values.url) usage('--url is required');
if (!values.secret?.startsWith('whsec_')) usage('--secret is required and starts with whsec_');
if (!isEventType(values.event)) usage(`--event must be one of ${eventTypes().join(', ')}`);
let url: URL;
try {
  url = new URL(values.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
} catch {
  usage(`--url ${values.url} is not an http(s) URL`);
}

let payload: unknown = eventKind(values.event).example;
if (values.payload) {
  try {
    payload = JSON.parse(readFileSync(values.payload, 'utf8'));
  } catch (err) {
    usage(`--payload ${values.payload}: ${(err as Error).message}`);
  }
  const problem = payloadProblem(payload);
  if (problem) usage(`--payload does not match the contract's ${values.event} schema: ${problem}`);
}

if (!VERSIONS.includes(values.version)) usage(`--version must be one of ${VERSIONS.join(', ')}`);
const body = renderEventText(values.event, JSON.stringify(payload), values.version);
if (body === null) usage(`API version ${values.version} has no ${values.event} event; an endpoint pinned to it is not sent one`);
const id = values.id ?? newId('evt');
let headers: Record<string, string>;
try {
  headers = signDelivery(id, new Date(), body, [values.secret]);
} catch (err) {
  usage(`--secret is not a valid whsec_ secret: ${(err as Error).message}`);
}

const started = performance.now();
try {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'mortgage-origination-webhooks/1.0 (webhooks:send)', ...headers },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  const text = (await response.text()).slice(0, 500);
  console.log(JSON.stringify({ url: url.toString(), id, event: values.event, status: response.status, ms: Math.round(performance.now() - started), answer: text }));
  process.exit(response.status >= 200 && response.status < 300 ? 0 : 1);
} catch (err) {
  const cause = (err as { cause?: { code?: string } }).cause?.code;
  console.log(JSON.stringify({ url: url.toString(), id, event: values.event, error: cause ?? (err as Error).message }));
  process.exit(1);
}
