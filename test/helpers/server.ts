/**
 * The real service and admin CLI as child processes, for tests that need a process boundary
 * (SIGKILL, SIGTERM, exit codes, the admin socket). The implementation lives in
 * scripts/lib/spawnService.ts so the benchmarks share it; this adds temp data directories.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export {
  ADMIN_ENTRY,
  MAIN_ENTRY,
  PROJECT_ROOT,
  createAccountWithCli,
  freePort,
  runAdmin,
  startService,
  type AdminRun,
  type Exit,
  type ServiceProcess,
  type StartServiceOptions,
} from '../../scripts/lib/spawnService.ts';

/** A fresh data directory; `remove()` deletes it. */
export async function tempDataDir(prefix = 'mos-proc-'): Promise<{ dataDir: string; remove(): Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  const dataDir = path.join(root, 'data');
  return { dataDir, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Polls `check` every `intervalMs` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 5_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
