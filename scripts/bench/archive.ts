/**
 * The continuous archive (ARCHIVE_DIR, issue 42): its cost on POST /v1/quotes, archive on vs off
 * in alternating rounds (alternatingRounds.ts), and the delay from a write's acknowledgement to
 * its archived file: one service under a steady load while this process watches the archive
 * directory (every 5 ms) and notes when each segment appears; a batch's delay is that moment less
 * the moment the journal made it durable (the segment's own marks, on the same machine's clock).
 * Goals: throughput with the archive ≥ 0.95× without (≤ 5 %); p99 delay ≤ ARCHIVE_MAX_DELAY_MS.
 *
 * Run: node scripts/bench/archive.ts   (ARCHIVE_BENCH_SECONDS=4 per round)
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { decodeArchiveFile } from '../../src/store/sqljs/archive/archiveFile.ts';
import { createAccountWithCli, startService } from '../lib/spawnService.ts';
import { compareOnQuotes } from './alternatingRounds.ts';
import { fmt, reportGoal } from './goals.ts';

const SECONDS = Math.min(60, Math.max(1, Number(process.env.ARCHIVE_BENCH_SECONDS ?? 4)));
const MAX_DELAY_MS = 1000;
const REQUEST_BODY = JSON.stringify({ amount: 350000, term: 30, propertyValue: 437500, creditScore: 742 });

/** Every archived batch's delay (ms) from durable to its segment's appearance, under `seconds` of load at `rate` quotes a second. */
async function delays(seconds: number, rate: number): Promise<number[]> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'mos-bench-archive-delay-'));
  const archiveDir = path.join(root, 'archive');
  const env = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', ARCHIVE_DIR: archiveDir, ARCHIVE_MAX_DELAY_MS: String(MAX_DELAY_MS) };
  const { apiKey } = await createAccountWithCli(path.join(root, 'data'), 'Bench Lending', undefined, env);
  const service = await startService({ dataDir: path.join(root, 'data'), env });
  const seen = new Map<string, number>();
  // Files already there (the account's setup, archived before the watch began) would count the
  // wait for the watcher as archive delay: only files that appear while watched are measured.
  const before = new Set(await readdir(archiveDir).catch(() => [] as string[]));
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const now = Date.now();
      for (const name of await readdir(archiveDir)) if (name.startsWith('segment-') && !name.endsWith('.partial') && !before.has(name) && !seen.has(name)) seen.set(name, now);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    await autocannon({
      url: `${service.baseUrl}/v1/quotes`,
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: REQUEST_BODY,
      connections: 10,
      overallRate: rate,
      duration: seconds,
    });
    await new Promise((r) => setTimeout(r, 2 * MAX_DELAY_MS)); // the last batches reach the archive
  } finally {
    watching = false;
    await watcher;
    await service.stop();
  }
  const result: number[] = [];
  for (const [name, at] of seen) {
    const { header } = decodeArchiveFile(await readFile(path.join(archiveDir, name)));
    if (header.kind === 'segment') for (const [, ackMs] of header.acks) result.push(at - ackMs);
  }
  await rm(root, { recursive: true, force: true });
  return result.sort((a, b) => a - b);
}

export async function run(): Promise<void> {
  console.log(`archive: POST /v1/quotes with ARCHIVE_DIR set vs not, 2 services each, 50 connections, 6 alternating rounds of ${SECONDS} s per service, ${os.cpus().length} CPUs`);
  const result = await compareOnQuotes(
    { name: 'archive on', env: (root) => ({ ARCHIVE_DIR: path.join(root, 'archive') }) },
    { name: 'archive off', env: () => ({}) },
    SECONDS,
  );
  const failed = result.candidate.failures + result.baseline.failures > 0 ? ' (with failed requests)' : '';
  reportGoal(
    'POST /v1/quotes with the continuous archive on vs off',
    `${fmt(result.candidate.perSecond)} vs ${fmt(result.baseline.perSecond)} req/s per service, median round ${result.median.toFixed(3)}×${failed}`,
    '≥ 0.95× (≤ 5 % slower)',
    result.median >= 0.95 && failed === '',
  );
  const measured = await delays(Math.max(5, SECONDS * 2), 500);
  const at = (q: number) => measured[Math.min(measured.length - 1, Math.floor(q * measured.length))] ?? NaN;
  console.log(`  acknowledgement to archive, ${measured.length} batches at 500 quotes/s: p50 ${fmt(at(0.5))} ms, p99 ${fmt(at(0.99))} ms, max ${fmt(at(1))} ms (ARCHIVE_MAX_DELAY_MS=${MAX_DELAY_MS})`);
  reportGoal('continuous archive: acknowledgement to archive, p99', `${fmt(at(0.99))} ms over ${measured.length} batches`, `≤ ${MAX_DELAY_MS} ms (ARCHIVE_MAX_DELAY_MS)`, measured.length > 0 && at(0.99) <= MAX_DELAY_MS);
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) await run();
