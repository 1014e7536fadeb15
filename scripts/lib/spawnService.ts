/**
 * Runs the real service and the admin command line as child processes (`node src/main.ts`,
 * `node src/cli/admin.ts`) on a data directory, for the process-level tests (durability, CLI,
 * shutdown) and the benchmarks. Everything listens on 127.0.0.1 only.
 *
 * The service logs a JSON line `{"msg":"listening","port":…}` at level info; with a quieter
 * LOG_LEVEL (benchmarks use warn) a free port is picked first and /healthz is polled instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN_ENTRY = path.join(PROJECT_ROOT, 'src', 'main.ts');
const ADMIN_ENTRY = path.join(PROJECT_ROOT, 'src', 'cli', 'admin.ts');

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  baseUrl: string;
  dataDir: string;
  /** Every JSON log line the service has printed so far (non-JSON lines are kept as `{ raw }`). */
  logs: Array<Record<string, unknown>>;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Resolves with the first log line that `match` accepts (already printed or yet to come). */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

export interface StartServiceOptions {
  dataDir: string;
  /** Extra environment; PORT, HOST, DATA_DIR, RATE_LIMIT_PER_MINUTE=0 and LOG_LEVEL=info are set unless given here. */
  env?: Record<string, string>;
  /** How long to wait for the service to listen (default 20 s). */
  timeoutMs?: number;
  /** The file mode creation mask the service starts under (default: this process's own). */
  umask?: number;
}

const QUIET_LEVELS = new Set(['warn', 'error', 'fatal', 'silent']);

/** A port that was free a moment ago on 127.0.0.1 (for programs that need one named up front). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Node's on-disk compile cache: a process that loads the whole service starts in about half the time. */
const COMPILE_CACHE = path.join(os.tmpdir(), 'mortgage-origination-compile-cache');

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  // The child's settings are exactly what the caller says, never whatever the parent had lying around.
  const env: NodeJS.ProcessEnv = { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env };
  for (const name of ['PORT', 'HOST', 'DATA_DIR', 'LOG_LEVEL', 'RATE_LIMIT_PER_MINUTE', 'JSON_BODY_LIMIT_BYTES', 'PUBLIC_BASE_URL', 'DATABASE_URL', 'DATABASE_POOL_MAX', 'DATABASE_EXPORT_WORKERS', 'DATABASE_POOLER', 'DATABASE_SESSION_URL', 'DATABASE_REPLICA_URLS']) {
    delete env[name];
  }
  return { ...env, ...extra };
}

export async function startService(options: StartServiceOptions): Promise<ServiceProcess> {
  const logLevel = options.env?.LOG_LEVEL ?? 'info';
  const quiet = QUIET_LEVELS.has(logLevel);
  const port = options.env?.PORT ?? (quiet ? String(await freePort()) : '0');
  const env = childEnv({
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '0',
    ...options.env,
    PORT: port,
    LOG_LEVEL: logLevel,
    DATA_DIR: options.dataDir,
  });
  // A child inherits the umask at spawn, which is synchronous: nothing else runs in between.
  const previousUmask = options.umask === undefined ? undefined : process.umask(options.umask);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [MAIN_ENTRY], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  } finally {
    if (previousUmask !== undefined) process.umask(previousUmask);
  }
  const logs: Array<Record<string, unknown>> = [];
  const waiters = new Set<{ match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }>();
  let stderr = '';
  let pending = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (!text.trim()) continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { raw: text };
      }
      logs.push(line);
      for (const waiter of waiters) {
        if (waiter.match(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const describe = () => `stderr:\n${stderr}\nstdout:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`;

  const waitForLog = (match: (line: Record<string, unknown>) => boolean, timeoutMs = 10_000) => {
    const seen = logs.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const waiter = { match, resolve: (line: Record<string, unknown>) => (clearTimeout(timer), resolve(line)) };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`the service printed no matching log line within ${timeoutMs} ms\n${describe()}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then((exit) => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`the service exited (${JSON.stringify(exit)}) before printing the awaited log line\n${describe()}`));
      });
    });
  };

  const timeoutMs = options.timeoutMs ?? 20_000;
  let listeningPort: number;
  try {
    if (!quiet) {
      const line = await waitForLog((l) => l.msg === 'listening', timeoutMs);
      listeningPort = Number(line.port);
    } else {
      listeningPort = Number(port);
      await waitForHealth(`http://127.0.0.1:${port}`, timeoutMs, () => hasExited, describe);
    }
  } catch (err) {
    if (!hasExited) child.kill('SIGKILL');
    throw err;
  }

  const service: ServiceProcess = {
    child,
    pid: child.pid!,
    port: listeningPort,
    baseUrl: `http://127.0.0.1:${listeningPort}`,
    dataDir: options.dataDir,
    logs,
    stderr: () => stderr,
    exited,
    waitForLog,
    async stop(signal: NodeJS.Signals = 'SIGTERM', stopTimeoutMs = 15_000) {
      if (!hasExited) child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`the service did not exit within ${stopTimeoutMs} ms of ${signal}\n${describe()}`));
        }, stopTimeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return service;
}

async function waitForHealth(baseUrl: string, timeoutMs: number, hasExited: () => boolean, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error(`the service exited before it was healthy\n${describe()}`);
    try {
      const response = await fetch(`${baseUrl}/healthz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the service was not healthy within ${timeoutMs} ms\n${describe()}`);
}

export interface AdminRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node src/cli/admin.ts <args>` on `dataDir` and collects its output. */
export async function runAdmin(args: string[], options: { dataDir: string; env?: Record<string, string>; timeoutMs?: number }): Promise<AdminRun> {
  const child = spawn(process.execPath, [ADMIN_ENTRY, ...args], {
    cwd: PROJECT_ROOT,
    env: childEnv({ LOG_LEVEL: 'warn', ...options.env, DATA_DIR: options.dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timeoutMs = options.timeoutMs ?? 20_000;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** `account create … --json` on `dataDir`; throws with the CLI's stderr when it fails. */
export async function createAccountWithCli(
  dataDir: string,
  name = 'Harbor Lending',
  email = 'ops@harborlending.test',
  /** Extra environment for the command (DATABASE_URL to create it on PostgreSQL). */
  env: Record<string, string> = {},
): Promise<{ accountId: string; keyId: string; apiKey: string }> {
  const run = await runAdmin(['account', 'create', '--name', name, '--email', email, '--json'], { dataDir, env });
  if (run.code !== 0) throw new Error(`admin account create failed (exit ${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout) as { accountId: string; keyId: string; apiKey: string };
}
