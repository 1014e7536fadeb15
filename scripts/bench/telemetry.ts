/**
 * The cost of metrics and tracing on POST /v1/quotes (issue 28): the same service (`node
 * src/main.ts`, its own process) under autocannon (50 connections) in four configurations, five services:
 *   off       METRICS_PORT and OTEL_* unset: nothing counted, no span made
 *   metrics   METRICS_PORT set (Prometheus counting), tracing off
 *   tracing   metrics and tracing on, every request sampled (OTEL_TRACES_SAMPLER=always_on), spans
 *             exported over OTLP/HTTP to a sink in this process on 127.0.0.1
 *   sampled   the same, one trace in ten sampled (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
 *             OTEL_TRACES_SAMPLER_ARG=0.1): the operator's lever, printed for information (no goal)
 *   off again a second service with both off: what two processes of the same code differ by (JIT,
 *             heap layout, where the machine's other work fell) is the noise floor, printed; the
 *             baseline the costs are read against is both services with everything off, pooled
 * The five run side by side (each on a data directory of its own) and are loaded in turn, in
 * one-second bursts whose order rotates, many times over: whatever else the shared machine does
 * weighs on each alike. The cost is the server's CPU per request over the same figure with both
 * off (from /proc; throughput, which the load generator on the same cores also shapes, where
 * /proc is missing).
 * Goals: metrics ≤ 5 % with tracing off; ≤ 15 % with tracing on, sampled at 100 %.
 *
 * Run: node scripts/bench/telemetry.ts   (TELEMETRY_BENCH_SECONDS=15 of load per configuration by default)
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { processCpuMicros } from '../lib/processCpu.ts';
import { createAccountWithCli, startService } from '../lib/spawnService.ts';
import { fmt, reportGoal, signedPercent } from './goals.ts';

const CONNECTIONS = 50;
/** Seconds of load per configuration, in bursts. */
const SECONDS = Math.min(120, Math.max(3, Number(process.env.TELEMETRY_BENCH_SECONDS ?? 15)));
const WARMUP_SECONDS = 2;
/** The sampled configuration's share of traces. */
const SAMPLED_RATIO = 0.1;
const REQUEST_BODY = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });

type Configuration = 'off' | 'off again' | 'metrics' | 'tracing' | 'sampled';
const CONFIGURATIONS: Configuration[] = ['off', 'metrics', 'tracing', 'sampled', 'off again'];
/** Short bursts, each configuration in turn (the order rotating), many times over. */
const BURST_SECONDS = 1;
const CYCLES = Math.max(3, Math.round(SECONDS / BURST_SECONDS));

interface Totals {
  requests: number;
  seconds: number;
  /** Server CPU (user + system) over the bursts, µs; null without /proc. */
  cpuUs: number | null;
  failed: number;
}

