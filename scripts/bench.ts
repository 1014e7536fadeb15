/**
 * `npm run bench [-- <name> ...]`: runs the benchmark modules of scripts/bench/ in order, or
 * only the named ones. A module exports `run(): Promise<void>` that prints plain lines; a module
 * without `run` but with its own main block is run as a script. A module listed here whose file
 * does not exist yet is reported and skipped.
 *
 * Add a module by adding its name at your feature's marker below.
 *
 * At the end it prints the table of the service's goals (scripts/bench/goals.ts): each figure the
 * benchmarks that ran measured, beside its goal, "met" or "NOT met".
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { goalsMeasured, goalTable } from './bench/goals.ts';

const MODULES = [
  'account',
  'storeCommit',
  // quotes and pricing
  'quotes',
  // webhooks
  'webhooks',
  // applications, documents and underwriting
  'submit',
  // export
  'export',
  // bank verification
  // metrics and traces: their cost on POST /v1/quotes
  'telemetry',
  // request logs: POST /v1/quotes with logging on vs off
  'requestLogs',
  // the continuous archive of the embedded store: its cost on POST /v1/quotes and its recovery point
  'archive',
  // PostgreSQL engine: quotes, account, export beside sql.js, one vs two instances (issue 30)
  'postgres',
  // API versions: a response rendered in the oldest version vs the current one (issue 43)
  'versions',
];

/**
 * Run only when named: `soak` (20 minutes per engine by default); `fleet` (issue 45: 8 instances
 * through PgBouncer and a replica against 2 direct, on a private primary and replica it makes; a
 * few minutes, and it needs PgBouncer installed).
 */
const ON_REQUEST = ['soak', 'fleet'];

const benchDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bench');

async function runAsScript(file: string): Promise<void> {
  const child = spawn(process.execPath, [file], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${path.basename(file)} exited with code ${code}`);
}

async function main(): Promise<number> {
  const requested = process.argv.slice(2);
  const unknown = requested.filter((name) => !MODULES.includes(name) && !ON_REQUEST.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown benchmark${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}; known: ${[...MODULES, ...ON_REQUEST].join(', ')}`);
    return 2;
  }
  const names = requested.length > 0 ? requested : MODULES;
  const failed: string[] = [];
  for (const name of names) {
    const file = path.join(benchDir, `${name}.ts`);
    if (!existsSync(file)) {
      console.log(`== ${name}: skipped, scripts/bench/${name}.ts does not exist yet\n`);
      continue;
    }
    console.log(`== ${name}`);
    const started = performance.now();
    try {
      const module = (await import(pathToFileURL(file).href)) as { run?: () => Promise<void> };
      if (typeof module.run === 'function') await module.run();
      else await runAsScript(file);
      console.log(`== ${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    } catch (err) {
      failed.push(name);
      console.error(`== ${name}: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
  }
  if (goalsMeasured() > 0) {
    console.log(`goals (${os.cpus().length} cores; each figure against a baseline measured in the same run):`);
    console.log(goalTable());
    console.log('');
  }
  if (failed.length > 0) {
    console.error(`failed: ${failed.join(', ')}`);
    return 1;
  }
  return 0;
}

process.exit(await main());
