/**
 * The PostgreSQL engine beside sql.js, and one instance beside two on the same database: the
 * quotes, submit, export and webhook benchmarks in short form, each against the real service
 * (`node src/main.ts` child processes), all on 127.0.0.1.
 *
 * - quotes:   POST /v1/quotes with autocannon (50 connections, split over the instances), req/s and p99;
 * - submit:   SUBMIT count drafts made first, then each submitted once (50 at a time), submits/s and p99;
 * - webhooks: test events sent through POST /v1/webhooks/{id}/test (10 at a time, over the
 *             instances) to a local receiver: deliveries/s and publish-to-receipt latency;
 * - export:   PostgreSQL only, CSV over EXPORT records seeded with one INSERT … SELECT: records/s,
 *             time to first byte and the server's peak RSS growth (the sql.js figures are the
 *             `export` benchmark's).
 *
 * Run: npm run bench -- postgres   (POSTGRES_BENCH_SECONDS=5, POSTGRES_BENCH_SUBMITS=1000,
 * POSTGRES_BENCH_EVENTS=300, POSTGRES_BENCH_EXPORT_RECORDS=1000000)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { createTempDatabase, postgresAvailable, type TempDatabase } from '../lib/pgDatabase.ts';
import { createAccountWithCli, startService, type ServiceProcess } from '../lib/spawnService.ts';

const SECONDS = Math.min(30, Math.max(1, Number(process.env.POSTGRES_BENCH_SECONDS ?? 5)));
const SUBMITS = Math.min(20_000, Math.max(100, Number(process.env.POSTGRES_BENCH_SUBMITS ?? 1000)));
const EVENTS = Math.min(5_000, Math.max(50, Number(process.env.POSTGRES_BENCH_EVENTS ?? 300)));
const EXPORT_RECORDS = Math.min(2_000_000, Math.max(1000, Number(process.env.POSTGRES_BENCH_EXPORT_RECORDS ?? 1_000_000)));
const CONNECTIONS = 50;
const PHASE_LIMIT_MS = 180_000;
const MiB = 1024 * 1024;
const QUOTE = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });
const BANK_SECRET = 'bench-bank-secret-0123456789abcdef0123456789';
const SECRETS_KEY = 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';

interface Setup {
  label: string;
  services: ServiceProcess[];
  apiKey: string;
  database: TempDatabase | null;
  cleanup(): Promise<void>;
}

async function setUp(engine: 'sqljs' | 'postgres', instances: number): Promise<Setup> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-pg-'));
  const database = engine === 'postgres' ? await createTempDatabase('mos_bench') : null;
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    BANK_SECRET,
    // Every instance on one database needs the same sealing key, as docs/operators/postgresql.md ("Running several instances") says.
    SECRETS_KEY,
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    ...(database ? { DATABASE_URL: database.url, DATABASE_POOL_MAX: '10' } : {}),
  };
  const services: ServiceProcess[] = [];
  const cleanup = async () => {
    await Promise.all(services.map((s) => s.stop().catch(() => s.child.kill('SIGKILL'))));
    await database?.drop().catch(() => {});
    await rm(root, { recursive: true, force: true });
  };
  try {
    const first = path.join(root, 'data-0');
    // The command opens the database as an instance does: the same SECRETS_KEY, or it is refused.
    const { apiKey } = await createAccountWithCli(first, 'Bench Lending', 'bench@harborlending.test', database ? { DATABASE_URL: database.url, SECRETS_KEY } : {});
    for (let i = 0; i < instances; i++) services.push(await startService({ dataDir: path.join(root, `data-${i}`), env }));
    const label = engine === 'sqljs' ? 'sql.js      ' : `postgres ×${instances}`;
    return { label, services, apiKey, database, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Work split over the instances: `connections` in total, each instance its share. */
async function autocannonOver(services: ServiceProcess[], pathname: string, options: Omit<autocannon.Options, 'url' | 'connections'>, connections: number) {
  const share = Math.max(1, Math.floor(connections / services.length));
  const results = await Promise.all(services.map((s) => autocannon({ ...options, url: `${s.baseUrl}${pathname}`, connections: share })));
  return {
    requestsPerSec: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    bad: results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
  };
}