/** An OTLP/HTTP receiver that takes every export and keeps only its size. */
async function startSink(): Promise<{ url: string; bytes: () => number; close(): Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function environment(configuration: Configuration, sinkUrl: string): Record<string, string> {
  const base = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' };
  if (configuration === 'off' || configuration === 'off again') return base;
  if (configuration === 'metrics') return { ...base, METRICS_PORT: '0' };
  const traced = { ...base, METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl };
  if (configuration === 'sampled') return { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(SAMPLED_RATIO) };
  return { ...traced, OTEL_TRACES_SAMPLER: 'always_on' };
}

async function load(url: string, apiKey: string, seconds: number) {
  return autocannon({
    url,
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: REQUEST_BODY,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
}

/** One burst against one service, added to its totals. */
async function burst(url: string, apiKey: string, pid: number, totals: Totals): Promise<void> {
  const before = await processCpuMicros(pid);
  const result = await load(url, apiKey, BURST_SECONDS);
  const after = await processCpuMicros(pid);
  totals.requests += result.requests.total;
  totals.seconds += BURST_SECONDS;
  totals.failed += result.non2xx + result.errors + result.timeouts;
  totals.cpuUs = before && after && totals.cpuUs !== null ? totals.cpuUs + (after.userUs + after.systemUs - before.userUs - before.systemUs) : null;
}

export async function run(): Promise<void> {
  console.log(
    `telemetry: POST /v1/quotes, ${CONNECTIONS} connections, ${CONFIGURATIONS.length} services (${CONFIGURATIONS.join(', ')}) loaded in turn in ${BURST_SECONDS} s bursts, ${CYCLES} cycles (after ${WARMUP_SECONDS} s warm-up each), ${os.cpus().length} CPUs`,
  );
  const sink = await startSink();
  const dataDirs: string[] = [];
  const services: Array<{ configuration: Configuration; url: string; apiKey: string; pid: number; stop: () => Promise<unknown> }> = [];
  try {
    for (const configuration of CONFIGURATIONS) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), `mos-bench-telemetry-${configuration.replace(' ', '-')}-`));
      dataDirs.push(dataDir);
      const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending');
      const service = await startService({ dataDir, env: environment(configuration, sink.url) });
      services.push({ configuration, url: `${service.baseUrl}/v1/quotes`, apiKey, pid: service.pid, stop: () => service.stop() });
    }
    for (const s of services) await load(s.url, s.apiKey, WARMUP_SECONDS);
    const totals = new Map<Configuration, Totals>(CONFIGURATIONS.map((c) => [c, { requests: 0, seconds: 0, cpuUs: 0, failed: 0 }]));
    // Every configuration meets the same moments of the shared machine: bursts in turn, the order rotating.
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      for (let k = 0; k < services.length; k++) {
        const s = services[(cycle + k) % services.length]!;
        await burst(s.url, s.apiKey, s.pid, totals.get(s.configuration)!);
      }
    }
    for (const configuration of CONFIGURATIONS) {
      const t = totals.get(configuration)!;
      const cpu = t.cpuUs === null ? '' : `  server CPU ${(t.cpuUs / Math.max(1, t.requests)).toFixed(1)} µs/request`;
      console.log(`  ${configuration.padEnd(9)} ${fmt(t.requests / t.seconds).padStart(7)} req/s${cpu}${t.failed ? `  (${t.failed} failed)` : ''}`);
    }
    console.log(`  spans exported to the sink: ${fmt(sink.bytes() / 1024)} KiB`);

    const figureOf = (t: Totals) => ({ cpu: t.cpuUs === null ? null : t.cpuUs / Math.max(1, t.requests), rps: t.requests / t.seconds, failed: t.failed });
    const figure = (configuration: Configuration) => figureOf(totals.get(configuration)!);
    // The baseline is both services with everything off, pooled: two processes of the same code
    // differ by a few per cent (measured 6.5 %), as much as the smaller costs this bench reads.
    const first = figure('off');
    const again = figure('off again');
    const pooled = (a: Totals, b: Totals): Totals => ({ requests: a.requests + b.requests, seconds: a.seconds + b.seconds, cpuUs: a.cpuUs === null || b.cpuUs === null ? null : a.cpuUs + b.cpuUs, failed: a.failed + b.failed });
    const off = figureOf(pooled(totals.get('off')!, totals.get('off again')!));
    if (first.cpu !== null && again.cpu !== null) {
      const floor = again.cpu / first.cpu - 1;
      console.log(`  noise floor: the two services with both off differ by ${signedPercent(floor)} CPU per request (the baseline below is both, pooled)`);
    }
    for (const [configuration, goal, name] of [
      ['metrics', 0.05, 'POST /v1/quotes with metrics on (tracing off) vs both off'],
      ['tracing', 0.15, 'POST /v1/quotes with metrics and tracing on, 100 % sampled, vs both off'],
    ] as const) {
      const on = figure(configuration);
      // CPU per request where /proc tells it; else the throughput lost.
      const cost = on.cpu !== null && off.cpu !== null ? on.cpu / off.cpu - 1 : off.rps / on.rps - 1;
      const basis =
        on.cpu !== null && off.cpu !== null
          ? `${on.cpu.toFixed(1)} vs ${off.cpu.toFixed(1)} µs CPU/request`
          : `${fmt(on.rps)} vs ${fmt(off.rps)} req/s`;
      const failed = on.failed + off.failed > 0 ? ' (with failed requests)' : '';
      reportGoal(name, `${basis} = ${signedPercent(cost)}${failed}`, `≤ ${goal * 100} %`, cost <= goal && failed === '');
    }
    const sampled = figure('sampled');
    if (sampled.cpu !== null && off.cpu !== null) {
      const cost = sampled.cpu / off.cpu - 1;
      console.log(`  for information (no goal): metrics and tracing on, ${SAMPLED_RATIO * 100} % sampled, vs both off: ${sampled.cpu.toFixed(1)} vs ${off.cpu.toFixed(1)} µs CPU/request = ${signedPercent(cost)}`);
    }
  } finally {
    await Promise.all(services.map((s) => s.stop()));
    await sink.close();
    await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
