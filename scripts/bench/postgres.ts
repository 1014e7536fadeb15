/**
 * The PostgreSQL engine against the embedded one (issue 30's table), every figure beside its
 * baseline measured in the same run, on the real service (`node src/main.ts` child processes), all
 * on 127.0.0.1:
 *
 * - POST /v1/quotes and GET /v1/account, 50 connections, rate limit off: sql.js, PostgreSQL with one
 *   instance and with two on one database, all started up front and measured in turns (ROUNDS
 *   rounds, the order reversed each round), so that a noisy neighbour hurts every target alike;
 * - round trips: the statements and the waits for PostgreSQL's answer one quote costs, counted by
 *   the store itself (PgStore.stats()) on a store opened in this process on the same database;
 * - CSV export of EXPORT_RECORDS applications on each engine (the first export after start, and a
 *   repeated one);
 * - submit (not a goal): drafts made first, then each submitted once, 50 at a time.
 *
 * Each ratio is the median over the rounds of the two targets' figures in the same round.
 *
 * Run: npm run bench -- postgres   (about 3 minutes on a quiet machine: 3 rounds of 4 s; POSTGRES_BENCH_QUICK=1
 * for a one-minute pass: one round of 3 s, 200,000 records, no submit; POSTGRES_BENCH_SECONDS,
 * POSTGRES_BENCH_ROUNDS, POSTGRES_BENCH_EXPORT_RECORDS, POSTGRES_BENCH_SUBMITS change each)
 */
