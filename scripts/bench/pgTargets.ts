/**
 * The services the PostgreSQL and soak benchmarks drive: the real service (`node src/main.ts`
 * child processes) on sql.js or on a throwaway PostgreSQL database, one or more instances, and
 * the load helpers they share. Everything listens on 127.0.0.1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createTempDatabase, type TempDatabase } from '../lib/pgDatabase.ts';
import { processCpuMicros } from '../lib/processCpu.ts';
import { createAccountWithCli, startService, type ServiceProcess } from '../lib/spawnService.ts';
import { DatabaseCpu } from './databaseCpu.ts';

export const BANK_SECRET = 'bench-bank-secret-0123456789abcdef0123456789';
export const SECRETS_KEY = 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';
export const QUOTE_BODY = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });

export interface Target {
  label: string;
  engine: 'sqljs' | 'postgres';
  services: ServiceProcess[];
  apiKey: string;
  database: TempDatabase | null;
  cleanup(): Promise<void>;
}

export interface TargetOptions {
  /** Extra environment for every instance. */
  env?: Record<string, string>;
  /** A data directory already seeded (sql.js), with the account's key: no account is created. */
  seeded?: { dataDir: string; apiKey: string };
}

/** Starts `instances` services on one database (PostgreSQL) or one data directory (sql.js, one instance). */
export async function startTarget(engine: 'sqljs' | 'postgres', instances: number, options: TargetOptions = {}): Promise<Target> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-pg-'));
  const database = engine === 'postgres' ? await createTempDatabase('mos_bench') : null;
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    BANK_SECRET,
    // Every instance on one database needs the same sealing key, as docs/operators/postgresql.md ("Running several instances") says.
    SECRETS_KEY,
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  };
  const services: ServiceProcess[] = [];
  const cleanup = async () => {
    await Promise.all(services.map((s) => s.stop('SIGTERM', 120_000).catch(() => s.child.kill('SIGKILL'))));
    await database?.drop().catch(() => {});
    await rm(root, { recursive: true, force: true });
  };
  try {
    let apiKey = options.seeded?.apiKey;
    const first = options.seeded?.dataDir ?? path.join(root, 'data-0');
    if (apiKey === undefined) {
      // The command opens the database as an instance does: the same SECRETS_KEY, or it is refused.
      ({ apiKey } = await createAccountWithCli(first, 'Bench Lending', 'bench@harborlending.test', database ? { DATABASE_URL: database.url, SECRETS_KEY } : {}));
    }
    for (let i = 0; i < instances; i++) {
      services.push(await startService({ dataDir: i === 0 ? first : path.join(root, `data-${i}`), env, timeoutMs: 120_000 }));
    }
    const label = engine === 'sqljs' ? 'sql.js' : `postgres ×${instances}`;
    return { label, engine, services, apiKey, database, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * Starts counting the CPU time (µs) of the target's service processes and of PostgreSQL for its
 * database (./databaseCpu.ts: its backends, and the parallel workers an export starts); the
 * function returned reads it. A backend that connects meanwhile is not counted: the pools are warm
 * by then.
 */
export async function cpuMeter(target: Target): Promise<() => Promise<{ serviceUs: number; databaseUs: number }>> {
  const servicePids = target.services.map((s) => s.pid);
  const database = target.database ? await DatabaseCpu.open(target.database.url) : null;
  const serviceBefore = await cpuMicros(servicePids);
  return async () => {
    const serviceUs = spent(serviceBefore, await cpuMicros(servicePids));
    try {
      return { serviceUs, databaseUs: (await database?.sample()) ?? 0 };
    } finally {
      await database?.close();
    }
  };
}

export interface LoadFigures {
  requestsPerSec: number;
  p99Ms: number;
  /** Responses not 2xx, socket errors and timeouts. */
  bad: number;
  /** CPU time per request (user + system, µs) of the service processes and of the PostgreSQL backends serving them: steadier than req/s on a shared machine. */
  serviceCpuUs: number;
  databaseCpuUs: number;
}

async function cpuMicros(pids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const cpu = await processCpuMicros(pid);
    if (cpu) out.set(pid, cpu.userUs + cpu.systemUs);
  }
  return out;
}

/** CPU used between two readings, by the processes present in both. */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, us] of after) total += us - (before.get(pid) ?? us);
  return total;
}

/** autocannon over every instance of `target` at once: `connections` in total, each instance its share. */
export async function loadOver(target: Target, pathname: string, method: 'GET' | 'POST', seconds: number, connections: number): Promise<LoadFigures> {
  const share = Math.max(1, Math.floor(connections / target.services.length));
  const options = {
    method,
    headers: { authorization: `Bearer ${target.apiKey}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    ...(method === 'POST' ? { body: QUOTE_BODY } : {}),
    duration: seconds,
    timeout: 10,
  };
  const cpu = await cpuMeter(target);
  const results = await Promise.all(target.services.map((s) => autocannon({ ...options, url: `${s.baseUrl}${pathname}`, connections: share })));
  const requests = Math.max(1, results.reduce((sum, r) => sum + r.requests.total, 0));
  const used = await cpu();
  return {
    requestsPerSec: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    bad: results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
    serviceCpuUs: used.serviceUs / requests,
    databaseCpuUs: used.databaseUs / requests,
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function postJson(service: ServiceProcess, apiKey: string, pathname: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${service.baseUrl}${pathname}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
