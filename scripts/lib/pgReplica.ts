/**
 * A private PostgreSQL 15 primary and streaming replica for tests and benchmarks, made with the
 * server's own binaries in a temporary directory, on free ports, as the `postgres` user: the
 * machine's cluster allows no replication connections, and is left exactly as it was.
 *
 *   initdb (trust, a `replication` line in pg_hba.conf) → pg_ctl start → pg_basebackup -R -X stream → pg_ctl start
 *
 * Durability is off on both (fsync, full_page_writes) unless `durable` (benchmarks, where the
 * cost of a WAL flush is part of what is measured): they live as long as a test.
 */
import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './spawnService.ts';

const run = promisify(execFile);
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PrivateReplication {
  /** postgres://postgres@127.0.0.1:PORT/`database` on the primary, or on the replica. */
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  /** Makes `database` on the primary (the replica receives it by replication). */
  createDatabase(database: string): Promise<void>;
  /** Runs `sql` on the replica's `postgres` database (pg_wal_replay_pause(), …). */
  onReplica(sql: string): Promise<pg.QueryResult>;
  /** Waits until the replica has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  promoteReplica(): Promise<void>;
  stop(): Promise<void>;
}

interface Owner {
  uid: number;
  gid: number;
}

async function postgresUser(): Promise<Owner | null> {
  if (process.getuid?.() !== 0) return null;
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { uid, gid };
}

export async function startPrivateReplication(options: { durable?: boolean } = {}): Promise<PrivateReplication> {
  const owner = await postgresUser();
  const root = await mkdtemp(path.join(os.tmpdir(), 'mos-replication-'));
  if (owner) await chown(root, owner.uid, owner.gid);
  const as = (file: string, args: string[]) => run(path.join(BIN, file), args, { ...(owner ?? {}), cwd: root, timeout: 60_000 });
  const primaryDir = path.join(root, 'primary');
  const replicaDir = path.join(root, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const pgCtl = (dir: string, ...args: string[]) => as('pg_ctl', ['-D', dir, '-l', path.join(root, `${path.basename(dir)}.log`), ...args]);
  const stopDir = (dir: string) => pgCtl(dir, '-m', 'immediate', '-w', 'stop').catch(() => {});
  const settings = (port: number) =>
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${root}'`,
      ...(options.durable ? ['shared_buffers = 128MB'] : ['fsync = off', 'full_page_writes = off', 'shared_buffers = 32MB']),
      'wal_level = replica',
      'hot_standby = on',
      '',
    ].join('\n');
  const url = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const client = async <T>(port: number, database: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url(port, database) });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => {});
    }
  };
  const stop = async () => {
    for (const dir of started.reverse()) await stopDir(dir);
    await rm(root, { recursive: true, force: true });
  };
  try {
    await as('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    await appendFile(path.join(primaryDir, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    await appendFile(path.join(primaryDir, 'postgresql.conf'), settings(primaryPort));
    await pgCtl(primaryDir, '-w', 'start');
    started.push(primaryDir);
    await as('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream']);
    await appendFile(path.join(replicaDir, 'postgresql.conf'), `port = ${replicaPort}\n`);
    await pgCtl(replicaDir, '-w', 'start');
    started.push(replicaDir);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    primaryUrl: (database) => url(primaryPort, database),
    replicaUrl: (database) => url(replicaPort, database),
    createDatabase: (database) => client(primaryPort, 'postgres', (c) => c.query(`CREATE DATABASE ${database}`)).then(() => {}),
    onReplica: (sql) => client(replicaPort, 'postgres', (c) => c.query(sql)),
    async caughtUp(timeoutMs = 10_000) {
      const target = await client(primaryPort, 'postgres', async (c) => (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const reached = await client(replicaPort, 'postgres', async (c) => (await c.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [target])).rows[0]!.ok);
        if (reached) return;
        if (Date.now() > deadline) throw new Error(`the replica did not reach ${target} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stopReplica: () => stopDir(replicaDir).then(() => {}),
    startReplica: () => pgCtl(replicaDir, '-w', 'start').then(() => {}),
    promoteReplica: () => pgCtl(replicaDir, '-w', 'promote').then(() => {}),
    stop,
  };
}
