/**
 * Commit latency of the sql.js store: a single-row INSERT transaction, sequential and with
 * N concurrent writers, on an empty database and on one preloaded with many rows. The point
 * is that the cost of a commit does not grow with the size of the database.
 *
 * Run: node scripts/bench/storeCommit.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import type { SqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';

export interface LatencyFigures {
  commits: number;
  meanMs: number;
  p99Ms: number;
  commitsPerSec: number;
  fsyncs: number;
}

export interface StoreCommitResult {
  rows: number;
  preloadMs: number;
  checkpointMs: number;
  snapshotBytes: number;
  reopenMs: number;
  sequential: LatencyFigures;
  concurrent: LatencyFigures;
}

export interface StoreCommitBench {
  concurrency: number;
  results: StoreCommitResult[];
  /** Largest database over the first (smallest) one, per figure. */
  ratio: { sequentialMean: number; sequentialP99: number; concurrentMean: number; concurrentP99: number };
}

const SCHEMA = `CREATE TABLE bench (
  id INTEGER PRIMARY KEY,
  k TEXT NOT NULL UNIQUE,
  v TEXT NOT NULL,
  created_at TEXT NOT NULL
)`;

function figures(latencies: number[], wallMs: number, fsyncs: number): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / sorted.length;
  const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
  return { commits: sorted.length, meanMs: mean, p99Ms: p99, commitsPerSec: (sorted.length / wallMs) * 1000, fsyncs };
}

let seq = 0;
async function commitOne(store: SqlJsStore): Promise<number> {
  const n = ++seq;
  const started = performance.now();
  await store.transaction((tx) =>
    tx.run('INSERT INTO bench (k, v, created_at) VALUES (?, ?, ?)', [`bench-${process.pid}-${n}`, 'v'.repeat(64), new Date().toISOString()]),
  );
  return performance.now() - started;
}

async function measure(store: SqlJsStore, commits: number, concurrency: number): Promise<LatencyFigures> {
  const fsyncsBefore = store.stats().fsyncs;
  const latencies: number[] = [];
  const started = performance.now();
  let remaining = commits;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining > 0) {
        remaining--;
        latencies.push(await commitOne(store));
      }
    }),
  );
  return figures(latencies, performance.now() - started, store.stats().fsyncs - fsyncsBefore);
}

async function benchOne(rows: number, commits: number, concurrency: number): Promise<StoreCommitResult> {
  const root = await mkdtemp(join(os.tmpdir(), 'bench-store-'));
  const dataDir = join(root, 'data');
  const migrationsDir = join(root, 'no-migrations');
  try {
    let store = await openSqlJsStore({ dataDir, migrationsDir });
    let t = performance.now();
    await store.transaction(async (tx) => {
      await tx.run(SCHEMA);
      // one statement: the journal records just this text, not a million rows
      if (rows > 0) {
        await tx.run(
          `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
           INSERT INTO bench (k, v, created_at) SELECT printf('row-%09d', x), printf('%064d', x), '2024-01-01T00:00:00.000Z' FROM n`,
          [rows],
        );
      }
    });
    const preloadMs = performance.now() - t;
    t = performance.now();
    await store.checkpoint();
    const checkpointMs = performance.now() - t;
    const snapshotBytes = (await stat(join(dataDir, 'snapshot.db'))).size;
    await store.close();
    t = performance.now();
    store = await openSqlJsStore({ dataDir, migrationsDir });
    const reopenMs = performance.now() - t;
    try {
      await measure(store, Math.min(100, commits), 1); // warm-up
      const sequential = await measure(store, commits, 1);
      const concurrent = await measure(store, commits, concurrency);
      return { rows, preloadMs, checkpointMs, snapshotBytes, reopenMs, sequential, concurrent };
    } finally {
      await store.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

export async function benchStoreCommit(opts: {
  rows: number[];
  commits: number;
  concurrency?: number;
  onResult?: (r: StoreCommitResult) => void;
}): Promise<StoreCommitBench> {
  const concurrency = opts.concurrency ?? 50;
  const results: StoreCommitResult[] = [];
  for (const rows of opts.rows) {
    const r = await benchOne(rows, opts.commits, concurrency);
    results.push(r);
    opts.onResult?.(r);
  }
  const first = results[0]!;
  const last = results.at(-1)!;
  return {
    concurrency,
    results,
    ratio: {
      sequentialMean: last.sequential.meanMs / first.sequential.meanMs,
      sequentialP99: last.sequential.p99Ms / first.sequential.p99Ms,
      concurrentMean: last.concurrent.meanMs / first.concurrent.meanMs,
      concurrentP99: last.concurrent.p99Ms / first.concurrent.p99Ms,
    },
  };
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  const line = (label: string, f: LatencyFigures) =>
    `  ${label.padEnd(14)} mean ${ms(f.meanMs)}  p99 ${ms(f.p99Ms)}  ${f.commitsPerSec.toFixed(0)} commits/s  (${f.commits} commits, ${f.fsyncs} fsyncs)`;
  const bench = await benchStoreCommit({
    rows: [0, 1_000_000],
    commits: 2000,
    concurrency: 50,
    onResult: (r) => {
      console.log(`database with ${r.rows.toLocaleString('en')} rows`);
      console.log(
        `  preload ${r.preloadMs.toFixed(0)} ms, checkpoint ${r.checkpointMs.toFixed(0)} ms, snapshot ${(r.snapshotBytes / 1e6).toFixed(1)} MB, reopen ${r.reopenMs.toFixed(0)} ms`,
      );
      console.log(line('sequential', r.sequential));
      console.log(line(`concurrent ${50}`, r.concurrent));
    },
  });
  const { ratio } = bench;
  console.log('ratio large/empty');
  console.log(`  sequential     mean ${ratio.sequentialMean.toFixed(2)}x  p99 ${ratio.sequentialP99.toFixed(2)}x`);
  console.log(`  concurrent ${bench.concurrency}  mean ${ratio.concurrentMean.toFixed(2)}x  p99 ${ratio.concurrentP99.toFixed(2)}x`);
}