async function quotes(setup: Setup): Promise<string> {
  const options = {
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.apiKey}` },
    body: QUOTE,
    timeout: 10,
  };
  await autocannonOver(setup.services, '/v1/quotes', { ...options, duration: 1 }, CONNECTIONS);
  const r = await autocannonOver(setup.services, '/v1/quotes', { ...options, duration: SECONDS }, CONNECTIONS);
  return `${r.requestsPerSec.toFixed(0).padStart(6)} req/s  p99 ${String(r.p99Ms).padStart(4)} ms${r.bad ? `  (${r.bad} not 201)` : ''}`;
}

/** Runs `task(i)` for i < count, `concurrency` at a time; returns each one's latency. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<{ ms: number; latencies: number[] }> {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = Date.now() + PHASE_LIMIT_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count && Date.now() < deadline) {
        const i = next++;
        const t = performance.now();
        await task(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { ms: performance.now() - started, latencies: latencies.sort((a, b) => a - b) };
}

async function post(service: ServiceProcess, apiKey: string, pathname: string, body?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${service.baseUrl}${pathname}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function submit(setup: Setup): Promise<string> {
  const { services, apiKey } = setup;
  const ids: string[] = [];
  await pool(SUBMITS, CONNECTIONS, async (i) => {
    const body = JSON.stringify({
      applicant: { name: `Applicant ${i}`, amount: 250_000 + (i % 100) * 1000, annualIncome: 120_000, monthlyDebts: 500, creditScore: 700 + (i % 100) },
      term: 30,
      propertyValue: 480_000,
    });
    const { status, json } = await post(services[i % services.length]!, apiKey, '/v1/applications', body);
    if (status !== 201) throw new Error(`creating a draft answered ${status}`);
    ids[i] = String(json.mortgageId);
  });
  let bad = 0;
  const run = await pool(ids.length, CONNECTIONS, async (i) => {
    const { status } = await post(services[i % services.length]!, apiKey, `/v1/applications/${ids[i]}/submit`);
    if (status !== 200) bad++;
  });
  const perSec = (ids.length / run.ms) * 1000;
  return `${perSec.toFixed(0).padStart(6)} submits/s  p50 ${percentile(run.latencies, 50).toFixed(0).padStart(3)} ms  p99 ${percentile(run.latencies, 99).toFixed(0).padStart(4)} ms${bad ? `  (${bad} not 200)` : ''}`;
}

async function webhooks(setup: Setup): Promise<string> {
  const { services, apiKey } = setup;
  const sentAt = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  let duplicates = 0;
  const receiver = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    req.resume();
    req.on('end', () => {
      if (receivedAt.has(id)) duplicates++;
      else receivedAt.set(id, performance.now());
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const hook = await post(services[0]!, apiKey, '/v1/webhooks', JSON.stringify({ url, events: ['application.approved'] }));
    if (hook.status !== 201) throw new Error(`registering the endpoint answered ${hook.status}`);
    const webhookId = String(hook.json.webhookId);
    const started = performance.now();
    await pool(EVENTS, 10, async (i) => {
      const t = performance.now();
      const { status, json } = await post(services[i % services.length]!, apiKey, `/v1/webhooks/${webhookId}/test`, JSON.stringify({ event: 'application.approved' }));
      if (status !== 202 && status !== 200 && status !== 201) throw new Error(`a test event answered ${status}`);
      sentAt.set(String(json.eventId), t);
    });
    const deadline = Date.now() + 60_000;
    while (receivedAt.size < sentAt.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const elapsed = Math.max(...receivedAt.values()) - started;
    const latencies = [...sentAt].filter(([id]) => receivedAt.has(id)).map(([id, t]) => receivedAt.get(id)! - t).sort((a, b) => a - b);
    return (
      `${((receivedAt.size / elapsed) * 1000).toFixed(0).padStart(6)} deliveries/s  publish-to-receipt p50 ${percentile(latencies, 50).toFixed(0).padStart(3)} ms  ` +
      `p99 ${percentile(latencies, 99).toFixed(0).padStart(4)} ms  (${receivedAt.size}/${sentAt.size} delivered, ${duplicates} duplicates)`
    );
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return kb ? Number(kb[1]) * 1024 : 0;
}

/** Bench-only SQL: EXPORT_RECORDS applications with ids that sort like real ones, in one statement. */
async function seedExport(database: TempDatabase, apiKey: string, service: ServiceProcess): Promise<void> {
  const account = (await (await fetch(`${service.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { accountId: string };
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO applications (id, account_id, status, applicant_name, applicant_email, amount_cents, annual_income_cents,
         monthly_debts_cents, credit_score, term_years, property_value_cents, quote_id, decision_json, submitted_at, decided_at,
         withdrawn_at, created_at, updated_at)
       SELECT 'mtg-' || lpad(n::text, 26, '0'), $1,
         CASE n % 10 WHEN 6 THEN 'declined' WHEN 7 THEN 'referred' WHEN 8 THEN 'draft' WHEN 9 THEN 'withdrawn' ELSE 'approved' END,
         CASE WHEN n % 100 = 0 THEN 'Doe, "Jay" ' || n ELSE 'Applicant Number ' || n END, 'applicant' || n || '@example.test',
         10000000 + (n * 7919) % 90000000, 6000000 + (n * 104729) % 20000000, (n * 31) % 500000, 580 + n % 270, 10 + n % 31,
         20000000 + (n * 7907) % 100000000, NULL, NULL, $2, $2, NULL, $2, $2
       FROM generate_series(1::bigint, $3::bigint) AS n`,
      [account.accountId, '2026-11-01T09:00:00.000Z', EXPORT_RECORDS],
    );
    await client.query('ANALYZE applications');
  } finally {
    await client.end();
  }
}

async function exportCsv(setup: Setup): Promise<string> {
  const service = setup.services[0]!;
  await seedExport(setup.database!, setup.apiKey, service);
  const baseline = rssBytes(service.pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(service.pid))), 50);
  const started = performance.now();
  let firstByteMs = 0;
  let lines = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const request = http.get(`${service.baseUrl}/v1/mortgages/export?format=csv`, { headers: { authorization: `Bearer ${setup.apiKey}` } }, (response) => {
        response.on('data', (chunk: Buffer) => {
          if (firstByteMs === 0) firstByteMs = performance.now() - started;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        });
        response.on('end', resolve);
        response.on('error', reject);
      });
      request.setTimeout(PHASE_LIMIT_MS, () => request.destroy(new Error('export timed out')));
      request.on('error', reject);
    });
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const records = lines - 1;
  return (
    `${(records / seconds).toFixed(0).padStart(6)} records/s  first byte ${firstByteMs.toFixed(0)} ms  ` +
    `peak RSS growth ${((peak - baseline) / MiB).toFixed(1)} MiB over ${records.toLocaleString('en-US')} records (server RSS ${(baseline / MiB).toFixed(0)} MiB before)`
  );
}

export async function run(): Promise<void> {
  if (!(await postgresAvailable())) {
    console.log('postgres: skipped, PostgreSQL does not answer on 127.0.0.1:5432 (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start)');
    return;
  }
  console.log(`postgres: sql.js vs PostgreSQL (one instance, two on one database), ${os.cpus().length} CPUs, everything on this machine`);
  const lines: Record<string, string[]> = { quotes: [], submit: [], webhooks: [] };
  for (const [engine, instances] of [
    ['sqljs', 1],
    ['postgres', 1],
    ['postgres', 2],
  ] as const) {
    const setup = await setUp(engine, instances);
    try {
      lines.quotes!.push(`  quotes    ${setup.label}  ${await quotes(setup)}`);
      lines.submit!.push(`  submit    ${setup.label}  ${await submit(setup)}`);
      lines.webhooks!.push(`  webhooks  ${setup.label}  ${await webhooks(setup)}`);
    } finally {
      await setup.cleanup();
    }
  }
  for (const group of Object.values(lines)) for (const line of group) console.log(line);
  const setup = await setUp('postgres', 1);
  try {
    console.log(`  export    postgres ×1  ${await exportCsv(setup)}`);
  } finally {
    await setup.cleanup();
  }
  console.log('  (sql.js export figures: npm run bench -- export)');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
