/**
 * Webhook delivery throughput and latency: 10 loopback receivers (in a worker thread, so they
 * do not share the dispatcher's event loop), each endpoint subscribed to `application.approved`;
 * events are published at a steady rate through the store and the transactional outbox (each
 * publish is its own durable transaction, as an approval would be), and the dispatcher signs and
 * sends every delivery. Reported per rate: deliveries/s and publish-to-receipt latency
 * p50/p99/max (from the start of the publishing transaction to the receiver reading the body).
 *
 * Then a burst: 1,000 events published at once, to measure how fast the dispatcher drains a
 * backlog (its capacity on this machine).
 *
 * Baseline, measured in the same run: the same receivers hit with plain signed undici POSTs at the
 * same concurrency, no store involved: the ceiling of loopback HTTP on this machine.
 * Goal (issue 4): >= 1,000 deliveries/s with p99 < 250 ms with healthy receivers.
 *
 * Run: node scripts/bench/webhooks.ts   (WEBHOOK_BENCH_SECONDS=8 per rate by default)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { publish } from '../../src/events/outbox.ts';
import { signDelivery } from '../../src/events/signing.ts';
import { createWebhook } from '../../src/services/webhooks.ts';
import { createContext } from '../../src/createContext.ts';
import { newId } from '../../src/ids.ts';
import { createLogger } from '../../src/log.ts';
import { systemClock } from '../../src/clock.ts';
import { createAccount } from '../../src/services/accounts.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';

const RECEIVERS = 10;
const SECONDS = Math.min(60, Math.max(2, Number(process.env.WEBHOOK_BENCH_SECONDS ?? 8)));
/** Events per second; each fans out to every receiver. */
const RATES = [110, 200];
/** Events of the burst phase (each to every receiver). */
const BURST_EVENTS = 1000;
/** No phase waits longer than this for its deliveries to arrive. */
const DRAIN_LIMIT_MS = 30_000;

