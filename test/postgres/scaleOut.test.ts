/**
 * Scale-out: two service processes (`node src/main.ts`) on one PostgreSQL database, each with a
 * data directory of its own, as behind a load balancer.
 *
 * - load spread over both: what one instance writes the other serves, at once;
 * - a rate sheet replaced through one prices the other's next quotes (what it remembered is forgotten on the NOTIFY);
 * - 20 concurrent submits of one application across both: exactly one 200, the rest 409;
 * - SIGKILL one mid-stream: every write acknowledged by either is readable through the other, and
 *   every committed event is delivered at least once (the dead instance's leases run out and the
 *   survivor delivers); duplicates are counted and reported;
 * - the rate limit of a key holds over both instances together;
 * - the admin command line works against DATABASE_URL while the instances run.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountWithCli, runAdmin, startService, tempDataDir, type ServiceProcess } from '../helpers/server.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';
import { databaseEnv, testDatabase, withDatabaseClient, type TempDatabase } from '../helpers/engine.ts';

const BANK_SECRET = 'scale-out-test-bank-secret-0123456789abcdef';
const SECRETS_KEY = 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';
const cleanups: Array<() => Promise<unknown>> = [];
let database: TempDatabase;

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

beforeAll(async () => {
  database = await testDatabase();
  cleanups.push(() => database.drop());
});

async function instance(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const dir = await tempDataDir('mos-scale-');
  cleanups.push(dir.remove);
  const service = await startService({
    dataDir: dir.dataDir,
    env: {
      ...databaseEnv(database.url),
      DATABASE_POOL_MAX: '6',
      BANK_SECRET,
      // Every instance on one database needs the same sealing key, as docs/operators/postgresql.md ("Running several instances") says.
      SECRETS_KEY,
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_TIMEOUT_MS: '1000', // the lease is the timeout + 5 s: a dead instance's deliveries are due again after 6 s
      WEBHOOK_POLL_INTERVAL_MS: '200',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  cleanups.push(async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });
  return service;
}

/** Passes every default underwriting rule: submitting it approves it (and publishes application.approved). */
const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

