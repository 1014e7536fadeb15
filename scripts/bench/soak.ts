/**
 * Soak: a mixed load on the real service for SOAK_MINUTES (20 by default) on each engine, sql.js
 * then PostgreSQL, and what drifts. SOAK_WORKERS (8) clients run loops of nine requests: three
 * quotes, a draft application, a document upload (a 4 KiB PDF), its submission, reads of the
 * application, the account and a quote. After a warm-up of 2 minutes flat out, the loops start
 * SOAK_RATE times a second (25 by default: 225 requests a second, the same on every machine that
 * keeps up; ./pace.ts says why), or as fast as the clients go all through with SOAK_RATE=max; a
 * loop that starts late is timed from when it was due. A webhook endpoint on a local receiver
 * subscribes to application.approved and document.uploaded; one CSV export runs at the start of
 * every minute. Everything is on 127.0.0.1 and stops by itself.
 *
 * Printed per minute: operations (throughput), errors, p99 of the loop's requests (exports apart),
 * the export's time, the server's RSS, V8 heap (used, and committed) and external memory (Buffers)
 * (read in the service by ./soakProbe.ts), its CPU time per operation (from /proc: a service grown
 * costlier is told apart from a machine that got slower), and on sql.js the database's size in
 * memory (the service's `mos_store_database_bytes`, scraped from its metrics listener: the
 * database lives in memory, so RSS grows with it by design; RSS minus that size is what must not
 * drift). Then the drift over the minutes after the first 2 (warm-up), read from the trend of every
 * one of them (./trend.ts: the median slope between minutes), with the last minute against the
 * first of them printed beside it. Goals: RSS (less the database on sql.js) and p99 grow < 10 %,
 * throughput falls < 10 %, no error, every webhook delivered.
 *
 * Run: npm run bench -- soak   (SOAK_MINUTES=20, SOAK_RATE=25, SOAK_WORKERS=8, SOAK_ENGINES=sqljs,postgres)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { postgresAvailable } from '../lib/pgDatabase.ts';
import { freePort, type ServiceProcess } from '../lib/spawnService.ts';
import { processCpuMicros } from '../lib/processCpu.ts';
import { exportOnce, rssBytes } from './export.ts';
import { fmt, reportGoal, signedPercent } from './goals.ts';
import { percentile, postJson, QUOTE_BODY, startTarget, type Target } from './pgTargets.ts';
import { DatabaseCpu } from './databaseCpu.ts';
import { LoopPace, parseRate } from './pace.ts';
import { trendDrift } from './trend.ts';

const MINUTES = Math.min(240, Math.max(1, Number(process.env.SOAK_MINUTES ?? 20)));
const WORKERS = Math.min(64, Math.max(1, Number(process.env.SOAK_WORKERS ?? 8)));
/** Loops started a second, all clients together; null: as fast as they go. */
const RATE = parseRate(process.env.SOAK_RATE, 25);
const REQUESTS_PER_LOOP = 9;
const ENGINES = (process.env.SOAK_ENGINES ?? 'sqljs,postgres').split(',').filter((e): e is 'sqljs' | 'postgres' => e === 'sqljs' || e === 'postgres');
const WARM_MINUTES = Math.min(2, MINUTES - 1);
const MiB = 1024 * 1024;
const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'soakProbe.ts');
const PDF = new Uint8Array(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4096 - 9, 0x20)]));
const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

interface Minute {
  ops: number;
  errors: number;
  latencies: number[];
  exportMs: number | null;
  rss: number;
  heapUsed: number;
  /** V8's heap as committed (heapUsed and what it holds in reserve), and memory outside it that JS objects hold (Buffers): RSS less both is native. */
  heapTotal: number;
  external: number;
  dbBytes: number;
  /** The service's CPU time (user + system, µs) over the samples that ended in this minute; null without /proc. */
  cpuUs: number | null;
  /** PostgreSQL: its CPU (µs) for the load in this minute, the export and VACUUM apart; null on sql.js. */
  dbCpuUs: number | null;
  /** PostgreSQL: its CPU (µs) for this minute's export and VACUUM (the soak's own work, which grows with the data). */
  dbOwnWorkUs: number | null;
}

