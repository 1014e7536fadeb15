/**
 * The cost of the request log: POST /v1/quotes with request logging on (REQUEST_LOGS=on, the
 * default) and off, in alternating rounds (alternatingRounds.ts). Goal (issue 28): throughput with
 * logging on ≥ 0.95× with it off (≤ 5 % slower).
 *
 * Run: node scripts/bench/requestLogs.ts   (REQUEST_LOGS_BENCH_SECONDS=4 per round, 6 rounds each)
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { compareOnQuotes } from './alternatingRounds.ts';
import { fmt, reportGoal } from './goals.ts';

const SECONDS = Math.min(60, Math.max(1, Number(process.env.REQUEST_LOGS_BENCH_SECONDS ?? 4)));

export async function run(): Promise<void> {
  console.log(`requestLogs: POST /v1/quotes with REQUEST_LOGS=on vs off, 2 services each, 50 connections, 6 alternating rounds of ${SECONDS} s per service, ${os.cpus().length} CPUs`);
  const result = await compareOnQuotes({ name: 'logging on', env: () => ({ REQUEST_LOGS: 'on' }) }, { name: 'logging off', env: () => ({ REQUEST_LOGS: 'off' }) }, SECONDS);
  const failed = result.candidate.failures + result.baseline.failures > 0 ? ' (with failed requests)' : '';
  reportGoal(
    'POST /v1/quotes with request logging on vs off',
    `${fmt(result.candidate.perSecond)} vs ${fmt(result.baseline.perSecond)} req/s per service, median round ${result.median.toFixed(3)}×${failed}`,
    '≥ 0.95× (≤ 5 % slower)',
    result.median >= 0.95 && failed === '',
  );
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
