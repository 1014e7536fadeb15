/**
 * POST /v1/quotes throughput and p99 latency, with autocannon (50 connections), against four
 * targets in one run, each server in its own child process so none shares an event loop with the
 * load generator:
 *   real     the service (`node src/main.ts`): auth, validation, pricing, durable write (journal + fsync)
 *   account  GET /v1/account on that same server: the edge and a key look-up, no pricing, no write
 *   bare     a node:http server answering a fixed quote JSON: the ceiling of Node's HTTP on this machine
 *   mock     the Prism contract mock serving generated/openapi.json: what partners test against
 * and prints req/s and p99 for each and the ratios real/account, real/mock and real/bare.
 * Goals (issue 17): real ≥ 0.50× account on the same server, and ≥ 5× the mock.
 *
 * Run: node scripts/bench/quotes.ts   (QUOTES_BENCH_SECONDS=10 by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { startBareServer, type BareServer } from '../lib/bareServer.ts';
import { processCpuMicros } from '../lib/processCpu.ts';
import { createAccountWithCli, freePort, PROJECT_ROOT, startService } from '../lib/spawnService.ts';
import { fmt, reportGoal } from './goals.ts';

const CONNECTIONS = 50;
const SECONDS = Math.min(60, Math.max(1, Number(process.env.QUOTES_BENCH_SECONDS ?? 10)));
const WARMUP_SECONDS = 2;
const REQUEST_BODY = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });

export interface TargetFigures {
  name: string;
  requestsPerSec: number;
  p99Ms: number;
  /** Responses that were not the expected 201, and socket errors or timeouts. */
  non2xx: number;
  errors: number;
  /** The server process's CPU time (all its threads, user and system) per request, where /proc tells it. */
  cpuPerRequest: { userUs: number; systemUs: number } | null;
}

async function load(name: string, url: string, headers: Record<string, string>, seconds: number, method: 'GET' | 'POST' = 'POST', pid?: number): Promise<TargetFigures> {
  const before = pid === undefined ? null : await processCpuMicros(pid);
  const result = await autocannon({
    url,
    method,
    headers: method === 'POST' ? { 'content-type': 'application/json', ...headers } : headers,
    ...(method === 'POST' ? { body: REQUEST_BODY } : {}),
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
  const after = pid === undefined ? null : await processCpuMicros(pid);
  const requests = Math.max(1, result.requests.total);
  return {
    name,
    requestsPerSec: result.requests.average,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuPerRequest: before && after ? { userUs: (after.userUs - before.userUs) / requests, systemUs: (after.systemUs - before.systemUs) / requests } : null,
  };
}

/** Warm up (JIT, connection pools) for a moment, then measure. */
async function measure(name: string, url: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'POST', pid?: number): Promise<TargetFigures> {
  await load(name, url, headers, WARMUP_SECONDS, method);
  return load(name, url, headers, SECONDS, method, pid);
}

/** Prism logs in its own format; wait until it answers the operation instead. */
async function startPrism(): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const bin = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'prism');
  const child = spawn(bin, ['mock', '-p', String(port), '-h', '127.0.0.1', path.join(PROJECT_ROOT, 'generated', 'openapi.json')], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/v1/quotes`, {
        method: 'POST',
        headers: { authorization: 'Bearer mos_live_bench', 'content-type': 'application/json' },
        body: REQUEST_BODY,
      });
      await response.arrayBuffer();
      if (response.status === 201) return { child, port };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error('prism did not answer within 60 s');
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export interface QuotesBench {
  real: TargetFigures;
  account: TargetFigures;
  bare: TargetFigures;
  mock: TargetFigures;
  realOverAccount: number;
  realOverBare: number;
  realOverMock: number;
}

export async function benchQuotes(): Promise<QuotesBench> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-quotes-'));
  const children: ChildProcess[] = [];
  let bare: BareServer | undefined;
  try {
    const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending');
    const service = await startService({ dataDir, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' } });
    children.push(service.child);

    // The bare server answers with a real quote of the service, so both send the same bytes.
    const sample = await fetch(`${service.baseUrl}/v1/quotes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: REQUEST_BODY,
    });
    const sampleBody = await sample.text();
    if (sample.status !== 201) throw new Error(`the service answered ${sample.status} to the bench request: ${sampleBody}`);

    bare = await startBareServer(sampleBody, 201);
    const prism = await startPrism();
    children.push(prism.child);

    const auth = { authorization: `Bearer ${apiKey}` };
    const real = await measure('real', `${service.baseUrl}/v1/quotes`, auth, 'POST', service.pid);
    const account = await measure('account', `${service.baseUrl}/v1/account`, auth, 'GET', service.pid);
    const bareFigures = await measure('bare', `${bare.url}/v1/quotes`, auth);
    const mock = await measure('mock', `http://127.0.0.1:${prism.port}/v1/quotes`, auth);
    return {
      real,
      account,
      bare: bareFigures,
      mock,
      realOverAccount: real.requestsPerSec / account.requestsPerSec,
      realOverBare: real.requestsPerSec / bareFigures.requestsPerSec,
      realOverMock: real.requestsPerSec / mock.requestsPerSec,
    };
  } finally {
    await Promise.all([...children.map(stopChild), bare?.stop()]);
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  console.log(`quotes: POST /v1/quotes, ${CONNECTIONS} connections, ${SECONDS} s each (after ${WARMUP_SECONDS} s warm-up), ${os.cpus().length} CPUs`);
  const bench = await benchQuotes();
  for (const t of [bench.real, bench.account, bench.bare, bench.mock]) {
    const problems = t.non2xx || t.errors ? `  (${t.non2xx} non-2xx, ${t.errors} errors/timeouts)` : '';
    console.log(`  ${t.name.padEnd(7)} ${t.requestsPerSec.toFixed(0).padStart(7)} req/s  p99 ${String(t.p99Ms).padStart(5)} ms${problems}`);
  }
  console.log(`  real/account ${bench.realOverAccount.toFixed(2)}x  real/mock ${bench.realOverMock.toFixed(1)}x  real/bare ${bench.realOverBare.toFixed(2)}x`);
  // Throughput on a shared 2-core machine also depends on the load generator beside the server;
  // the server's own CPU per request says what each request costs it, whatever the client does.
  for (const t of [bench.real, bench.account]) {
    if (t.cpuPerRequest) {
      const { userUs, systemUs } = t.cpuPerRequest;
      console.log(`  server CPU per request, ${t.name.padEnd(7)} ${(userUs + systemUs).toFixed(1)} µs (user ${userUs.toFixed(1)}, system ${systemUs.toFixed(1)})`);
    }
  }
  const failed = bench.real.non2xx + bench.real.errors + bench.account.non2xx + bench.account.errors > 0 ? ' (with failed requests)' : '';
  reportGoal(
    'POST /v1/quotes vs GET /v1/account on the same server',
    `${fmt(bench.real.requestsPerSec)} vs ${fmt(bench.account.requestsPerSec)} req/s = ${bench.realOverAccount.toFixed(2)}×${failed}`,
    '≥ 0.50×',
    bench.realOverAccount >= 0.5 && failed === '',
  );
  reportGoal(
    'POST /v1/quotes vs the Prism mock of the same operation',
    `${fmt(bench.real.requestsPerSec)} vs ${fmt(bench.mock.requestsPerSec)} req/s = ${bench.realOverMock.toFixed(1)}×${failed}`,
    '≥ 5×',
    bench.realOverMock >= 5 && failed === '',
  );
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