/**
 * On a PostgreSQL whose autovacuum is off (the machines this project runs on set it off in their
 * configuration; PostgreSQL's default, and any production server, has it on), dead row versions
 * pile up under a write-heavy soak and every index scan wades through them: throughput fell to a
 * third in ten minutes, and came back at once after one VACUUM. The soak then vacuums once a minute
 * in autovacuum's place, so that it measures the service, not a server configured unlike any real
 * one. Returns null where autovacuum is on.
 */
interface Vacuum {
  run(): Promise<void>;
  close(): Promise<void>;
}

async function standInForAutovacuum(url: string): Promise<Vacuum | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ autovacuum: string }>('SHOW autovacuum');
  if (rows[0]?.autovacuum !== 'off') {
    await client.end();
    return null;
  }
  console.log('  autovacuum is off on this PostgreSQL: the soak runs VACUUM (ANALYZE) once a minute in its place');
  return {
    run: async () => void (await client.query('VACUUM (ANALYZE)')),
    close: () => client.end(),
  };
}

class Soak {
  readonly minutes: Minute[] = [];
  /** VACUUM in autovacuum's place (PostgreSQL with autovacuum off), once a minute after the export. */
  vacuum: Vacuum | null = null;
  /** PostgreSQL's CPU for the soak's database. */
  databaseCpu: DatabaseCpu | null = null;
  expectedDeliveries = 0;
  readonly errorSamples: string[] = [];
  private readonly started = performance.now();
  /** The warm-up minutes run flat out (./pace.ts says why); the measured ones at the rate. */
  private readonly pace = new LoopPace(RATE, this.started + WARM_MINUTES * 60_000);
  private readonly target: Target;
  /** sql.js: the service's metrics listener, read for the database's size in memory. */
  private readonly metricsPort: number | null;
  constructor(target: Target, metricsPort: number | null) {
    this.target = target;
    this.metricsPort = metricsPort;
  }

  current(): Minute | undefined {
    const index = Math.floor((performance.now() - this.started) / 60_000);
    if (index >= MINUTES) return undefined;
    const db = this.target.engine === 'postgres' ? 0 : null;
    while (this.minutes.length <= index) this.minutes.push({ ops: 0, errors: 0, latencies: [], exportMs: null, rss: 0, heapUsed: 0, heapTotal: 0, external: 0, dbBytes: 0, cpuUs: 0, dbCpuUs: db, dbOwnWorkUs: db });
    return this.minutes[index];
  }

  /** One request of the loop: timed from `since` (when it was due), and counted as an error unless its status is `ok`. */
  async call(label: string, ok: number, send: () => Promise<{ status: number; json: Record<string, unknown> }>, since = performance.now()): Promise<Record<string, unknown> | null> {
    const t = since;
    let status = 0;
    let json: Record<string, unknown> = {};
    try {
      ({ status, json } = await send());
    } catch (err) {
      if (this.errorSamples.length < 5) this.errorSamples.push(`${label}: ${String(err)}`);
    }
    const minute = this.current();
    if (minute) {
      minute.ops++;
      minute.latencies.push(performance.now() - t);
      if (status !== ok) minute.errors++;
    }
    if (status !== ok && status !== 0 && this.errorSamples.length < 5) this.errorSamples.push(`${label}: ${status} ${JSON.stringify(json).slice(0, 200)}`);
    return status === ok ? json : null;
  }

  get(service: ServiceProcess, pathname: string) {
    return async () => {
      const response = await fetch(`${service.baseUrl}${pathname}`, { headers: { authorization: `Bearer ${this.target.apiKey}` } });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
  }

  upload(service: ServiceProcess, mortgageId: string) {
    return async () => {
      const body = new FormData();
      body.append('documentType', 'income_proof');
      body.append('file', new Blob([PDF], { type: 'application/pdf' }), 'payslip.pdf');
      const response = await fetch(`${service.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${this.target.apiKey}` }, body });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
  }