function call(service: ServiceProcess, apiKey: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('two instances on one database', () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  let apiKey: string;
  let receiver: Receiver;

  beforeAll(async () => {
    // Both start together: the migrations run once, under the advisory lock.
    [a, b] = await Promise.all([instance(), instance()]);
    // The admin command line against DATABASE_URL, while both run.
    // It opens the database as an instance does, so it needs the instances' SECRETS_KEY too (else it is refused).
    ({ apiKey } = await createAccountWithCli(a.dataDir, 'Scale Lending', 'ops@scale.test', { ...databaseEnv(database.url), SECRETS_KEY }));
    receiver = await startReceiver();
    cleanups.push(() => receiver.close());
  }, 60_000);

  it('spreads the load over both: each serves what the other wrote, at once', async () => {
    const ids: string[] = [];
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const writer = i % 2 === 0 ? a : b;
        const created = await call(writer, apiKey, 'POST', '/v1/applications', APPROVABLE);
        expect(created.status).toBe(201);
        const { mortgageId } = (await created.json()) as { mortgageId: string };
        ids.push(mortgageId);
        const reader = writer === a ? b : a;
        return (await call(reader, apiKey, 'GET', `/v1/applications/${mortgageId}`)).status;
      }),
    );
    expect(results).toEqual(Array(20).fill(200));
    const listed = (await (await call(a, apiKey, 'GET', '/v1/applications?limit=100')).json()) as { data: Array<{ mortgageId: string }> };
    expect(listed.data.map((x) => x.mortgageId).sort()).toEqual([...ids].sort());
  });

  it('a rate sheet replaced through one instance prices the next quotes of the other: its remembered sheet is forgotten on the NOTIFY', async () => {
    const loan = { amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 };
    const rateOnB = async () => Math.round(((await (await call(b, apiKey, 'POST', '/v1/quotes', loan)).json()) as { interestRate: number }).interestRate * 1000);
    const before = await rateOnB(); // b now remembers the account's pricing context
    const { rateSheet } = (await (await call(a, apiKey, 'GET', '/v1/pricing')).json()) as { rateSheet: { baseRates: Array<{ rate: number }> } };
    const raised = { ...rateSheet, baseRates: rateSheet.baseRates.map((band) => ({ ...band, rate: band.rate + 1 })) };
    try {
      expect((await call(a, apiKey, 'PUT', '/v1/pricing', raised)).status).toBe(200);
      // The NOTIFY reaches b milliseconds after the commit; without it, b would quote the old rate for up to 2 s.
      await expect.poll(rateOnB, { timeout: 1_000, interval: 10 }).toBe(before + 1000);
    } finally {
      expect((await call(a, apiKey, 'PUT', '/v1/pricing', rateSheet)).status).toBe(200);
      await expect.poll(rateOnB, { timeout: 1_000, interval: 10 }).toBe(before);
    }
  });

  it('20 concurrent submits of one application across both instances: exactly one 200, the others 409', async () => {
    const created = await call(a, apiKey, 'POST', '/v1/applications', APPROVABLE);
    const { mortgageId } = (await created.json()) as { mortgageId: string };
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 === 0 ? a : b, apiKey, 'POST', `/v1/applications/${mortgageId}/submit`).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    // The one submission's events: submitted, approved, and the conditions the approval attached; each once.
    const events = await countEvents(`SELECT COUNT(*) AS n FROM webhook_events WHERE payload LIKE '%${mortgageId}%'`);
    expect(events).toBe(3);
  });

  it('the same Idempotency-Key sent to both at once runs once', async () => {
    const send = (service: ServiceProcess) =>
      fetch(`${service.baseUrl}/v1/applications`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'scale-out-once' },
        body: JSON.stringify(APPROVABLE),
      });
    const responses = await Promise.all([send(a), send(b), send(a), send(b)]);
    const created = await Promise.all(responses.filter((r) => r.status === 201).map(async (r) => ((await r.json()) as { mortgageId: string }).mortgageId));
    // Each answer is the first request's result (201, replayed or not) or 409 while it runs; never a second application.
    expect(new Set(created).size).toBe(1);
    for (const r of responses) expect([201, 409]).toContain(r.status);
  });

  it('SIGKILL one mid-stream: every acknowledged write is readable through the other, every committed event is delivered', async () => {
    receiver.answer(() => ({ status: 200, delayMs: 150 }));
    const hook = await call(b, apiKey, 'POST', '/v1/webhooks', { url: receiver.url('/scale'), events: ['application.approved'] });
    expect(hook.status).toBe(201);

    const acknowledged = new Set<string>();
    let killed = false;
    const writer = async (service: ServiceProcess, worker: number) => {
      for (let n = 0; n < 200; n++) {
        if (service === a && killed) return;
        if (service === b && killed && n > 60) return;
        try {
          const created = await call(service, apiKey, 'POST', '/v1/applications', { ...APPROVABLE, applicant: { ...APPROVABLE.applicant, name: `Writer ${worker} #${n}` } });
          if (created.status !== 201) continue;
          const { mortgageId } = (await created.json()) as { mortgageId: string };
          acknowledged.add(mortgageId);
          const submitted = await call(service, apiKey, 'POST', `/v1/applications/${mortgageId}/submit`);
          await submitted.arrayBuffer();
        } catch {
          return; // the instance died under this request: its outcome is unknown, either is fine
        }
        if (!killed && acknowledged.size >= 60) {
          killed = true;
          a.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all([writer(a, 1), writer(a, 2), writer(b, 3), writer(b, 4)]);
    expect(killed).toBe(true);
    expect(await a.exited).toMatchObject({ signal: 'SIGKILL' });

    // Every write either instance acknowledged is there, through the survivor.
    const missing: string[] = [];
    for (const mortgageId of acknowledged) {
      if ((await call(b, apiKey, 'GET', `/v1/applications/${mortgageId}`)).status !== 200) missing.push(mortgageId);
    }
    expect(missing).toEqual([]);

    // Every committed approval is delivered at least once: the killed instance's leases run out
    // and the survivor sends them.
    const committed = await eventIds("SELECT id FROM webhook_events WHERE type = 'application.approved' AND is_test = 0 AND occurred_at >= (SELECT created_at FROM webhook_endpoints LIMIT 1)");
    expect(committed.length).toBeGreaterThan(0);
    const deadline = Date.now() + 25_000;
    let received = new Map<string, number>();
    for (;;) {
      received = new Map();
      for (const d of receiver.deliveries) {
        const id = String(d.headers['webhook-id']);
        received.set(id, (received.get(id) ?? 0) + 1);
      }
      if (committed.every((id) => received.has(id)) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const undelivered = committed.filter((id) => !received.has(id));
    const duplicates = [...received.values()].reduce((sum, n) => sum + n - 1, 0);
    console.log(
      `scale-out: ${acknowledged.size} acknowledged writes, all readable after SIGKILL; ${committed.length} committed events, ` +
        `${committed.length - undelivered.length} delivered, ${duplicates} duplicate deliveries (at-least-once)`,
    );
    expect(undelivered).toEqual([]);
  }, 90_000);
});

describe('rate limits shared by the instances', () => {
  it('a key gets its limit once over both instances together', async () => {
    const env = { RATE_LIMIT_PER_MINUTE: '20' };
    const [a, b] = await Promise.all([instance(env), instance(env)]);
    // The shared windows are clock minutes (the instances run on this machine's clock): a run that
    // crosses a minute boundary counts in two windows and proves nothing, so it runs again with a new key.
    for (let run = 1; ; run++) {
      const created = await runAdmin(['account', 'create', '--name', `Limited Lending ${run}`, '--email', `ops${run}@limited.test`, '--json'], {
        dataDir: a.dataDir,
        env: { ...databaseEnv(database.url), SECRETS_KEY },
      });
      expect(created.code).toBe(0);
      const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
      const minute = Math.floor(Date.now() / 60_000);
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await call(i % 2 === 0 ? a : b, apiKey, 'GET', '/v1/account')).status);
      if (Math.floor(Date.now() / 60_000) !== minute && run < 3) continue;
      // Each instance alone would let all 30 through (15 each, under 20): together, the first 20 pass and the rest are limited.
      expect(statuses).toEqual([...Array(20).fill(200), ...Array(10).fill(429)]);
      break;
    }
  }, 60_000);
});

const withClient = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withDatabaseClient(database.url, fn);

function countEvents(sql: string): Promise<number> {
  return withClient(async (client) => Number((await client.query<{ n: string }>(sql)).rows[0]!.n));
}

function eventIds(sql: string): Promise<string[]> {
  return withClient(async (client) => (await client.query<{ id: string }>(sql)).rows.map((r) => r.id));
}
