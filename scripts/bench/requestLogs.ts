/**
 * The cost of the request log: POST /v1/quotes with request logging on (REQUEST_LOGS=on, the
 * default) and off, on SERVICES services of each started alike (each its own child process and
 * data directory), measured in alternating rounds so that the machine's other load weighs on both
 * alike. The figure is the median of the rounds' on/off throughput ratios (each round's services
 * of one kind added up, measured back to back with the other kind's), which one burst of load
 * elsewhere on a shared machine moves far less than the totals; the totals and the server's CPU
 * per request are printed beside it. Two processes of the same code differ by a few per cent
 * (measured 1.6–6.5 % on the quiet machine), as much as the cost measured: hence several services
 * of each, and the difference between two with logging off printed as the noise floor.
 * Goal (issue 28): throughput with logging on ≥ 0.95× with it off (≤ 5 % slower).
 *
 * Run: node scripts/bench/requestLogs.ts   (REQUEST_LOGS_BENCH_SECONDS=4 per round, 6 rounds each)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { processCpuMicros } from '../lib/processCpu.ts';
import { createAccountWithCli, startService, type ServiceProcess } from '../lib/spawnService.ts';
import { fmt, reportGoal } from './goals.ts';

const CONNECTIONS = 50;
const SECONDS = Math.min(60, Math.max(1, Number(process.env.REQUEST_LOGS_BENCH_SECONDS ?? 4)));
const ROUNDS = 6;
/** Services per configuration, each its own process: their throughput is added up in each round. */
const SERVICES = 2;
const REQUEST_BODY = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });

interface Totals {
  requests: number;
  seconds: number;
  cpuUs: number;
  failures: number;
}

/** Runs one round; returns its throughput (req/s). */
async function round(service: ServiceProcess, apiKey: string, seconds: number, totals?: Totals): Promise<number> {
  const before = await processCpuMicros(service.pid);
  const result = await autocannon({
    url: `${service.baseUrl}/v1/quotes`,
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: REQUEST_BODY,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
  const after = await processCpuMicros(service.pid);
  if (!totals) return 0;
  totals.requests += result.requests.total;
  totals.seconds += seconds;
  totals.failures += result.non2xx + result.errors + result.timeouts;
  if (before && after) totals.cpuUs += after.userUs - before.userUs + (after.systemUs - before.systemUs);
  return result.requests.total / seconds;
}

interface Started {
  service: ServiceProcess;
  apiKey: string;
  dataDir: string;
}

const emptyTotals = (): Totals => ({ requests: 0, seconds: 0, cpuUs: 0, failures: 0 });

async function started(name: string, requestLogs: 'on' | 'off'): Promise<Started> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `mos-bench-reqlogs-${name}-`));
  const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending');
  const service = await startService({ dataDir, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', REQUEST_LOGS: requestLogs } });
  return { service, apiKey, dataDir };
}

export async function run(): Promise<void> {
  console.log(
    `requestLogs: POST /v1/quotes with REQUEST_LOGS=on vs off, ${SERVICES} services each, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s per service, ${os.cpus().length} CPUs`,
  );
  const services = { on: [] as Started[], off: [] as Started[] };
  try {
    for (let i = 0; i < SERVICES; i++) {
      services.on.push(await started(`on-${i}`, 'on'));
      services.off.push(await started(`off-${i}`, 'off'));
    }
    for (const s of [...services.on, ...services.off]) await round(s.service, s.apiKey, 2);
    const totals = { on: emptyTotals(), off: emptyTotals() };
    /** Each service with logging off: its req/s added up over the rounds (the noise floor compares two). */
    const offRates = services.off.map(() => 0);
    const ratios: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
      const order = i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      const rate = { on: 0, off: 0 };
      for (const which of order) {
        for (const [k, target] of services[which].entries()) {
          const rps = await round(target.service, target.apiKey, SECONDS, totals[which]);
          rate[which] += rps;
          if (which === 'off') offRates[k]! += rps;
        }
      }
      ratios.push(rate.on / Math.max(1, rate.off));
    }
    ratios.sort((a, b) => a - b);
    const median = (ratios[(ratios.length - 1) >> 1]! + ratios[ratios.length >> 1]!) / 2;
    const perSec = (t: Totals) => t.requests / t.seconds;
    const cpu = (t: Totals) => (t.requests ? t.cpuUs / t.requests : 0);
    for (const [name, t] of Object.entries(totals)) {
      console.log(`  logging ${name.padEnd(3)} ${perSec(t).toFixed(0).padStart(7)} req/s per service  server CPU ${cpu(t).toFixed(1)} µs/request${t.failures ? `  (${t.failures} failed)` : ''}`);
    }
    // Two processes of the same code differ by a few per cent (JIT, heap layout, the machine's other
    // work): that is what a single pair could not tell from the log's cost, hence several of each.
    if (offRates.length >= 2) console.log(`  noise floor: two services with logging off differ by ${fmt((offRates[1]! / offRates[0]! - 1) * 100, 1)} % in throughput`);
    console.log(`  on/off per round ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median.toFixed(3)}×`);
    const failed = totals.on.failures + totals.off.failures > 0 ? ' (with failed requests)' : '';
    console.log(`  totals on/off ${(perSec(totals.on) / perSec(totals.off)).toFixed(3)}×  CPU per request on/off ${(cpu(totals.on) / Math.max(1, cpu(totals.off))).toFixed(3)}×`);
    reportGoal(
      'POST /v1/quotes with request logging on vs off',
      `${fmt(perSec(totals.on))} vs ${fmt(perSec(totals.off))} req/s per service, median round ${median.toFixed(3)}×${failed}`,
      '≥ 0.95× (≤ 5 % slower)',
      median >= 0.95 && failed === '',
    );
  } finally {
    const all = [...services.on, ...services.off];
    await Promise.all(all.map((s) => s.service.stop()));
    await Promise.all(all.map((s) => rm(s.dataDir, { recursive: true, force: true })));
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
