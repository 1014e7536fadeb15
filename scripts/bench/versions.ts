/**
 * The cost of API versions: a response rendered in the oldest version (every change module undone,
 * src/domain/versions/) against the same response in the current one, on GET
 * /v1/applications/{mortgageId} (an application the clear_to_close change renders) and POST
 * /v1/quotes (no change touches it: the cost is the version look-up alone). One service, one
 * account; the two versions are asked for with Mos-Version in alternating rounds, so the machine's
 * other load weighs on both alike; the figure is the median of the rounds' throughput ratios.
 * Goal (issue 43): at most 10 % fewer requests a second in the oldest version.
 *
 * Run: npm run bench -- versions   (or node scripts/bench/versions.ts)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { CURRENT_VERSION, FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { createAccountWithCli, startService } from '../lib/spawnService.ts';
import { fmt, reportGoal, signedPercent, type GoalFigure } from './goals.ts';

const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_VERSION_ROUNDS ?? 6);
const ROUND_S = Number(process.env.BENCH_VERSION_ROUND_S ?? 5);
const GOAL = 0.1;

interface Target {
  figure: GoalFigure;
  label: string;
  request: (version: string) => autocannon.Options;
}

async function rate(options: autocannon.Options, seconds: number): Promise<number> {
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: seconds, timeout: 10 });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) throw new Error(`${options.method ?? 'GET'} ${options.url}: ${failed} failed requests`);
  return result.requests.total / seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'bench-versions-'));
  const dataDir = path.join(root, 'data');
  const { apiKey } = await createAccountWithCli(dataDir, 'Bench Lending', 'bench@lending.test');
  const service = await startService({ dataDir, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' } });
  try {
    const json = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const post = async (pathname: string, body: unknown) => (await (await fetch(service.baseUrl + pathname, { method: 'POST', headers: json, body: JSON.stringify(body) })).json()) as Record<string, any>;
    const quote = await post('/v1/quotes', { amount: 300000, term: 30 });
    const application = await post('/v1/applications', {
      applicant: { name: 'Avery Approved', email: 'avery@example.test', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 760 },
      term: 30,
      propertyValue: 400000,
      quoteId: quote.quoteId,
    });
    await post(`/v1/applications/${application.mortgageId}/submit`, {});
    const targets: Target[] = [
      {
        figure: 'GET /v1/applications/{mortgageId} in the oldest version vs the current one',
        label: `GET /v1/applications/{mortgageId}`,
        request: (version) => ({ url: `${service.baseUrl}/v1/applications/${application.mortgageId}`, headers: { ...json, 'mos-version': version } }),
      },
      {
        figure: 'POST /v1/quotes in the oldest version vs the current one',
        label: 'POST /v1/quotes',
        request: (version) => ({
          url: `${service.baseUrl}/v1/quotes`,
          method: 'POST',
          headers: { ...json, 'mos-version': version },
          body: JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 }),
        }),
      },
    ];
    console.log(`${FIRST_VERSION} (oldest) vs ${CURRENT_VERSION} (current), ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_S} s each, on ${os.cpus().length} cores`);
    for (const target of targets) {
      await rate(target.request(CURRENT_VERSION), 2); // warm-up
      await rate(target.request(FIRST_VERSION), 2);
      const ratios: number[] = [];
      let oldest = 0;
      let current = 0;
      for (let i = 0; i < ROUNDS; i += 1) {
        // Alternate which goes first, so a drift of the machine's load favours neither.
        const [a, b] = i % 2 === 0 ? [FIRST_VERSION, CURRENT_VERSION] : [CURRENT_VERSION, FIRST_VERSION];
        const first = await rate(target.request(a), ROUND_S);
        const second = await rate(target.request(b), ROUND_S);
        const [old, now] = a === FIRST_VERSION ? [first, second] : [second, first];
        oldest += old;
        current += now;
        ratios.push(old / now);
      }
      const cost = 1 - median(ratios);
      console.log(`  ${target.label.padEnd(34)} oldest ${fmt(oldest / ROUNDS)} req/s, current ${fmt(current / ROUNDS)} req/s, median cost ${signedPercent(cost)}`);
      reportGoal(target.figure, `${signedPercent(cost)} req/s`, `≤ ${fmt(GOAL * 100)} %`, cost <= GOAL);
    }
  } finally {
    await service.stop();
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await run();
