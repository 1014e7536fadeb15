/**
 * Fleet: many instances on one PostgreSQL primary, through PgBouncer in transaction mode, reading
 * from a streaming replica, against 2 instances connected directly (issue 45).
 *
 * On a private PostgreSQL 15 primary and replica (scripts/lib/pgReplica.ts, durable: fsync on, and
 * `max_connections` at its default of 100), each run on a fresh database:
 *
 * - baseline: 2 instances, DATABASE_URL straight to the primary, no replica;
 * - fleet: FLEET_INSTANCES (8) instances, DATABASE_URL through a private PgBouncer
 *   (`pool_mode = transaction`, `default_pool_size` FLEET_POOL_SIZE, 24) with
 *   DATABASE_POOLER=transaction and DATABASE_SESSION_URL direct, and DATABASE_REPLICA_URLS the replica.
 *
 * Both run the soak's mixed loop (./soak.ts) flat out, unmeasured for FLEET_WARMUP_SECONDS (20), then
 * measured for FLEET_SECONDS (60) from FLEET_WORKERS (32)
 * clients spread over the instances: three quotes, a draft application, a 4 KiB PDF upload, its
 * submission, reads of the application, the account and a quote, plus the list of applications
 * and the events feed (operations marked x-read-replica). Printed: operations a second, errors,
 * the most server connections the primary had for the database (pg_stat_activity, sampled each
 * second), and for the fleet the share of replica-read operations' reads the replica served
 * (the instances' mos_store_replica_reads_total) and its lag.
 *
 * Goals: the fleet serves more in total than the baseline with no error, on at most 40 server connections.
 *
 * Run: npm run bench -- fleet   (FLEET_SECONDS=60, FLEET_WARMUP_SECONDS=20, FLEET_INSTANCES=8, FLEET_WORKERS=32, FLEET_POOL_SIZE=24)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPgBouncer, type PgBouncer } from '../lib/pgBouncer.ts';
import { startPrivateReplication, type PrivateReplication } from '../lib/pgReplica.ts';
import { createAccountWithCli, freePort, startService, type ServiceProcess } from '../lib/spawnService.ts';
import { fmt, reportGoal } from './goals.ts';
import { BANK_SECRET, postJson, QUOTE_BODY, SECRETS_KEY } from './pgTargets.ts';

const SECONDS = Math.max(5, Number(process.env.FLEET_SECONDS ?? 60));
/** Unmeasured load first: each instance compiles its code and request validators on first use, which 8 cold instances on 2 cores pay for at length. */
const WARMUP_SECONDS = Math.max(0, Number(process.env.FLEET_WARMUP_SECONDS ?? 20));
const INSTANCES = Math.max(2, Number(process.env.FLEET_INSTANCES ?? 8));
const WORKERS = Math.max(2, Number(process.env.FLEET_WORKERS ?? 32));
const POOL_SIZE = Math.max(1, Number(process.env.FLEET_POOL_SIZE ?? 24));
/** FLEET_REPLICA=0: the fleet without the replica, to tell the pooler's cost from the replica's. */
const WITH_REPLICA = process.env.FLEET_REPLICA !== '0';
const MAX_SERVER_CONNECTIONS = 40;
const PDF = new Uint8Array(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4096 - 9, 0x20)]));
const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};

interface Fleet {
  services: ServiceProcess[];
  metricsPorts: number[];
  apiKey: string;
  stop(): Promise<void>;
}

interface Figures {
  ops: number;
  errors: number;
  errorSamples: string[];
  seconds: number;
  maxServerConnections: number;
}

