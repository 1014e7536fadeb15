/**
 * GET /v1/account under load: the real service (a child process on a fresh data directory, rate
 * limits off, LOG_LEVEL=warn) beside a bare node:http server (also a child process) answering the
 * same JSON, each driven by autocannon with 50 connections for 10 s, in one run. The ratio says
 * what the whole edge (routing, auth look-up, validation, problem handling, logging) costs over
 * writing the bytes. Goal (issue 17): ≥ 0.30×.
 *
 * Run: npm run bench -- account   (or node scripts/bench/account.ts)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { startBareServer, type BareServer } from '../lib/bareServer.ts';
import { fmt, reportGoal } from './goals.ts';
import { createAccountWithCli, startService } from '../lib/spawnService.ts';

const CONNECTIONS = 50;
const DURATION_S = 10;
const WARMUP_S = 2;

export interface LoadFigures {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, durationS: number): Promise<LoadFigures> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: durationS, headers });
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

function line(label: string, f: LoadFigures): string {
  return `  ${label.padEnd(26)} ${f.requestsPerSec.toFixed(0).padStart(7)} req/s  p50 ${f.p50Ms.toFixed(1)} ms  p99 ${f.p99Ms.toFixed(1)} ms  (${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors)`;
}

export async function benchAccount(): Promise<{ service: LoadFigures; bare: LoadFigures }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'bench-account-'));
  const dataDir = path.join(root, 'data');
  const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending', 'bench@lending.test');
  const service = await startService({ dataDir, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' } });
  let bare: BareServer | undefined;
  try {
    const headers = { Authorization: `Bearer ${apiKey}` };
    const probe = await fetch(`${service.baseUrl}/v1/account`, { headers });
    if (probe.status !== 200) throw new Error(`GET /v1/account answered ${probe.status}: ${await probe.text()}`);
    bare = await startBareServer(await probe.text());

    await load(`${bare.url}/v1/account`, headers, WARMUP_S);
    const bareFigures = await load(`${bare.url}/v1/account`, headers, DURATION_S);
    await load(`${service.baseUrl}/v1/account`, headers, WARMUP_S);
    const serviceFigures = await load(`${service.baseUrl}/v1/account`, headers, DURATION_S);
    if (serviceFigures.non2xx > 0 || serviceFigures.errors > 0) {
      throw new Error(`the service failed requests under load: ${serviceFigures.non2xx} non-2xx, ${serviceFigures.errors} errors`);
    }
    return { service: serviceFigures, bare: bareFigures };
  } finally {
    await bare?.stop();
    await service.stop();
    await rm(root, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  console.log(`GET /v1/account, ${CONNECTIONS} connections, ${DURATION_S} s each (after ${WARMUP_S} s warm-up), on ${os.cpus().length} cores`);
  const { service, bare } = await benchAccount();
  console.log(line('bare node:http, same JSON', bare));
  console.log(line('the service', service));
  const ratio = service.requestsPerSec / bare.requestsPerSec;
  console.log(`  ratio service/bare: throughput ${ratio.toFixed(2)}x, p99 latency ${(service.p99Ms / Math.max(bare.p99Ms, 0.001)).toFixed(2)}x`);
  reportGoal(
    'GET /v1/account vs bare node:http answering the same JSON',
    `${fmt(service.requestsPerSec)} vs ${fmt(bare.requestsPerSec)} req/s = ${ratio.toFixed(2)}×`,
    '≥ 0.30×',
    ratio >= 0.3,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