import { rm } from 'node:fs/promises';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/createContext.ts';
import { createLogger } from '../../src/log.ts';
import { createQuote } from '../../src/services/pricing.ts';
import { openPgStore } from '../../src/store/postgres/pgStore.ts';
import { decodeSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { postgresAvailable, type TempDatabase } from '../lib/pgDatabase.ts';
import type { ServiceProcess } from '../lib/spawnService.ts';
import { FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { exportOnce, seed } from './export.ts';
import { fmt, reportGoal } from './goals.ts';
import { cpuMeter, loadOver, percentile, postJson, SECRETS_KEY, startTarget, type LoadFigures, type Target } from './pgTargets.ts';

const QUICK = process.env.POSTGRES_BENCH_QUICK === '1';
const num = (name: string, fallback: number, min: number, max: number) => Math.min(max, Math.max(min, Number(process.env[name] ?? fallback)));
const SECONDS = num('POSTGRES_BENCH_SECONDS', QUICK ? 3 : 4, 1, 30);
const ROUNDS = num('POSTGRES_BENCH_ROUNDS', QUICK ? 1 : 3, 1, 9);
const EXPORT_RECORDS = num('POSTGRES_BENCH_EXPORT_RECORDS', QUICK ? 200_000 : 1_000_000, 1000, 2_000_000);
const SUBMITS = num('POSTGRES_BENCH_SUBMITS', QUICK ? 0 : 500, 0, 20_000);
const CONNECTIONS = 50;
const MiB = 1024 * 1024;

/** Each target's figures over the rounds: mean req/s, worst p99. */
class Tally {
  readonly runs: LoadFigures[] = [];
  add(figures: LoadFigures): void {
    this.runs.push(figures);
  }
  get requestsPerSec(): number {
    return this.runs.reduce((sum, r) => sum + r.requestsPerSec, 0) / Math.max(1, this.runs.length);
  }
  get p99Ms(): number {
    return Math.max(0, ...this.runs.map((r) => r.p99Ms));
  }
  get bad(): number {
    return this.runs.reduce((sum, r) => sum + r.bad, 0);
  }
  private mean(pick: (r: LoadFigures) => number): number {
    return this.runs.reduce((sum, r) => sum + pick(r), 0) / Math.max(1, this.runs.length);
  }
  line(): string {
    const each = this.runs.map((r) => fmt(r.requestsPerSec)).join(', ');
    const db = this.mean((r) => r.databaseCpuUs);
    return (
      `${fmt(this.requestsPerSec).padStart(7)} req/s  p99 ${String(this.p99Ms).padStart(4)} ms  ` +
      `CPU/request: service ${fmt(this.mean((r) => r.serviceCpuUs)).padStart(4)} µs${db > 0 ? `, PostgreSQL ${fmt(db).padStart(4)} µs` : ''}  ` +
      `(rounds: ${each})${this.bad ? `  ${this.bad} not 2xx!` : ''}`
    );
  }
}

interface PerQuote {
  statements: number;
  roundTrips: number;
}

/**
 * Statements and round trips of one quote, counted by a store opened here on the target's database:
 * one at a time, and CONNECTIONS at a time (concurrent quotes share INSERTs: group commit).
 */
async function roundTripsPerQuote(database: TempDatabase, apiKey: string, service: ServiceProcess): Promise<{ alone: PerQuote; concurrent: PerQuote }> {
  const account = (await (await fetch(`${service.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { accountId: string };
  const store = await openPgStore({ url: database.url, poolMax: 2, sealer: new SecretKeyring(decodeSecretsKey(SECRETS_KEY, 'SECRETS_KEY')), applicationName: 'mos-bench-count' });
  try {
    const ctx = createContext({ config: loadConfig({ LOG_LEVEL: 'silent' }), store, clock: systemClock, log: createLogger('silent') });
    const request = { amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 };
    for (let i = 0; i < 20; i++) await createQuote(ctx, account.accountId, request); // warm: prepared statements, remembered rows
    const n = 200;
    const counted = async (run: () => Promise<void>): Promise<PerQuote> => {
      const before = store.stats();
      await run();
      const after = store.stats();
      return { statements: (after.statements - before.statements) / n, roundTrips: (after.roundTrips - before.roundTrips) / n };
    };
    const alone = await counted(async () => {
      for (let i = 0; i < n; i++) await createQuote(ctx, account.accountId, request);
    });
    let next = 0;
    const concurrent = await counted(async () => {
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next++ < n) await createQuote(ctx, account.accountId, request);
        }),
      );
    });
    return { alone, concurrent };
  } finally {
    await store.close();
  }
}

async function submits(target: Target): Promise<string> {
  const { services, apiKey } = target;
  const ids: string[] = [];
  const pool = async (count: number, task: (i: number) => Promise<void>) => {
    let next = 0;
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < count) {
          const i = next++;
          const t = performance.now();
          await task(i);
          latencies.push(performance.now() - t);
        }
      }),
    );
    return { ms: performance.now() - started, latencies: latencies.sort((a, b) => a - b) };
  };
  await pool(SUBMITS, async (i) => {
    const body = { applicant: { name: `Applicant ${i}`, amount: 250_000 + (i % 100) * 1000, annualIncome: 120_000, monthlyDebts: 500, creditScore: 700 + (i % 100) }, term: 30, propertyValue: 480_000 };
    const { status, json } = await postJson(services[i % services.length]!, apiKey, '/v1/applications', body);
    if (status !== 201) throw new Error(`creating a draft answered ${status}`);
    ids[i] = String(json.mortgageId);
  });
  let bad = 0;
  const run = await pool(ids.length, async (i) => {
    if ((await postJson(services[i % services.length]!, apiKey, `/v1/applications/${ids[i]}/submit`)).status !== 200) bad++;
  });
  return `${fmt((ids.length / run.ms) * 1000).padStart(7)} submits/s  p99 ${fmt(percentile(run.latencies, 99)).padStart(4)} ms${bad ? `  (${bad} not 200)` : ''}`;
}

/** Bench-only SQL: EXPORT_RECORDS applications with ids that sort like real ones, every tenth bank-verified, as the export benchmark seeds sql.js. */
async function seedPostgres(database: TempDatabase, accountId: string): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const at = '2026-11-01T09:00:00.000Z';
    await client.query(
      `INSERT INTO applications (id, account_id, status, applicant_name, applicant_email, amount_cents, annual_income_cents,
         monthly_debts_cents, credit_score, term_years, property_value_cents, quote_id, decision_json, submitted_at, decided_at,
         withdrawn_at, created_at, updated_at)
       SELECT 'mtg-' || lpad(n::text, 26, '0'), $1,
         CASE n % 10 WHEN 6 THEN 'declined' WHEN 7 THEN 'referred' WHEN 8 THEN 'draft' WHEN 9 THEN 'withdrawn' ELSE 'approved' END,
         CASE WHEN n % 100 = 0 THEN 'Doe, "Jay" ' || n ELSE 'Applicant Number ' || n END, 'applicant' || n || '@example.test',
         10000000 + (n * 7919) % 90000000, 6000000 + (n * 104729) % 20000000, (n * 31) % 500000, 580 + n % 270, 10 + n % 31,
         20000000 + (n * 7907) % 100000000, NULL, NULL,
         CASE WHEN n % 10 = 8 THEN NULL ELSE $2::timestamptz END, CASE WHEN n % 10 < 8 THEN $2::timestamptz END,
         CASE WHEN n % 10 = 9 THEN $2::timestamptz END, $2, $2
       FROM generate_series(1::bigint, $3::bigint) AS n`,
      [accountId, at, EXPORT_RECORDS],
    );
    const partnerId = 'bnk-00000000000000000000000001';
    await client.query(
      `INSERT INTO bank_partners (id, name, connector, base_url, credential_encrypted, restricted, disabled_at, created_at, updated_at)
       VALUES ($1, 'Bench Sandbox Bank', 'sandbox', NULL, NULL, 0, NULL, $2, $2)`,
      [partnerId, at],
    );
    await client.query(
      `INSERT INTO bank_verifications (id, account_id, mortgage_id, partner_id, verified, account_mask, account_number_hash,
         linked_account_hash, name_score, name_outcome, failed_checks, checked_at)
       SELECT 'bvf-' || lpad(n::text, 26, '0'), $1, 'mtg-' || lpad((n * 10)::text, 26, '0'), $2, CASE WHEN n % 3 = 0 THEN 0 ELSE 1 END,
         lpad((n % 10000)::text, 4, '0'), 'bench', 'bench', '0.950', 'match', '[]', $3
       FROM generate_series(1::bigint, $4::bigint) AS n`,
      [accountId, partnerId, at, Math.floor(EXPORT_RECORDS / 10)],
    );
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/** Two CSV exports (the first after start, and again) on a target already seeded. */
async function exportTwice(target: Target): Promise<{ first: number; again: number; line: string }> {
  const service = target.services[0]!;
  const first = await exportOnce(service, target.apiKey, 'csv');
  // The connection the first export used is in the pool now: the repeated one's backend is counted.
  const cpu = await cpuMeter(target);
  const again = await exportOnce(service, target.apiKey, 'csv');
  const used = await cpu();
  for (const f of [first, again]) if (f.records !== EXPORT_RECORDS) throw new Error(`${target.label} export sent ${f.records} records, expected ${EXPORT_RECORDS}`);
  const perRecord = (us: number) => fmt(us / EXPORT_RECORDS, 2);
  const line =
    `first ${fmt(first.recordsPerSec).padStart(7)} records/s (first byte ${fmt(first.firstByteMs)} ms, RSS +${fmt(first.rssGrowthBytes / MiB, 1)} MiB), ` +
    `again ${fmt(again.recordsPerSec).padStart(7)} records/s (CPU/record: service ${perRecord(used.serviceUs)} µs` +
    `${target.database ? `, PostgreSQL ${perRecord(used.databaseUs)} µs` : ''}; wall ${perRecord(again.seconds * 1e6)} µs)`;
  return { first: first.recordsPerSec, again: again.recordsPerSec, line };
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);

/**
 * The median over the rounds of a's req/s over b's in the same round: the two ran seconds apart, so
 * a round in which the machine's other work came and went sways one ratio, not the figure.
 */
function roundRatio(a: Tally, b: Tally): number {
  const each = a.runs.map((run, i) => ratio(run.requestsPerSec, b.runs[i]?.requestsPerSec ?? 0)).sort((x, y) => x - y);
  const mid = Math.floor(each.length / 2);
  return each.length % 2 === 1 ? each[mid]! : (each[mid - 1]! + each[mid]!) / 2;
}

async function throughput(): Promise<void> {
  const targets: Target[] = [];
  try {
    targets.push(await startTarget('sqljs', 1), await startTarget('postgres', 1), await startTarget('postgres', 2));
    const [sqljs, pg1, pg2] = targets as [Target, Target, Target];
    const quotes = new Map<Target, Tally>(targets.map((t) => [t, new Tally()]));
    const account = new Map<Target, Tally>([sqljs, pg1].map((t) => [t, new Tally()]));
    for (const t of targets) await loadOver(t, '/v1/quotes', 'POST', 1, CONNECTIONS); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) quotes.get(t)!.add(await loadOver(t, '/v1/quotes', 'POST', SECONDS, CONNECTIONS));
      for (const t of order) if (account.has(t)) account.get(t)!.add(await loadOver(t, '/v1/account', 'GET', SECONDS, CONNECTIONS));
    }
    for (const t of targets) console.log(`  POST /v1/quotes  ${t.label.padEnd(11)} ${quotes.get(t)!.line()}`);
    for (const [t, tally] of account) console.log(`  GET /v1/account  ${t.label.padEnd(11)} ${tally.line()}`);
    const trips = await roundTripsPerQuote(pg1.database!, pg1.apiKey, pg1.services[0]!);
    console.log(`  one quote on PostgreSQL: ${fmt(trips.alone.statements, 2)} statements, ${fmt(trips.alone.roundTrips, 2)} waits for the database (round trips)`);
    console.log(`  ${CONNECTIONS} quotes at a time, per quote: ${fmt(trips.concurrent.statements, 2)} statements, ${fmt(trips.concurrent.roundTrips, 2)} waits (group commit)`);
    if (SUBMITS > 0) for (const t of [sqljs, pg1]) console.log(`  submit           ${t.label.padEnd(11)} ${await submits(t)}`);

    const q = roundRatio(quotes.get(pg1)!, quotes.get(sqljs)!);
    const median = ROUNDS > 1 ? ', median of the rounds' : '';
    reportGoal(
      'PostgreSQL: POST /v1/quotes vs sql.js, same run',
      `${fmt(quotes.get(pg1)!.requestsPerSec)} vs ${fmt(quotes.get(sqljs)!.requestsPerSec)} req/s: ${fmt(q, 2)}×${median} (p99 ${quotes.get(pg1)!.p99Ms} vs ${quotes.get(sqljs)!.p99Ms} ms)`,
      '≥ 0.60×',
      q >= 0.6 && quotes.get(pg1)!.bad === 0,
    );
    const a = roundRatio(account.get(pg1)!, account.get(sqljs)!);
    reportGoal(
      'PostgreSQL: GET /v1/account vs sql.js, same run',
      `${fmt(account.get(pg1)!.requestsPerSec)} vs ${fmt(account.get(sqljs)!.requestsPerSec)} req/s: ${fmt(a, 2)}×${median}`,
      '≥ 0.80×',
      a >= 0.8 && account.get(pg1)!.bad === 0,
    );
    const two = roundRatio(quotes.get(pg2)!, quotes.get(pg1)!);
    reportGoal(
      'PostgreSQL: two instances vs one, POST /v1/quotes',
      `${fmt(quotes.get(pg2)!.requestsPerSec)} vs ${fmt(quotes.get(pg1)!.requestsPerSec)} req/s: ${fmt(two, 2)}×${median} (both on this machine's 2 cores)`,
      '≥ 0.90×',
      two >= 0.9 && quotes.get(pg2)!.bad === 0,
    );
  } finally {
    await Promise.all(targets.map((t) => t.cleanup()));
  }
}

async function exports(): Promise<void> {
  const seeded = await seed(EXPORT_RECORDS);
  let sqljsLine: { first: number; again: number; line: string };
  const sqljs = await startTarget('sqljs', 1, { seeded });
  try {
    sqljsLine = await exportTwice(sqljs);
  } finally {
    await sqljs.cleanup();
    await rm(seeded.dataDir, { recursive: true, force: true });
  }
  const target = await startTarget('postgres', 1);
  try {
    const service = target.services[0]!;
    const me = (await (await fetch(`${service.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${target.apiKey}` } })).json()) as { accountId: string };
    await seedPostgres(target.database!, me.accountId);
    const pgLine = await exportTwice(target);
    console.log(`  CSV export ${fmt(EXPORT_RECORDS)}  sql.js       ${sqljsLine.line}`);
    console.log(`  CSV export ${fmt(EXPORT_RECORDS)}  postgres ×1  ${pgLine.line}`);
    const best = Math.max(pgLine.first, pgLine.again);
    reportGoal(
      'PostgreSQL: CSV export, 1,000,000 records',
      `${fmt(best)} records/s over ${fmt(EXPORT_RECORDS)} (sql.js ${fmt(Math.max(sqljsLine.first, sqljsLine.again))}, ${fmt(ratio(best, Math.max(sqljsLine.first, sqljsLine.again)), 2)}×; the better of two)`,
      '≥ 250,000 records/s',
      best >= 250_000,
    );
    // A caller pinned to the oldest version: its status names go into the COPY (a change that
    // rewrote more of a record would send the rows through the cursor). The same goal holds.
    const oldest = await exportOnce(service, target.apiKey, 'csv', FIRST_VERSION);
    if (oldest.records !== EXPORT_RECORDS) throw new Error(`the oldest version's export sent ${oldest.records} records, expected ${EXPORT_RECORDS}`);
    console.log(`  CSV export ${fmt(EXPORT_RECORDS)}  postgres ×1, version ${FIRST_VERSION}: ${fmt(oldest.recordsPerSec)} records/s (RSS +${fmt(oldest.rssGrowthBytes / MiB, 1)} MiB)`);
    reportGoal(
      'PostgreSQL: CSV export in the oldest API version',
      `${fmt(oldest.recordsPerSec)} records/s (${FIRST_VERSION}), ${fmt(ratio(oldest.recordsPerSec, pgLine.again), 2)}× the current version's repeated export`,
      '≥ 250,000 records/s',
      oldest.recordsPerSec >= 250_000,
    );
  } finally {
    await target.cleanup();
  }
}

export async function run(): Promise<void> {
  if (!(await postgresAvailable())) {
    console.log('postgres: skipped, PostgreSQL does not answer on 127.0.0.1:5432 (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start)');
    return;
  }
  console.log(
    `postgres: sql.js vs PostgreSQL (one instance, two on one database), ${os.cpus().length} CPUs, everything on this machine; ` +
      `${ROUNDS} round${ROUNDS > 1 ? 's' : ''} of ${SECONDS} s per target${QUICK ? ' (quick)' : ''}`,
  );
  await throughput();
  await exports();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
