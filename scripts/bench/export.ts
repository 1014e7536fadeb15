/**
 * Export throughput of GET /v1/mortgages/export over 1,000,000 applications, against the real
 * service (`node src/main.ts` in its own process), for each format: records per second, time to
 * the first byte and to the first record, and the server's peak RSS growth while it streams
 * (sampled from /proc/<pid>/status). Goals (issues 6 and 17): CSV ≥ 250,000 records/s, the first
 * export and a repeated one, and RSS growth under 64 MiB during the first.
 *
 * The applications are seeded straight into a data directory through the store (a few big
 * INSERT … SELECT over a recursive CTE, account and times bound as parameters), with a bank
 * verification for every tenth, before the service starts on it. The baseline, measured in the
 * same run on the same data, is the store alone: the export's batched keyset reads, in process,
 * without formatting or HTTP. While the CSV export runs, a writer creates export formats, to show
 * that writes interleave with the export's batches instead of waiting for it. CSV runs twice: the
 * first export after the server starts also pays for code running for the first time (JavaScript
 * and sql.js's WebAssembly compiled up to their optimising tiers, on the same two cores) and for
 * the pages of V8's young generation being touched for the first time (it grew to its size while
 * the service started and answered its first requests); the second shows the steady state.
 *
 * Run: node scripts/bench/export.ts   (EXPORT_BENCH_RECORDS=1000000 by default; EXPORT_BENCH_FORMATS=csv,json
 * for only some of csv, json, ndjson, bench-csv (a custom CSV layout), bench-mismo)
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/createContext.ts';
import { createLogger } from '../../src/log.ts';
import { createAccount } from '../../src/services/accounts.ts';
import { openSqlJsStore, type SqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { exportBounds, readExportBatch } from '../../src/store/exportRecords.ts';
import { startService, type ServiceProcess } from '../lib/spawnService.ts';
import { reportGoal } from './goals.ts';

const RECORDS = Math.min(2_000_000, Math.max(1000, Number(process.env.EXPORT_BENCH_RECORDS ?? 1_000_000)));
/** `csv` twice: the first export after the server starts pays for first-run compilation and first-touched memory; the second shows the steady state. */
const ALL_FORMATS = ['csv', 'csv', 'json', 'ndjson', 'bench-csv', 'bench-mismo'];
/** EXPORT_BENCH_FORMATS=csv,json runs only those (all five by default). */
const FORMATS = (process.env.EXPORT_BENCH_FORMATS ?? ALL_FORMATS.join(',')).split(',').filter((f) => ALL_FORMATS.includes(f));
const SEED_CHUNK = 250_000;
/** No export may run longer than this, whatever happens. */
const EXPORT_LIMIT_MS = 300_000;
const CREATED_AT = '2026-11-01T09:00:00.000Z';
const DECIDED_AT = '2026-11-02T10:30:00.000Z';
const MiB = 1024 * 1024;

// Bench-only SQL (the service's own SQL lives in src/store/): synthetic rows with ids that sort
// like real ones, a realistic mix of statuses, and some names that need CSV quoting.
const SEED_APPLICATIONS = `
INSERT INTO applications (id, account_id, status, applicant_name, applicant_email, amount_cents, annual_income_cents,
  monthly_debts_cents, credit_score, term_years, property_value_cents, quote_id, decision_json, submitted_at, decided_at,
  withdrawn_at, created_at, updated_at)
WITH RECURSIVE seq(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
SELECT 'mtg-' || substr('00000000000000000000000000' || n, -26, 26), ?,
  CASE n % 10 WHEN 6 THEN 'declined' WHEN 7 THEN 'referred' WHEN 8 THEN 'draft' WHEN 9 THEN 'withdrawn' ELSE 'approved' END,
  CASE WHEN n % 100 = 0 THEN 'Doe, "Jay" ' || n ELSE 'Applicant Number ' || n END,
  'applicant' || n || '@example.test',
  10000000 + (n * 7919) % 90000000, 6000000 + (n * 104729) % 20000000, (n * 31) % 500000, 580 + n % 270,
  10 + n % 31, 20000000 + (n * 7907) % 100000000, NULL, NULL,
  CASE WHEN n % 10 = 8 THEN NULL ELSE ? END,
  CASE WHEN n % 10 IN (6, 7) OR n % 10 < 6 THEN ? ELSE NULL END,
  CASE WHEN n % 10 = 9 THEN ? ELSE NULL END,
  ?, ?
FROM seq`;

