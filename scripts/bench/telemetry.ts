/**
 * The cost of metrics and tracing on POST /v1/quotes (issue 28): the same service (`node
 * src/main.ts`, its own process) under autocannon (50 connections) in three configurations:
 *   off       METRICS_PORT and OTEL_* unset: nothing counted, no span made
 *   metrics   METRICS_PORT set (Prometheus counting), tracing off
 *   tracing   metrics and tracing on, every request sampled (OTEL_TRACES_SAMPLER=always_on), spans
 *             exported over OTLP/HTTP to a sink in this process on 127.0.0.1
 * Each is measured twice in the order off, metrics, tracing, tracing, metrics, off, so that a drift
 * of the shared machine during the run weighs on every configuration alike. The cost is the
 * server's CPU per request over the same figure with both off (from /proc; throughput, which the
 * load generator on the same cores also shapes, where /proc is missing).
 * Goals: metrics ≤ 5 % with tracing off; ≤ 15 % with tracing on, sampled at 100 %.
 *
 * Run: node scripts/bench/telemetry.ts   (TELEMETRY_BENCH_SECONDS=5 by default)
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
import { fmt, reportGoal } from './goals.ts';

const CONNECTIONS = 50;
const SECONDS = Math.min(60, Math.max(1, Number(process.env.TELEMETRY_BENCH_SECONDS ?? 5)));
const WARMUP_SECONDS = 2;
const REQUEST_BODY = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });

type Configuration = 'off' | 'metrics' | 'tracing';
const ORDER: Configuration[] = ['off', 'metrics', 'tracing', 'tracing', 'metrics', 'off'];

interface Round {
  requests: number;
  requestsPerSec: number;
  /** Server CPU (user + system) per request, µs; null without /proc. */
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
  if (configuration === 'off') return base;
  if (configuration === 'metrics') return { ...base, METRICS_PORT: '0' };
  return { ...base, METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: 'always_on' };
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

async function round(dataDir: string, apiKey: string, configuration: Configuration, sinkUrl: string): Promise<Round> {
  const service = await startService({ dataDir, env: environment(configuration, sinkUrl) });
  try {
    const url = `${service.baseUrl}/v1/quotes`;
    await load(url, apiKey, WARMUP_SECONDS);
    const before = await processCpuMicros(service.pid);
    const result = await load(url, apiKey, SECONDS);
    const after = await processCpuMicros(service.pid);
    const requests = Math.max(1, result.requests.total);
    return {
      requests,
      requestsPerSec: result.requests.average,
      cpuUs: before && after ? (after.userUs + after.systemUs - before.userUs - before.systemUs) / requests : null,
      failed: result.non2xx + result.errors + result.timeouts,
    };
  } finally {
    await service.stop();
  }
}

export async function run(): Promise<void> {
  console.log(`telemetry: POST /v1/quotes, ${CONNECTIONS} connections, ${SECONDS} s a round (after ${WARMUP_SECONDS} s warm-up), rounds ${ORDER.join(', ')}, ${os.cpus().length} CPUs`);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-telemetry-'));
  const sink = await startSink();
  try {
    const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending');
    const rounds = new Map<Configuration, Round[]>();
    for (const configuration of ORDER) {
      const r = await round(dataDir, apiKey, configuration, sink.url);
      rounds.set(configuration, [...(rounds.get(configuration) ?? []), r]);
      const cpu = r.cpuUs === null ? '' : `  server CPU ${r.cpuUs.toFixed(1)} µs/request`;
      console.log(`  ${configuration.padEnd(8)} ${fmt(r.requestsPerSec).padStart(7)} req/s${cpu}${r.failed ? `  (${r.failed} failed)` : ''}`);
    }
    console.log(`  spans exported to the sink: ${fmt(sink.bytes() / 1024)} KiB`);

    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const figure = (configuration: Configuration) => {
      const rs = rounds.get(configuration)!;
      const cpu = rs.every((r) => r.cpuUs !== null) ? mean(rs.map((r) => r.cpuUs!)) : null;
      return { cpu, rps: mean(rs.map((r) => r.requestsPerSec)), failed: rs.reduce((n, r) => n + r.failed, 0) };
    };
    const off = figure('off');
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
      reportGoal(name, `${basis} = ${cost >= 0 ? '+' : ''}${(cost * 100).toFixed(1)} %${failed}`, `≤ ${goal * 100} %`, cost <= goal && failed === '');
    }
  } finally {
    await sink.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