  async worker(w: number): Promise<void> {
    const service = this.target.services[w % this.target.services.length]!;
    const key = this.target.apiKey;
    while (this.current()) {
      const due = await this.pace.next();
      if (!this.current()) break;
      let quoteId = '';
      for (let i = 0; i < 3; i++) {
        const quote = await this.call('quote', 201, () => postJson(service, key, '/v1/quotes', JSON.parse(QUOTE_BODY)), i === 0 ? due : undefined);
        if (quote) quoteId = String(quote.quoteId);
      }
      const draft = await this.call('draft', 201, () => postJson(service, key, '/v1/applications', APPROVABLE));
      if (draft) {
        const id = String(draft.mortgageId);
        if (await this.call('upload', 201, this.upload(service, id))) this.expectedDeliveries++;
        const submitted = await this.call('submit', 200, () => postJson(service, key, `/v1/applications/${id}/submit`));
        if (submitted?.status === 'approved') this.expectedDeliveries++;
        await this.call('read application', 200, this.get(service, `/v1/applications/${id}`));
      }
      await this.call('read account', 200, this.get(service, '/v1/account'));
      if (quoteId) await this.call('read quote', 200, this.get(service, `/v1/quotes/${quoteId}`));
    }
  }

  /** One export at the start of each minute; memory sampled every 5 s (the minute keeps its last sample). */
  async monitor(probeFile: string): Promise<void> {
    const service = this.target.services[0]!;
    let exportedIn = -1;
    let cpuBefore = await processCpuMicros(service.pid);
    for (let minute = this.current(); minute; minute = this.current()) {
      const index = this.minutes.indexOf(minute);
      if (index !== exportedIn) {
        exportedIn = index;
        if (this.databaseCpu && minute.dbCpuUs !== null) minute.dbCpuUs += await this.databaseCpu.sample();
        const t = performance.now();
        try {
          await exportOnce(service, this.target.apiKey, 'csv');
          minute.exportMs = performance.now() - t;
        } catch (err) {
          minute.errors++;
          if (this.errorSamples.length < 5) this.errorSamples.push(`export: ${String(err)}`);
        }
        await this.vacuum?.run();
        if (this.databaseCpu && minute.dbOwnWorkUs !== null) minute.dbOwnWorkUs += await this.databaseCpu.sample();
      }
      const sampleInto = this.current() ?? minute;
      sampleInto.rss = rssBytes(service.pid);
      // The service's own CPU per operation tells a costlier service from a slower machine (a shared one's speed varies from minute to minute).
      const cpuNow = await processCpuMicros(service.pid);
      sampleInto.cpuUs = cpuBefore && cpuNow && sampleInto.cpuUs !== null ? sampleInto.cpuUs + cpuNow.userUs + cpuNow.systemUs - cpuBefore.userUs - cpuBefore.systemUs : null;
      cpuBefore = cpuNow;
      if (this.databaseCpu && sampleInto.dbCpuUs !== null) sampleInto.dbCpuUs += await this.databaseCpu.sample();
      try {
        ({ heapUsed: sampleInto.heapUsed, heapTotal: sampleInto.heapTotal, external: sampleInto.external } = JSON.parse(readFileSync(probeFile, 'utf8')) as Pick<Minute, 'heapUsed' | 'heapTotal' | 'external'>);
      } catch {
        // not written yet
      }
      if (this.target.engine === 'sqljs') sampleInto.dbBytes = (await databaseBytes(this.metricsPort)) ?? sampleInto.dbBytes;
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
  }
}

/**
 * The database's size in memory, as the service reports it (its pages; null if the scrape failed).
 * Its files on disk are no measure of it: the journal holds statements, not pages, and is cut at
 * each checkpoint, so RSS less their size drifted with the database.
 */
async function databaseBytes(metricsPort: number | null): Promise<number | null> {
  if (metricsPort === null) return null;
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('mos_store_database_bytes '));
    return line === undefined ? null : Number(line.split(' ')[1]);
  } catch {
    return null;
  }
}

