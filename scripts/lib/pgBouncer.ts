/**
 * A private PgBouncer in transaction mode for tests and benchmarks, in front of a PostgreSQL server
 * (the machine's on 127.0.0.1:5432 unless told), on a free port: `pool_mode = transaction`, trust
 * authentication with an auth_file, every database of the server reachable under its own name.
 * Run as the `postgres` user when this process is root (PgBouncer refuses to run as root).
 * Debian 12's PgBouncer is 1.18: no `max_prepared_statements`, so the service must not need it.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './spawnService.ts';

export interface PgBouncer {
  port: number;
  /** `url` (a database of the upstream server) as reached through this PgBouncer. */
  through(url: string): string;
  /** Server connections PgBouncer holds to the upstream now, over every pool (SHOW POOLS: sv_active + sv_idle + sv_used + sv_tested + sv_login). */
  serverConnections(): Promise<number>;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The upstream server (default 127.0.0.1:5432). */
  host?: string;
  port?: number;
  /** Server connections per database and user (default 10): small, as in production. */
  poolSize?: number;
  /** Client connections accepted (default 1000). */
  maxClientConn?: number;
}

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

/** The PgBouncer binary, or null when none is installed (Debian: `apt-get install pgbouncer`). */
function pgBouncerBinary(): string | null {
  return CANDIDATES.find((candidate) => existsSync(candidate)) ?? null;
}

function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

async function listening(port: number, timeoutMs: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with code ${child.exitCode}: ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within ${timeoutMs} ms: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const binary = pgBouncerBinary();
  if (binary === null) throw new Error('PgBouncer is not installed (apt-get install -y pgbouncer)');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mos-pgbouncer-'));
  await chmod(dir, 0o755);
  const port = await freePort();
  const upstreamHost = options.host ?? '127.0.0.1';
  const upstreamPort = options.port ?? 5432;
  const ini = [
    '[databases]',
    `* = host=${upstreamHost} port=${upstreamPort}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    "unix_socket_dir = ''",
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'users.txt')}`,
    'admin_users = postgres',
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize ?? 10}`,
    'min_pool_size = 0',
    'reserve_pool_size = 0',
    `max_client_conn = ${options.maxClientConn ?? 1000}`,
    'server_lifetime = 3600',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
  await writeFile(path.join(dir, 'users.txt'), '"postgres" ""\n', { mode: 0o644 });
  await writeFile(path.join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  const user = runAs();
  // A watchdog shell between: when this process ends however it ends (a test worker killed, the
  // SIGKILL of a timeout), its end of the stdin pipe closes, and the shell stops PgBouncer.
  const watchdog = 'exec 3<&0; "$0" "$1" & p=$!; (cat <&3 >/dev/null; kill -TERM $p 2>/dev/null) & wait $p';
  const child = spawn('/bin/sh', ['-c', watchdog, binary, path.join(dir, 'pgbouncer.ini')], { stdio: ['pipe', 'pipe', 'pipe'], ...(user ?? {}) });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // The watchdog stops PgBouncer (SIGTERM: immediate shutdown) and then exits itself.
      child.stdin!.end();
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, 10_000, child, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    through(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    async serverConnections() {
      const pg = (await import('pg')).default;
      const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'pgbouncer' });
      await admin.connect();
      try {
        // The admin console speaks only the simple protocol: no parameters.
        const { rows } = await admin.query({ text: 'SHOW POOLS', queryMode: 'simple' } as never);
        return (rows as Array<Record<string, string>>).reduce(
          (sum, r) => sum + ['sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login'].reduce((n, k) => n + Number(r[k] ?? 0), 0),
          0,
        );
      } finally {
        await admin.end().catch(() => {});
      }
    },
    stop,
  };
}