async function startFleet(cluster: PrivateReplication, database: string, instances: number, bouncer: PgBouncer | null): Promise<Fleet> {
  await cluster.createDatabase(database);
  // As docs/operators/postgresql.md advises behind a pooler (sessions keep the database's time zone): the same for both runs.
  const admin = new pg.Client({ connectionString: cluster.primaryUrl('postgres') });
  await admin.connect();
  await admin.query(`ALTER DATABASE ${database} SET timezone = 'UTC'`).finally(() => admin.end());
  const direct = cluster.primaryUrl(database);
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    BANK_SECRET,
    SECRETS_KEY,
    ...(bouncer
      ? {
          DATABASE_URL: bouncer.through(direct),
          DATABASE_POOLER: 'transaction',
          DATABASE_SESSION_URL: direct,
          ...(WITH_REPLICA ? { DATABASE_REPLICA_URLS: cluster.replicaUrl(database) } : {}),
        }
      : { DATABASE_URL: direct }),
  };
  const root = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-fleet-'));
  const services: ServiceProcess[] = [];
  const metricsPorts: number[] = [];
  const stop = async () => {
    await Promise.all(services.map((s) => s.stop('SIGTERM', 60_000).catch(() => s.child.kill('SIGKILL'))));
    await rm(root, { recursive: true, force: true });
  };
  try {
    const { apiKey } = await createAccountWithCli(path.join(root, 'data-0'), 'Fleet Lending', 'ops@fleet.test', env);
    // Started one after another: a cold start of 8 at once on 2 cores only measures the machine.
    for (let i = 0; i < instances; i++) {
      const metricsPort = await freePort();
      metricsPorts.push(metricsPort);
      services.push(await startService({ dataDir: path.join(root, `data-${i}`), env: { ...env, METRICS_PORT: String(metricsPort) }, timeoutMs: 120_000 }));
    }
    return { services, metricsPorts, apiKey, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The primary's connections to `database` (every backend but this one), sampled until `until` resolves; the most seen. */
async function serverConnections(cluster: PrivateReplication, database: string, until: Promise<unknown>): Promise<number> {
  const client = new pg.Client({ connectionString: cluster.primaryUrl('postgres') });
  await client.connect();
  let most = 0;
  let done = false;
  void until.finally(() => (done = true));
  try {
    while (!done) {
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      most = Math.max(most, rows[0]!.n);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await client.end().catch(() => {});
  }
  return most;
}

async function mixedLoad(fleet: Fleet, cluster: PrivateReplication, database: string, seconds = SECONDS): Promise<Figures> {
  const figures: Figures = { ops: 0, errors: 0, errorSamples: [], seconds, maxServerConnections: 0 };
  const deadline = performance.now() + seconds * 1000;
  const key = fleet.apiKey;
  const call = async (what: string, expected: number, send: () => Promise<{ status: number; json: Record<string, unknown> }>): Promise<Record<string, unknown> | null> => {
    try {
      const { status, json } = await send();
      if (status !== expected) throw new Error(`${status} ${JSON.stringify(json).slice(0, 200)}`);
      figures.ops++;
      return json;
    } catch (err) {
      figures.errors++;
      if (figures.errorSamples.length < 5) figures.errorSamples.push(`${what}: ${(err as Error).message}`);
      return null;
    }
  };
  const get = (service: ServiceProcess, pathname: string) => async () => {
    const response = await fetch(`${service.baseUrl}${pathname}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const upload = (service: ServiceProcess, mortgageId: string) => async () => {
    const body = new FormData();
    body.append('documentType', 'income_proof');
    body.append('file', new Blob([PDF], { type: 'application/pdf' }), 'payslip.pdf');
    const response = await fetch(`${service.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const worker = async (w: number) => {
    const service = fleet.services[w % fleet.services.length]!;
    while (performance.now() < deadline) {
      let quoteId = '';
      for (let i = 0; i < 3; i++) {
        const quote = await call('quote', 201, () => postJson(service, key, '/v1/quotes', JSON.parse(QUOTE_BODY)));
        if (quote) quoteId = String(quote.quoteId);
      }
      const draft = await call('draft', 201, () => postJson(service, key, '/v1/applications', APPROVABLE));
      if (draft) {
        const id = String(draft.mortgageId);
        await call('upload', 201, upload(service, id));
        await call('submit', 200, () => postJson(service, key, `/v1/applications/${id}/submit`));
        await call('read application', 200, get(service, `/v1/applications/${id}`));
      }
      await call('read account', 200, get(service, '/v1/account'));
      if (quoteId) await call('read quote', 200, get(service, `/v1/quotes/${quoteId}`));
      await call('list applications', 200, get(service, '/v1/applications?limit=20'));
      await call('events feed', 200, get(service, '/v1/events?limit=20'));
    }
  };
  const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  [figures.maxServerConnections] = await Promise.all([serverConnections(cluster, database, load), load]);
  return figures;
}

/** The replica's share of the replica-read operations' reads over every instance, and its largest lag seen at the end. */
async function replicaShare(fleet: Fleet): Promise<{ replica: number; total: number; lagSeconds: number | null }> {
  let replica = 0;
  let total = 0;
  let lagSeconds: number | null = null;
  for (const port of fleet.metricsPorts) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const [, target, value] of text.matchAll(/^mos_store_replica_reads_total\{target="([^"]+)"\} (\S+)$/gm)) {
      total += Number(value);
      if (target!.startsWith('replica')) replica += Number(value);
    }
    const lag = /^mos_store_replica_lag_seconds\{replica="replica1"\} (\S+)$/m.exec(text);
    if (lag) lagSeconds = Math.max(lagSeconds ?? 0, Number(lag[1]));
  }
  return { replica, total, lagSeconds };
}

function print(label: string, f: Figures): number {
  const rate = f.ops / f.seconds;
  console.log(`  ${label}: ${fmt(rate)} operations/s, ${f.errors} errors, at most ${f.maxServerConnections} server connections on the primary`);
  for (const sample of f.errorSamples) console.log(`    error: ${sample}`);
  return rate;
}

export async function run(): Promise<void> {
  const cluster = await startPrivateReplication({ durable: true });
  let bouncer: PgBouncer | null = null;
  try {
    const maxConnections = await (async () => {
      const client = new pg.Client({ connectionString: cluster.primaryUrl('postgres') });
      await client.connect();
      try {
        return (await client.query<{ max_connections: string }>('SHOW max_connections')).rows[0]!.max_connections;
      } finally {
        await client.end();
      }
    })();
    console.log(`  private primary + replica (PostgreSQL 15, max_connections ${maxConnections}); ${WORKERS} clients, ${SECONDS} s each after ${WARMUP_SECONDS} s of warm-up`);

    const baseline = await startFleet(cluster, 'mos_fleet_base', 2, null);
    let base: Figures;
    try {
      if (WARMUP_SECONDS > 0) await mixedLoad(baseline, cluster, 'mos_fleet_base', WARMUP_SECONDS);
      base = await mixedLoad(baseline, cluster, 'mos_fleet_base');
    } finally {
      await baseline.stop();
    }
    const baseRate = print('2 instances, direct', base);

    bouncer = await startPgBouncer({ port: Number(new URL(cluster.primaryUrl('postgres')).port), poolSize: POOL_SIZE });
    const fleet = await startFleet(cluster, 'mos_fleet', INSTANCES, bouncer);
    let many: Figures;
    let share: Awaited<ReturnType<typeof replicaShare>>;
    try {
      if (WARMUP_SECONDS > 0) await mixedLoad(fleet, cluster, 'mos_fleet', WARMUP_SECONDS);
      many = await mixedLoad(fleet, cluster, 'mos_fleet');
      share = await replicaShare(fleet);
    } finally {
      await fleet.stop();
    }
    const fleetRate = print(`${INSTANCES} instances, PgBouncer (transaction, default_pool_size ${POOL_SIZE})${WITH_REPLICA ? ' + 1 replica' : ''}`, many);
    const sharePct = share.total === 0 ? 0 : share.replica / share.total;
    console.log(
      `  replica: ${fmt(share.replica)} of ${fmt(share.total)} reads of x-read-replica operations (${fmt(sharePct * 100, 1)} %), lag ${share.lagSeconds === null ? 'unknown' : `${fmt(share.lagSeconds, 3)} s`} at the end`,
    );

    reportGoal(
      'fleet: 8 instances through PgBouncer vs 2 direct, mixed load',
      `${fmt(fleetRate)} vs ${fmt(baseRate)} operations/s = ${fmt(fleetRate / baseRate, 2)}×, ${many.errors + base.errors} errors`,
      '> 1.00×, no error',
      fleetRate > baseRate && many.errors === 0 && base.errors === 0,
    );
    reportGoal('fleet: server connections on the primary', `${many.maxServerConnections} (2 direct instances: ${base.maxServerConnections})`, `≤ ${MAX_SERVER_CONNECTIONS}`, many.maxServerConnections <= MAX_SERVER_CONNECTIONS);
    reportGoal('fleet: reads of x-read-replica operations served by the replica', `${fmt(sharePct * 100, 1)} %, lag ${share.lagSeconds === null ? 'unknown' : `${fmt(share.lagSeconds, 3)} s`}`, '> 0 % (reported)', share.replica > 0);
  } finally {
    await bouncer?.stop();
    await cluster.stop();
  }
}