async function soakOn(engine: 'sqljs' | 'postgres'): Promise<void> {
  const probeDir = await mkdtemp(path.join(os.tmpdir(), 'mos-soak-'));
  const probeFile = path.join(probeDir, 'memory.json');
  const received = new Set<string>();
  let duplicates = 0;
  const receiver = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    req.resume();
    req.on('end', () => {
      if (received.has(id)) duplicates++;
      received.add(id);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', `--import=${pathToFileURL(PROBE).href}`].join(' ').trim();
  // On sql.js the metrics listener tells the database's size in memory (the same on every minute, so it moves no drift).
  const metricsPort = engine === 'sqljs' ? await freePort() : null;
  const target = await startTarget(engine, 1, { env: { NODE_OPTIONS: nodeOptions, SOAK_PROBE_FILE: probeFile, ...(metricsPort === null ? {} : { METRICS_PORT: String(metricsPort) }) } });
  let vacuum: Vacuum | null = null;
  let databaseCpu: DatabaseCpu | null = null;
  try {
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const hook = await postJson(target.services[0]!, target.apiKey, '/v1/webhooks', { url, events: ['application.approved', 'document.uploaded'] });
    if (hook.status !== 201) throw new Error(`registering the webhook endpoint answered ${hook.status}`);
    const soak = new Soak(target, metricsPort);
    vacuum = target.database ? await standInForAutovacuum(target.database.url) : null;
    soak.vacuum = vacuum;
    databaseCpu = target.database ? await DatabaseCpu.open(target.database.url) : null;
    soak.databaseCpu = databaseCpu;
    console.log(`  ${target.label}: ${MINUTES} min, ${WORKERS} clients, ${paceText()}`);
    console.log('   min    ops/min  errors   p99 ms  export s   RSS MiB  heap MiB  V8 MiB  ext MiB  µs/op' + (engine === 'sqljs' ? '  db MiB  RSS-db MiB' : '  db µs/op  export+vacuum db s'));
    let printed = 0;
    const printer = setInterval(() => {
      // A minute is printed once the next has begun.
      while (printed < soak.minutes.length - 1) printMinute(engine, printed, soak.minutes[printed++]!);
    }, 1000);
    try {
      await Promise.all([...Array.from({ length: WORKERS }, (_, w) => soak.worker(w)), soak.monitor(probeFile)]);
    } finally {
      clearInterval(printer);
    }
    while (printed < soak.minutes.length) printMinute(engine, printed, soak.minutes[printed++]!);
    const deadline = Date.now() + 120_000;
    while (received.size < soak.expectedDeliveries && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    report(engine, soak, received.size, duplicates);
  } finally {
    await vacuum?.close();
    await databaseCpu?.close();
    await target.cleanup();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await rm(probeDir, { recursive: true, force: true });
  }
}

const paceText = () =>
  RATE === null ? 'loops as fast as the clients go' : `${fmt(RATE, 1)} loops a second after ${WARM_MINUTES} minutes flat out (${fmt(RATE * REQUESTS_PER_LOOP * 60)} requests a minute offered)`;
const p99 = (m: Minute) => percentile([...m.latencies].sort((a, b) => a - b), 99);
const cpuPerOp = (m: Minute): number | null => (m.cpuUs === null || m.ops === 0 ? null : m.cpuUs / m.ops);
const dbCpuPerOp = (m: Minute): number | null => (m.dbCpuUs === null || m.ops === 0 ? null : m.dbCpuUs / m.ops);
const memoryOf = (engine: string, m: Minute) => (engine === 'sqljs' ? m.rss - m.dbBytes : m.rss);

function printMinute(engine: string, index: number, m: Minute): void {
  console.log(
    `  ${String(index + 1).padStart(4)}  ${fmt(m.ops).padStart(9)}  ${String(m.errors).padStart(6)}  ${fmt(p99(m), 1).padStart(7)}  ` +
      `${m.exportMs === null ? '        -' : fmt(m.exportMs / 1000, 2).padStart(9)}  ${fmt(m.rss / MiB, 1).padStart(8)}  ${fmt(m.heapUsed / MiB, 1).padStart(8)}  ${fmt(m.heapTotal / MiB, 1).padStart(7)}  ${fmt(m.external / MiB, 1).padStart(7)}  ${cpuPerOp(m) === null ? '     -' : fmt(cpuPerOp(m)!, 0).padStart(6)}` +
      (engine === 'sqljs'
        ? `  ${fmt(m.dbBytes / MiB, 1).padStart(6)}  ${fmt((m.rss - m.dbBytes) / MiB, 1).padStart(10)}`
        : `  ${dbCpuPerOp(m) === null ? '-' : fmt(dbCpuPerOp(m)!, 0).padStart(8)}  ${m.dbOwnWorkUs === null ? '-' : fmt(m.dbOwnWorkUs / 1e6, 2).padStart(18)}`),
  );
}

function report(engine: 'sqljs' | 'postgres', soak: Soak, delivered: number, duplicates: number): void {
  const minutes = soak.minutes.slice(0, MINUTES);
  // A partial last minute (the loop stopped inside it) would understate throughput: drop it.
  const full = minutes.filter((m) => m.ops > 0);
  const measured = full.slice(Math.min(WARM_MINUTES, full.length - 1));
  const first = measured[0]!;
  const last = measured[measured.length - 1]!;
  // The goal reads the trend over every minute after the warm-up (./trend.ts says why); the
  // single pair of minutes at the ends is printed beside it.
  const rssDrift = trendDrift(measured.map((m) => memoryOf(engine, m)));
  const p99Drift = trendDrift(measured.map(p99));
  const opsDrift = trendDrift(measured.map((m) => m.ops));
  const drift = (a: number, b: number) => (a > 0 ? b / a - 1 : 0);
  const errors = minutes.reduce((sum, m) => sum + m.errors, 0);
  const label = engine === 'sqljs' ? 'sql.js' : 'PostgreSQL';
  const memory = engine === 'sqljs' ? 'RSS less the database' : 'RSS';
  const span = `minutes ${minutes.indexOf(first) + 1}–${minutes.indexOf(last) + 1}`;
  console.log(`  drift (trend over ${span}): ${memory} ${signedPercent(rssDrift)}, p99 ${signedPercent(p99Drift)}, throughput ${signedPercent(opsDrift)}`);
  console.log(
    `  minute ${minutes.indexOf(last) + 1} vs minute ${minutes.indexOf(first) + 1} alone: ${memory} ${signedPercent(drift(memoryOf(engine, first), memoryOf(engine, last)))}, ` +
      `p99 ${signedPercent(drift(p99(first), p99(last)))}, throughput ${signedPercent(drift(first.ops, last.ops))}`,
  );
  const cpu = measured.map(cpuPerOp);
  if (cpu.every((c) => c !== null)) console.log(`  the service's CPU per operation (not a goal; export and background work included): trend ${signedPercent(trendDrift(cpu as number[]))}`);
  const dbCpu = measured.map(dbCpuPerOp);
  if (engine === 'postgres' && dbCpu.every((c) => c !== null)) {
    console.log(
      `  PostgreSQL's CPU per operation (not a goal; the export and VACUUM apart): trend ${signedPercent(trendDrift(dbCpu as number[]))}; ` +
        `the export and VACUUM: ${fmt((first.dbOwnWorkUs ?? 0) / 1e6, 2)} s of its CPU in minute ${minutes.indexOf(first) + 1}, ${fmt((last.dbOwnWorkUs ?? 0) / 1e6, 2)} s in minute ${minutes.indexOf(last) + 1}`,
    );
  }
  console.log(`  errors ${errors}; webhooks delivered ${delivered}/${soak.expectedDeliveries} (${duplicates} redelivered)`);
  for (const sample of soak.errorSamples) console.log(`    error: ${sample}`);
  const met = rssDrift < 0.1 && p99Drift < 0.1 && opsDrift > -0.1 && errors === 0 && delivered >= soak.expectedDeliveries;
  reportGoal(
    `soak, ${label}: drift after the first 2 minutes, errors, webhooks`,
    `${MINUTES} min on ${label}, trend over ${span}: RSS${engine === 'sqljs' ? '−db' : ''} ${signedPercent(rssDrift)}, p99 ${signedPercent(p99Drift)}, throughput ${signedPercent(opsDrift)}, ${errors} errors, ${delivered}/${soak.expectedDeliveries} webhooks`,
    'RSS, p99 rise < 10 %, throughput fall < 10 %, 0 errors, all delivered',
    met,
  );
}

export async function run(): Promise<void> {
  console.log(`soak: mixed load, ${MINUTES} min per engine (SOAK_MINUTES), ${WORKERS} clients, ${paceText()} (SOAK_RATE), ${os.cpus().length} CPUs, everything on this machine`);
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      console.log('  postgres: skipped, PostgreSQL does not answer on 127.0.0.1:5432');
      continue;
    }
    await soakOn(engine);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