/** The receivers: 10 HTTP servers on 127.0.0.1 in one worker thread, reporting [webhook-id, received-at] in batches. */
const RECEIVER_WORKER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const now = () => performance.timeOrigin + performance.now();
let batch = [];
setInterval(() => { if (batch.length) { parentPort.postMessage({ receipts: batch }); batch = []; } }, 20).unref();
const ports = [];
let listening = 0;
for (let i = 0; i < workerData.count; i++) {
  const server = http.createServer({ keepAliveTimeout: 10000 }, (req, res) => {
    let n = 0;
    req.on('data', (c) => { n += c.length; });
    req.on('end', () => {
      batch.push([req.headers['webhook-id'], now(), n > 0 && typeof req.headers['webhook-signature'] === 'string' ? 1 : 0]);
      res.writeHead(200, { 'content-length': '2' });
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => {
    ports[i] = server.address().port;
    if (++listening === workerData.count) parentPort.postMessage({ ports });
  });
}
parentPort.on('message', (m) => { if (m === 'flush') { parentPort.postMessage({ receipts: batch, flushed: true }); batch = []; } });
`;

interface Receipts {
  ports: number[];
  received: Array<[string, number, number]>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

async function startReceivers(): Promise<Receipts> {
  const worker = new Worker(RECEIVER_WORKER, { eval: true, workerData: { count: RECEIVERS } });
  const received: Array<[string, number, number]> = [];
  let flushed: (() => void) | undefined;
  const ports = await new Promise<number[]>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: { ports?: number[]; receipts?: Array<[string, number, number]>; flushed?: boolean }) => {
      if (m.ports) resolve(m.ports);
      if (m.receipts) received.push(...m.receipts);
      if (m.flushed) flushed?.();
    });
  });
  return {
    ports,
    received,
    flush: () =>
      new Promise<void>((resolve) => {
        flushed = resolve;
        worker.postMessage('flush');
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface PhaseResult {
  rate: number;
  events: number;
  deliveries: number;
  deliveriesPerSec: number;
  p50: number;
  p99: number;
  max: number;
  unsigned: number;
}

function approved(i: number) {
  return {
    event: 'application.approved' as const,
    mortgageId: newId('mtg'),
    status: 'approved' as const,
    applicant: { name: `Applicant ${i}`, amount: 250_000 + (i % 500) * 1000 },
    timestamp: new Date().toISOString(),
  };
}

export async function run(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-webhooks-'));
  const receivers = await startReceivers();
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
  const log = createLogger('warn');
  const store = await openSqlJsStore({ dataDir });
  const ctx = createContext({ store, clock: systemClock, config, log });
  let dispatcher: WebhookDispatcher | undefined;
  try {
    const { account } = await createAccount(ctx, { name: 'Bench Lending', email: 'bench@example.test' });
    const secrets: string[] = [];
    for (const port of receivers.ports) {
      const { secret } = await createWebhook(ctx, account.accountId, { url: `http://127.0.0.1:${port}/hooks`, events: ['application.approved'] });
      secrets.push(secret);
    }

    // Baseline: signed POSTs straight to the receivers, same concurrency, no store.
    const baseline = await plainPosts(receivers, secrets[0]!, config.webhooks.concurrency, SECONDS * 1000);

    dispatcher = new WebhookDispatcher(ctx).start();
    const results: PhaseResult[] = [];
    for (const rate of RATES) results.push(await phase(rate, account.accountId, store, receivers));
    const burst = await phase(Infinity, account.accountId, store, receivers);

    console.log(
      `webhooks: ${RECEIVERS} loopback receivers, 1 event type, each event to all ${RECEIVERS}; ${SECONDS} s per rate; ` +
        `concurrency ${config.webhooks.concurrency} (${config.webhooks.endpointConcurrency} per endpoint); ${os.cpus().length} CPUs`,
    );
    console.log(`  baseline (signed undici POSTs, no store): ${baseline.toFixed(0)} deliveries/s`);
    for (const r of results) {
      console.log(
        `  ${r.rate} events/s -> ${r.deliveries} of ${r.events * RECEIVERS} deliveries, ${r.deliveriesPerSec.toFixed(0)} deliveries/s, ` +
          `publish-to-receipt p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms` +
          (r.unsigned ? `, ${r.unsigned} UNSIGNED` : ''),
      );
    }
    console.log(
      `  burst of ${burst.events} events published at once -> ${burst.deliveries} deliveries drained at ${burst.deliveriesPerSec.toFixed(0)} deliveries/s ` +
        `(capacity), publish-to-receipt p50 ${burst.p50.toFixed(0)} ms, max ${burst.max.toFixed(0)} ms`,
    );
    const goal = results.find((r) => r.rate * RECEIVERS >= 1000);
    console.log(`  capacity/baseline: ${(burst.deliveriesPerSec / baseline).toFixed(2)}x (the store's durable writes per attempt against bare HTTP)`);
    if (goal) {
      const met = goal.deliveries === goal.events * RECEIVERS && goal.deliveriesPerSec >= 1000 && goal.p99 < 250;
      console.log(`  goal (>= 1,000 deliveries/s, p99 < 250 ms) at ${goal.rate} events/s: ${met ? 'met' : 'NOT met'}`);
    }
  } finally {
    await dispatcher?.stop();
    await store.close();
    await receivers.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function phase(rate: number, accountId: string, store: Awaited<ReturnType<typeof openSqlJsStore>>, receivers: Receipts): Promise<PhaseResult> {
  receivers.received.length = 0;
  const published = new Map<string, number>();
  const started = performance.timeOrigin + performance.now();
  const durationMs = SECONDS * 1000;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  // Steady rate: every 5 ms, publish what the schedule says is due by now. A burst (rate
  // Infinity) publishes BURST_EVENTS at once.
  while (performance.timeOrigin + performance.now() - started < durationMs && (rate !== Infinity || sent < BURST_EVENTS)) {
    const due = rate === Infinity ? BURST_EVENTS : Math.floor(((performance.timeOrigin + performance.now() - started) / 1000) * rate);
    while (sent < due) {
      const i = sent++;
      const t0 = performance.timeOrigin + performance.now();
      const p = store
        .transaction((tx) => publish(tx, { accountId, payload: approved(i), occurredAt: new Date() }))
        .then(({ eventId }) => void published.set(eventId, t0));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(inFlight);
  const expected = sent * RECEIVERS;
  const drainDeadline = Date.now() + DRAIN_LIMIT_MS;
  while (receivers.received.length < expected && Date.now() < drainDeadline) {
    await receivers.flush();
    if (receivers.received.length < expected) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const latencies: number[] = [];
  let last = started;
  let unsigned = 0;
  for (const [id, at, signed] of receivers.received) {
    const t0 = published.get(id);
    if (t0 !== undefined) latencies.push(at - t0);
    if (!signed) unsigned++;
    if (at > last) last = at;
  }
  latencies.sort((a, b) => a - b);
  const received = receivers.received.length;
  return {
    rate,
    events: sent,
    deliveries: received,
    deliveriesPerSec: received / ((last - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    unsigned,
  };
}

async function plainPosts(receivers: Receipts, secret: string, concurrency: number, durationMs: number): Promise<number> {
  const agent = new Agent({ connections: 8 });
  const body = JSON.stringify(approved(0));
  const deadline = performance.now() + durationMs / 2;
  let done = 0;
  const started = performance.now();
  const worker = async (w: number) => {
    for (let i = 0; performance.now() < deadline && i < 1_000_000; i++) {
      const port = receivers.ports[(w + i) % receivers.ports.length]!;
      const headers = signDelivery(newId('evt'), new Date(), body, [secret]);
      const response = await request(`http://127.0.0.1:${port}/hooks`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      await response.body.dump();
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const rate = done / ((performance.now() - started) / 1000);
  await agent.close();
  await receivers.flush();
  receivers.received.length = 0;
  return rate;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
