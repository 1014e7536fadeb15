/**
 * A webhook receiver on 127.0.0.1 for the webhook tests: records every delivery (exact body
 * bytes, headers, time), answers with a status the test chooses, can be taken down and brought
 * up again on the same port, and checks payloads against the spec's webhooks schemas
 * (compiled here from generated/openapi.json, independently of the service's own catalog).
 */
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { dereference } from '../../src/contract/spec.ts';
import { eventually } from './server.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface Delivery {
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
  receivedAt: number;
}

/** What to answer: a status, with optional headers, after an optional delay. */
interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface Receiver {
  port: number;
  url(path?: string): string;
  deliveries: Delivery[];
  /** Sets how the receiver answers from now on (default 200). */
  answer(fn: (delivery: Delivery) => Answer): void;
  /** Closes the listening socket (deliveries are refused) until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Resolves once at least `count` deliveries arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let answer: (d: Delivery) => Answer = () => ({ status: 200 });
  const waiters = new Set<() => void>();
  const onRequest: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const delivery: Delivery = { path: req.url ?? '/', body: Buffer.concat(chunks).toString('utf8'), headers: req.headers, receivedAt: Date.now() };
      deliveries.push(delivery);
      for (const wake of waiters) wake();
      const a = answer(delivery);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
        res.end('ok');
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  };
  let server = http.createServer(onRequest);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  const closeServer = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    port,
    url: (path = '/hooks') => `http://127.0.0.1:${port}${path}`,
    deliveries,
    answer(fn) {
      answer = fn;
    },
    down: closeServer,
    async up() {
      server = http.createServer(onRequest);
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    async waitFor(count, timeoutMs = 5_000) {
      if (deliveries.length >= count) return deliveries;
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          if (deliveries.length < count) return;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`receiver got ${deliveries.length} of ${count} deliveries within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(wake);
      });
      return deliveries;
    },
    close: async () => {
      if (server.listening) await closeServer();
    },
  };
}

type Json = Record<string, any>;
const spec: Json = dereference(JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();

/** The spec's webhooks section: event names, and each event's first named example. */
export const specWebhooks: Record<string, { example: Json }> = Object.fromEntries(
  Object.entries<Json>(spec.webhooks).map(([name, hook]) => {
    const media = hook.post.requestBody.content['application/json'];
    return [name, { example: (Object.values(media.examples) as Json[])[0]!.value }];
  }),
);

/** Validates a delivered body against the spec's schema for the event it names; returns the errors or null. */
export function specPayloadErrors(body: string): string | null {
  const payload = JSON.parse(body) as Json;
  const hook = spec.webhooks[payload.event];
  if (!hook) return `event ${JSON.stringify(payload.event)} is not in the spec's webhooks`;
  let validate = validators.get(payload.event);
  if (!validate) {
    validate = ajv.compile(hook.post.requestBody.content['application/json'].schema);
    validators.set(payload.event, validate);
  }
  return validate(payload) ? null : ajv.errorsText(validate.errors);
}

/**
 * Reads a receiver's deliveries in order, `count` at a time: each checked against the spec's
 * payload schema and its signature against the endpoint's secret (re-signed as Standard Webhooks
 * defines it, so a service on a test clock far from this machine's is checked as well), and
 * returned as payloads.
 */
export function verifiedDeliveries(receiver: Receiver, secret: string): (count: number) => Promise<Array<Json & { event: string }>> {
  const signer = new Webhook(secret);
  let seen = 0;
  return async (count) => {
    const deliveries = (await receiver.waitFor(seen + count, 10_000)).slice(seen, seen + count);
    seen += count;
    return deliveries.map((d) => {
      expect(specPayloadErrors(d.body)).toBeNull();
      const [id, timestamp] = [String(d.headers['webhook-id']), Number(d.headers['webhook-timestamp'])];
      expect(String(d.headers['webhook-signature']).split(' ')).toContain(signer.sign(id, new Date(timestamp * 1000), d.body));
      return JSON.parse(d.body) as Json & { event: string };
    });
  };
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.now()) {
  let now = start;
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  };
}

/**
 * An absence check without a fixed wait: `sendSentinel` makes the service publish one more event
 * for an endpoint of `receiver` (after whatever must not arrive) and returns its event id; this
 * waits for that sentinel and resolves with what the receiver got before it (from index `since`).
 *
 * Why the sentinel's arrival settles it: the dispatcher claims due deliveries oldest first (by
 * due time, then event id), and with WEBHOOK_ENDPOINT_CONCURRENCY=1 it sends one endpoint's
 * deliveries one at a time, each only after the previous was answered. So for a sentinel sent to
 * the same endpoint, anything published for it earlier has arrived before the sentinel does.
 */
export async function deliveriesBeforeSentinel(receiver: Receiver, sendSentinel: () => Promise<string>, since = 0, timeoutMs = 5_000): Promise<Delivery[]> {
  const sentinelId = await sendSentinel();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = receiver.deliveries.findIndex((d) => d.headers['webhook-id'] === sentinelId);
    if (index >= 0) return receiver.deliveries.slice(since, index);
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`the sentinel ${sentinelId} did not arrive within ${timeoutMs} ms`);
    await receiver.waitFor(receiver.deliveries.length + 1, remaining).catch(() => undefined);
  }
}

/**
 * Waits until `receiver` has `count` deliveries at `path` (the dispatcher delivers in the
 * background) and returns them: a receiver shared by several endpoints may already hold others'.
 */
export function deliveriesAt(receiver: Receiver, path: string, count = 1, timeoutMs = 5_000): Promise<Delivery[]> {
  return eventually(() => {
    const at = receiver.deliveries.filter((d) => d.path === path);
    return at.length >= count && at;
  }, timeoutMs, 25);
}