const SEED_PARTNER = `INSERT INTO bank_partners (id, name, connector, base_url, credential_encrypted, restricted, disabled_at, created_at, updated_at)
VALUES (?, 'Bench Sandbox Bank', 'sandbox', NULL, NULL, 0, NULL, ?, ?)`;

const SEED_VERIFICATIONS = `
INSERT INTO bank_verifications (id, account_id, mortgage_id, partner_id, verified, account_mask, account_number_hash,
  linked_account_hash, name_score, name_outcome, failed_checks, checked_at)
WITH RECURSIVE seq(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
SELECT 'bvf-' || substr('00000000000000000000000000' || n, -26, 26), ?, 'mtg-' || substr('00000000000000000000000000' || (n * 10), -26, 26),
  ?, CASE WHEN n % 3 = 0 THEN 0 ELSE 1 END, substr('000' || (n % 10000), -4, 4), 'bench', 'bench', '0.950', 'match', '[]', ?
FROM seq`;

interface Seeded {
  dataDir: string;
  accountId: string;
  apiKey: string;
  seedMs: number;
  baseline: { recordsPerSec: number; batches: number; maxBatchMs: number };
}

/** The context the seeding use cases need: the bench's store, the system clock, quiet logs. */
function benchContext(store: SqlJsStore) {
  return createContext({ config: loadConfig({ LOG_LEVEL: 'silent' }), store, clock: systemClock, log: createLogger('silent') });
}

/** Seeds a data directory with `records` applications (the postgres benchmark seeds one for its sql.js figure too). */
export async function seed(records = RECORDS): Promise<Seeded> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-export-'));
  const store: SqlJsStore = await openSqlJsStore({ dataDir });
  try {
    const started = performance.now();
    const { account, firstKey } = await createAccount(benchContext(store), { name: 'Bench Lending', email: 'ops@bench-lending.test' });
    const partnerId = 'bnk-00000000000000000000000001';
    await store.transaction((tx) => tx.run(SEED_PARTNER, [partnerId, CREATED_AT, CREATED_AT]));
    for (let from = 1; from <= records; from += SEED_CHUNK) {
      const to = Math.min(records, from + SEED_CHUNK - 1);
      await store.transaction((tx) =>
        tx.run(SEED_APPLICATIONS, [from, to, account.accountId, DECIDED_AT, DECIDED_AT, DECIDED_AT, CREATED_AT, DECIDED_AT]),
      );
    }
    await store.transaction((tx) => tx.run(SEED_VERIFICATIONS, [1, Math.floor(records / 10), account.accountId, partnerId, DECIDED_AT]));
    const seedMs = performance.now() - started;

    // Baseline: the export's own reads, batch by batch, in process (no formatting, no HTTP).
    const bounds = await store.read((db) => exportBounds(db, account.accountId));
    const query = { accountId: account.accountId, currency: bounds.currency, upToId: bounds.upToId };
    let after: string | null = null;
    let scanned = 0;
    let batches = 0;
    let maxBatchMs = 0;
    const scanStarted = performance.now();
    for (;;) {
      const batchStarted = performance.now();
      const rows = await store.read((db) => readExportBatch(db, query, after, 1000));
      maxBatchMs = Math.max(maxBatchMs, performance.now() - batchStarted);
      batches++;
      if (rows.length === 0) break;
      scanned += rows.length;
      after = rows[rows.length - 1]!.mortgageId;
      if (performance.now() - scanStarted > EXPORT_LIMIT_MS) break;
    }
    const scanMs = performance.now() - scanStarted;
    if (scanned !== records) throw new Error(`the baseline scan read ${scanned} records, expected ${records}`);
    return {
      dataDir,
      accountId: account.accountId,
      apiKey: firstKey.apiKey,
      seedMs,
      baseline: { recordsPerSec: (scanned / scanMs) * 1000, batches, maxBatchMs },
    };
  } finally {
    await store.close(); // writes the snapshot the service starts from
  }
}

export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return kb ? Number(kb[1]) * 1024 : 0;
}

interface ExportFigures {
  records: number;
  bytes: number;
  seconds: number;
  recordsPerSec: number;
  firstByteMs: number;
  firstRecordMs: number;
  rssGrowthBytes: number;
  contentType: string;
}

