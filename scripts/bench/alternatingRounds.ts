/**
 * Two configurations of the service compared on POST /v1/quotes: SERVICES services of each (each
 * its own child process and data directory), measured in alternating rounds so that the machine's
 * other load weighs on both alike. The figure is the median of the rounds' throughput ratios (each
 * round's services of one kind added up, measured back to back with the other kind's), which one
 * burst of load elsewhere on a shared machine moves far less than the totals; the totals and the
 * server's CPU per request are printed beside it. Two processes of the same code differ by a few
 * per cent (measured 1.6–6.5 % on the quiet machine), as much as the costs measured: hence several
 * services of each, and the difference between two of the baseline printed as the noise floor.
 * Used by requestLogs.ts and archive.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { processCpuMicros } from '../lib/processCpu.ts';
import { createAccountWithCli, startService, type ServiceProcess } from '../lib/spawnService.ts';
import { fmt } from './goals.ts';

const CONNECTIONS = 50;
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

/** A configuration: a short name, and the environment (beyond the data directory) its services get; `env` may make files of its own in `root`. */
export interface Configuration {
  name: string;
  env(root: string): Record<string, string>;
}

export interface Comparison {
  /** Requests per second per service, and failures, of the candidate and the baseline. */
  candidate: { perSecond: number; failures: number };
  baseline: { perSecond: number; failures: number };
  /** The median of the rounds' candidate/baseline throughput ratios. */
  median: number;
}

const emptyTotals = (): Totals => ({ requests: 0, seconds: 0, cpuUs: 0, failures: 0 });

async function started(configuration: Configuration, index: number): Promise<Started> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `mos-bench-${configuration.name}-${index}-`));
  const env = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', ...configuration.env(dataDir) };
  const { apiKey } = await createAccountWithCli(path.join(dataDir, 'data'), 'Bench Lending', undefined, env);
  const service = await startService({ dataDir: path.join(dataDir, 'data'), env });
  return { service, apiKey, dataDir };
}

/** Measures `candidate` against `baseline`, printing the figures; `seconds` per round per service. */
export async function compareOnQuotes(candidate: Configuration, baseline: Configuration, seconds: number): Promise<Comparison> {
  const services = { candidate: [] as Started[], baseline: [] as Started[] };
  try {
    for (let i = 0; i < SERVICES; i++) {
      services.candidate.push(await started(candidate, i));
      services.baseline.push(await started(baseline, i));
    }
    for (const s of [...services.candidate, ...services.baseline]) await round(s.service, s.apiKey, 2);
    const totals = { candidate: emptyTotals(), baseline: emptyTotals() };
    /** Each baseline service: its req/s added up over the rounds (the noise floor compares two). */
    const baselineRates = services.baseline.map(() => 0);
    const ratios: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
      const order = i % 2 === 0 ? (['baseline', 'candidate'] as const) : (['candidate', 'baseline'] as const);
      const rate = { candidate: 0, baseline: 0 };
      for (const which of order) {
        for (const [k, target] of services[which].entries()) {
          const rps = await round(target.service, target.apiKey, seconds, totals[which]);
          rate[which] += rps;
          if (which === 'baseline') baselineRates[k]! += rps;
        }
      }
      ratios.push(rate.candidate / Math.max(1, rate.baseline));
    }
    ratios.sort((a, b) => a - b);
    const median = (ratios[(ratios.length - 1) >> 1]! + ratios[ratios.length >> 1]!) / 2;
    const perSec = (t: Totals) => t.requests / t.seconds;
    const cpu = (t: Totals) => (t.requests ? t.cpuUs / t.requests : 0);
    for (const [which, t] of Object.entries(totals)) {
      const name = which === 'candidate' ? candidate.name : baseline.name;
      console.log(`  ${name.padEnd(12)} ${perSec(t).toFixed(0).padStart(7)} req/s per service  server CPU ${cpu(t).toFixed(1)} µs/request${t.failures ? `  (${t.failures} failed)` : ''}`);
    }
    // Two processes of the same code differ by a few per cent (JIT, heap layout, the machine's other
    // work): that is what a single pair could not tell from the cost, hence several of each.
    if (baselineRates.length >= 2) console.log(`  noise floor: two ${baseline.name} services differ by ${fmt((baselineRates[1]! / baselineRates[0]! - 1) * 100, 1)} % in throughput`);
    console.log(`  ${candidate.name}/${baseline.name} per round ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median.toFixed(3)}×`);
    console.log(`  totals ${(perSec(totals.candidate) / perSec(totals.baseline)).toFixed(3)}×  CPU per request ${(cpu(totals.candidate) / Math.max(1, cpu(totals.baseline))).toFixed(3)}×`);
    return {
      candidate: { perSecond: perSec(totals.candidate), failures: totals.candidate.failures },
      baseline: { perSecond: perSec(totals.baseline), failures: totals.baseline.failures },
      median,
    };
  } finally {
    const all = [...services.candidate, ...services.baseline];
    await Promise.all(all.map((s) => s.service.stop()));
    await Promise.all(all.map((s) => rm(s.dataDir, { recursive: true, force: true })));
  }
}
