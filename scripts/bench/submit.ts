/**
 * Decision latency of POST /v1/applications/{mortgageId}/submit at 50 concurrent connections,
 * against the real service (`node src/main.ts` in its own process): each submit loads the
 * application, the account's underwriting rules and rate sheet, prices the loan, decides, writes
 * the decision durably (journal + fsync) and, for approvals, the application.approved event.
 *
 * N draft applications (a realistic mix: most approve, some refer, a few decline) are created
 * first; autocannon then submits each exactly once (its `setupRequest` picks the next id). The
 * baseline, measured in the same run on the same applications, is GET /v1/applications/{id}:
 * the same edge (auth, routing, validation) and a read, without the decision and the write.
 * Goal (issues 5 and 17): p99 under 50 ms at 50 connections (the interface document promises < 60 s).
 *
 * Run: node scripts/bench/submit.ts   (SUBMIT_BENCH_COUNT=4000 applications by default)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { createAccountWithCli, startService, type ServiceProcess } from '../lib/spawnService.ts';
import { reportGoal } from './goals.ts';

const CONNECTIONS = 50;
const COUNT = Math.min(50_000, Math.max(200, Number(process.env.SUBMIT_BENCH_COUNT ?? 4000)));
const WARMUP = Math.min(500, Math.floor(COUNT / 4));
/** No phase may run longer than this, whatever happens. */
const PHASE_LIMIT_MS = 180_000;

/** Draft bodies: 80 % pass every default rule, 15 % are a near miss on DTI (referred), 5 % a credit score far below (declined). */
function draftBody(i: number): string {
  const kind = i % 20;
  const creditScore = kind === 19 ? 540 : 680 + (i % 120);
  const annualIncome = kind >= 16 && kind <= 18 ? 70_000 : 110_000 + (i % 50) * 1000;
  return JSON.stringify({
    applicant: { name: `Applicant ${i}`, amount: 250_000 + (i % 100) * 1000, email: `applicant${i}@example.test`, annualIncome, monthlyDebts: 450 + (i % 30) * 10, creditScore },
    term: 30,
    propertyValue: 480_000,
  });
}

async function createDrafts(baseUrl: string, apiKey: string, count: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const deadline = Date.now() + PHASE_LIMIT_MS;
  const worker = async () => {
    while (next < count && Date.now() < deadline) {
      const i = next++;
      const response = await fetch(`${baseUrl}/v1/applications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: draftBody(i),
      });
      const body = (await response.json()) as { mortgageId?: string };
      if (response.status !== 201 || !body.mortgageId) throw new Error(`creating draft ${i} answered ${response.status}: ${JSON.stringify(body)}`);
      ids[i] = body.mortgageId;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  if (next < count) throw new Error(`created only ${next} of ${count} drafts within ${PHASE_LIMIT_MS} ms`);
  return ids;
}

export interface PhaseFigures {
  requests: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
}

/** One request per id, `method` on `pathOf(id)`, 50 connections. */
async function hitEach(baseUrl: string, apiKey: string, ids: string[], method: 'GET' | 'POST', pathOf: (id: string) => string): Promise<PhaseFigures> {
  let next = 0;
  // Without a callback autocannon returns its instance, which is also a promise of the result.
  const instance = autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    amount: ids.length,
    timeout: 10,
    headers: { authorization: `Bearer ${apiKey}` },
    requests: [
      {
        method,
        setupRequest: (request) => ({ ...request, path: pathOf(ids[next++ % ids.length]!) }),
      },
    ],
  }) as unknown as Promise<autocannon.Result> & { stop(): void };
  const guard = setTimeout(() => instance.stop(), PHASE_LIMIT_MS);
  const result = await instance;
  clearTimeout(guard);
  return {
    requests: result.requests.total,
    requestsPerSec: result.requests.total / Math.max(result.duration, 0.001),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function outcomes(baseUrl: string, apiKey: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const status of ['approved', 'referred', 'declined', 'draft']) {
    let cursor: string | null = null;
    let n = 0;
    let pages = 0;
    do {
      const query = new URLSearchParams({ status, limit: '100', ...(cursor ? { cursor } : {}) });
      const response = await fetch(`${baseUrl}/v1/applications?${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
      const page = (await response.json()) as { data: unknown[]; nextCursor: string | null };
      n += page.data.length;
      cursor = page.nextCursor;
    } while (cursor && ++pages < 1000);
    counts[status] = n;
  }
  return counts;
}

export interface SubmitBench {
  submit: PhaseFigures;
  baseline: PhaseFigures;
  outcomes: Record<string, number>;
}

export async function benchSubmit(): Promise<SubmitBench> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-submit-'));
  let service: ServiceProcess | undefined;
  try {
    const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending', 'bench@harborlending.test');
    service = await startService({ dataDir, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' } });
    const base = service.baseUrl;

    const warmIds = await createDrafts(base, apiKey, WARMUP);
    await hitEach(base, apiKey, warmIds, 'POST', (id) => `/v1/applications/${id}/submit`);

    const ids = await createDrafts(base, apiKey, COUNT);
    const baseline = await hitEach(base, apiKey, ids, 'GET', (id) => `/v1/applications/${id}`);
    const submit = await hitEach(base, apiKey, ids, 'POST', (id) => `/v1/applications/${id}/submit`);
    return { submit, baseline, outcomes: await outcomes(base, apiKey) };
  } finally {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  console.log(`submit: POST /v1/applications/{id}/submit, ${COUNT} applications each submitted once, ${CONNECTIONS} connections, ${os.cpus().length} CPUs`);
  const bench = await benchSubmit();
  const line = (name: string, f: PhaseFigures) => {
    const problems = f.non2xx || f.errors ? `  (${f.non2xx} non-2xx, ${f.errors} errors/timeouts)` : '';
    console.log(
      `  ${name.padEnd(8)} ${f.requestsPerSec.toFixed(0).padStart(6)} req/s  p50 ${String(f.p50Ms).padStart(4)} ms  p99 ${String(f.p99Ms).padStart(4)} ms  max ${String(f.maxMs).padStart(4)} ms  (${f.requests} requests)${problems}`,
    );
  };
  line('submit', bench.submit);
  line('baseline', bench.baseline);
  const { approved = 0, referred = 0, declined = 0, draft = 0 } = bench.outcomes;
  console.log(`  decisions: ${approved} approved, ${referred} referred, ${declined} declined, ${draft} left in draft (warm-up included)`);
  const p99Ratio = bench.submit.p99Ms / Math.max(bench.baseline.p99Ms, 1);
  console.log(`  submit/baseline: throughput ${(bench.submit.requestsPerSec / bench.baseline.requestsPerSec).toFixed(2)}x, p99 ${p99Ratio.toFixed(2)}x`);
  const failed = bench.submit.non2xx + bench.submit.errors > 0 ? ` (${bench.submit.non2xx} non-2xx, ${bench.submit.errors} errors)` : '';
  reportGoal(
    'submit decision p99, 4,000 applications, 50 connections',
    `${bench.submit.p99Ms} ms (GET of the same applications: p99 ${bench.baseline.p99Ms} ms, ${p99Ratio.toFixed(2)}×)${failed}`,
    '< 50 ms',
    bench.submit.p99Ms < 50 && failed === '',
  );
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