/**
 * Every format writes one record a line (the seeded names hold no line breaks); these are the
 * framing lines before the first record and after the last, to count records from newlines.
 * JSON puts a newline before each record and two at the end (`\n]}\n`).
 */
const FRAMING: Record<string, { head: number; tail: number }> = {
  csv: { head: 1, tail: 0 },
  json: { head: 0, tail: 2 },
  ndjson: { head: 0, tail: 0 },
  'bench-csv': { head: 1, tail: 0 },
  'bench-mismo': { head: 4, tail: 2 },
};

/** Streams one export to nowhere, counting bytes and lines, while sampling the server's RSS; in `version` (Mos-Version) when given. */
export async function exportOnce(service: ServiceProcess, apiKey: string, format: string, version?: string): Promise<ExportFigures> {
  const baselineRss = rssBytes(service.pid);
  let peakRss = baselineRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssBytes(service.pid));
  }, 10);
  const started = performance.now();
  let firstByteMs = -1;
  let firstRecordMs = -1;
  let bytes = 0;
  let lines = 0;
  const framing = FRAMING[format] ?? { head: 0, tail: 0 };
  try {
    const contentType = await new Promise<string>((resolve, reject) => {
      const request = http.get(
        `${service.baseUrl}/v1/mortgages/export?format=${encodeURIComponent(format)}`,
        { headers: { Authorization: `Bearer ${apiKey}`, ...(version ? { 'Mos-Version': version } : {}) }, signal: AbortSignal.timeout(EXPORT_LIMIT_MS) },
        (response) => {
          if (response.statusCode !== 200) {
            reject(new Error(`export ${format} answered ${response.statusCode}`));
            response.resume();
            return;
          }
          response.on('data', (chunk: Buffer) => {
            if (firstByteMs < 0) firstByteMs = performance.now() - started;
            bytes += chunk.length;
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
            if (firstRecordMs < 0 && lines > framing.head) firstRecordMs = performance.now() - started;
          });
          response.on('end', () => resolve(String(response.headers['content-type'])));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
    });
    const seconds = (performance.now() - started) / 1000;
    const records = lines - framing.head - framing.tail;
    return {
      records,
      bytes,
      seconds,
      recordsPerSec: records / seconds,
      firstByteMs,
      firstRecordMs,
      rssGrowthBytes: peakRss - baselineRss,
      contentType,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Replaces an export format (a durable write) every 50 ms while `running` holds, and reports the latency. */
async function writesDuring(service: ServiceProcess, apiKey: string, running: () => boolean): Promise<{ writes: number; p50Ms: number; maxMs: number }> {
  const latencies: number[] = [];
  const deadline = Date.now() + EXPORT_LIMIT_MS;
  for (let i = 0; running() && Date.now() < deadline && i < 10_000; i++) {
    const started = performance.now();
    const response = await fetch(`${service.baseUrl}/v1/export-formats/bench-writes`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ base: 'mismo', description: `write ${i}` }),
    });
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`replacing the format answered ${response.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  latencies.sort((a, b) => a - b);
  return { writes: latencies.length, p50Ms: latencies[Math.floor(latencies.length / 2)] ?? 0, maxMs: latencies.at(-1) ?? 0 };
}

async function createFormats(service: ServiceProcess, apiKey: string): Promise<void> {
  const bodies = [
    {
      name: 'bench-csv',
      base: 'csv',
      csv: {
        delimiter: ';',
        columns: [
          { field: 'mortgageId', header: 'Loan number' },
          { field: 'status', header: 'Status' },
          { field: 'applicant.name', header: 'Borrower' },
          { field: 'applicant.amount', header: 'Loan amount' },
          { field: 'term', header: 'Term' },
          { field: 'decidedAt', header: 'Decision date' },
          { field: 'bankVerification.verified', header: 'Bank verified' },
        ],
        dateFormat: 'date',
        decimalSeparator: ',',
        thousandsSeparator: '.',
        moneyDecimals: 'two',
        booleanFormat: 'yesNo',
      },
    },
    { name: 'bench-mismo', base: 'mismo' },
    { name: 'bench-writes', base: 'mismo' },
  ];
  for (const body of bodies) {
    const response = await fetch(`${service.baseUrl}/v1/export-formats`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 201) throw new Error(`creating format ${body.name} answered ${response.status}: ${await response.text()}`);
  }
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(): Promise<void> {
  console.log(`export: GET /v1/mortgages/export over ${fmt(RECORDS)} applications (every 10th bank-verified), ${os.cpus().length} CPUs`);
  const seeded = await seed();
  console.log(`  seeded in ${fmt(seeded.seedMs / 1000, 1)} s`);
  console.log(
    `  baseline (store reads only, in process, 1000-row batches): ${fmt(seeded.baseline.recordsPerSec)} records/s, ` +
      `${seeded.baseline.batches} batches, longest batch ${fmt(seeded.baseline.maxBatchMs, 1)} ms`,
  );
  let service: ServiceProcess | undefined;
  try {
    service = await startService({ dataDir: seeded.dataDir, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' }, timeoutMs: 120_000 });
    await createFormats(service, seeded.apiKey);
    const rssBefore = rssBytes(service.pid);
    console.log(`  server RSS before the exports: ${fmt(rssBefore / MiB)} MiB (the whole database is in memory)`);
    let run = 0;
    for (const format of FORMATS) {
      run++;
      const label = FORMATS.slice(0, run - 1).includes(format) ? `${format} again` : format;
      let exporting = true;
      const writes = run === 1 ? writesDuring(service, seeded.apiKey, () => exporting) : undefined;
      const svc = service;
      const figures = await exportOnce(svc, seeded.apiKey, format)
        .catch((err: unknown) => {
          const logs = svc.logs.filter((line) => Number(line.level) >= 40).slice(-5);
          throw new Error(`export ${format} failed: ${String(err)}\nservice warnings and errors: ${JSON.stringify(logs)}\nstderr: ${svc.stderr().slice(-2000)}`);
        })
        .finally(() => (exporting = false));
      if (figures.records !== RECORDS) throw new Error(`export ${format} sent ${figures.records} records, expected ${RECORDS}`);
      console.log(
        `  ${label.padEnd(11)} ${fmt(figures.recordsPerSec).padStart(9)} records/s  ` +
          `(${fmt(figures.seconds, 1)} s, ${fmt(figures.bytes / MiB)} MiB, ${fmt((figures.bytes * 8) / figures.seconds / 1e6)} Mbit/s)  ` +
          `first byte ${fmt(figures.firstByteMs, 1)} ms, first record ${fmt(figures.firstRecordMs, 1)} ms  ` +
          `peak RSS growth ${fmt(figures.rssGrowthBytes / MiB, 1)} MiB  ` +
          `${fmt(figures.recordsPerSec / seeded.baseline.recordsPerSec, 2)}× baseline  [${figures.contentType.split(';')[0]}]`,
      );
      if (writes) {
        const w = await writes;
        console.log(`              writes during that export: ${w.writes} format replacements, p50 ${fmt(w.p50Ms, 1)} ms, max ${fmt(w.maxMs, 1)} ms`);
      }
      const vsBaseline = `${fmt(figures.recordsPerSec / seeded.baseline.recordsPerSec, 2)}× the store's reads alone`;
      if (format === 'csv' && label === 'csv') {
        reportGoal('CSV export, 1,000,000 records, first', `${fmt(figures.recordsPerSec)} records/s (${vsBaseline})`, '≥ 250,000 records/s', figures.recordsPerSec >= 250_000);
        reportGoal(
          'RSS growth during the first CSV export',
          `${fmt(figures.rssGrowthBytes / MiB, 1)} MiB (over ${fmt(rssBefore / MiB)} MiB before)`,
          '< 64 MiB',
          figures.rssGrowthBytes < 64 * MiB,
        );
      } else if (format === 'csv') {
        reportGoal('CSV export, 1,000,000 records, repeated', `${fmt(figures.recordsPerSec)} records/s (${vsBaseline})`, '≥ 250,000 records/s', figures.recordsPerSec >= 250_000);
      } else if (figures.rssGrowthBytes >= 64 * MiB) {
        console.log(`  note: ${label} grew the RSS by ${fmt(figures.rssGrowthBytes / MiB, 1)} MiB (64 MiB is the CSV goal)`);
      }
    }
  } finally {
    // The checkpoint at shutdown writes the whole million-row database: give it time on a busy machine.
    await service?.stop('SIGTERM', 120_000);
    await rm(seeded.dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run();
}
