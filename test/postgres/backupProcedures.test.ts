/**
 * The two PostgreSQL backup procedures of docs/operators/backups.md, run as written against
 * scratch databases, with the service itself writing the data and reading it back after restore:
 *
 * - pg_dump (custom format) of the service's database, pg_restore into a new database: every
 *   record there, sealed secrets readable with the same SECRETS_KEY.
 * - A base backup (pg_basebackup) with WAL archiving, then point-in-time recovery to a named
 *   restore point: what committed before the point is there, what committed after is not.
 *   The machine's shared cluster is never reconfigured or restarted: this runs a second,
 *   throwaway PostgreSQL instance (initdb, pg_ctl) on a free port, as the `postgres` user when the
 *   tests run as root (PostgreSQL refuses to run as root).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDatabase, PG_ADMIN_URL } from '../../scripts/lib/pgDatabase.ts';
import { freePort, runAdmin, tempDataDir } from '../helpers/server.ts';
import { startTestApp, type TestAccount } from '../helpers/testApp.ts';

const run = promisify(execFile);
/** The same keys before and after a restore: sealed secrets travel in the dump, their key does not. */
const KEYS = { SECRETS_KEY: randomBytes(32).toString('base64'), BANK_SECRET: randomBytes(32).toString('base64') };
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function seed(url: string): Promise<{ account: TestAccount; quoteIds: string[]; webhookId: string; close(): Promise<void> }> {
  const app = await startTestApp({ databaseUrl: url, env: KEYS });
  const account = await app.newAccount('Dumped Lending');
  const { data: hook } = await account.client.POST('/v1/webhooks', { body: { url: 'https://hooks.dumped.example/events', events: ['application.approved'] } });
  const quoteIds: string[] = [];
  for (let i = 0; i < 3; i++) quoteIds.push((await account.client.POST('/v1/quotes', { body: { amount: 200000 + i, term: 30 } })).data!.quoteId);
  return { account, quoteIds, webhookId: hook!.webhookId, close: () => app.close() };
}

/** Starts the service on `url` and checks what it serves to the account's key. */
async function serves(url: string, apiKey: string, present: string[], absent: string[] = [], webhookId?: string): Promise<void> {
  const app = await startTestApp({ databaseUrl: url, env: KEYS });
  try {
    const client = app.clientFor(apiKey);
    for (const quoteId of present) expect((await client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId } } })).response.status, quoteId).toBe(200);
    for (const quoteId of absent) expect((await client.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId } } })).response.status, quoteId).toBe(404);
    if (webhookId) {
      // Rotating keeps the old secret for the overlap: it opens the sealed value.
      const rotated = await client.POST('/v1/webhooks/{webhookId}/rotate-secret', { params: { path: { webhookId } } });
      expect(rotated.response.status, JSON.stringify(rotated.error)).toBe(200);
    }
  } finally {
    await app.close();
  }
}

describe('npm run admin -- backup on PostgreSQL', () => {
  it('refuses, pointing at pg_dump and the page that shows both procedures', async () => {
    const database = await createTempDatabase('mos_backup_cli');
    cleanups.push(() => database.drop());
    const dir = await tempDataDir('mos-backup-pg-');
    cleanups.push(() => dir.remove());
    const run = await runAdmin(['backup', '--to', path.join(dir.dataDir, 'x.mosbackup')], { dataDir: dir.dataDir, env: { DATABASE_URL: database.url } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/runs on PostgreSQL \(DATABASE_URL\): back it up with pg_dump.*docs\/operators\/backups\.md/);
  }, 30_000);
});

describe('pg_dump and pg_restore (small installs)', () => {
  it("restores the service's database into a new one, and the service serves every record from it", async () => {
    const source = await createTempDatabase('mos_dump_src');
    cleanups.push(() => source.drop());
    const seeded = await seed(source.url);
    await seeded.close();

    const work = await mkdtemp(path.join(os.tmpdir(), 'mos-pgdump-'));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const dump = path.join(work, 'mos.dump');
    // As docs/operators/backups.md writes them (DATABASE_URL of the service, then of the new database).
    await run('pg_dump', ['--format=custom', `--file=${dump}`, `--dbname=${source.url}`]);
    const target = `mos_dump_dst_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    const admin = new URL(PG_ADMIN_URL);
    await run('createdb', ['--host', admin.hostname, '--port', admin.port || '5432', '--username', admin.username, target]);
    const targetUrl = new URL(source.url);
    targetUrl.pathname = `/${target}`;
    cleanups.push(() => query(PG_ADMIN_URL, `DROP DATABASE IF EXISTS ${target} WITH (FORCE)`));
    await run('pg_restore', ['--no-owner', `--dbname=${targetUrl}`, dump]);

    await serves(targetUrl.toString(), seeded.account.apiKey, seeded.quoteIds, [], seeded.webhookId);
  }, 60_000);
});

/** The PostgreSQL 15 server programs (initdb, pg_ctl), which Debian keeps off PATH. */
async function serverBin(): Promise<string> {
  const { stdout } = await run('pg_config', ['--bindir']);
  return stdout.trim();
}

/** Runs a PostgreSQL program as the `postgres` user when this process is root (the server refuses root). */
async function asServerUser(program: string, args: string[]): Promise<string> {
  const isRoot = process.getuid?.() === 0;
  const { stdout } = isRoot ? await run('runuser', ['-u', 'postgres', '--', program, ...args]) : await run(program, args);
  return stdout;
}

async function ownedByServerUser(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o700);
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
}

describe('base backup with WAL archiving (point-in-time recovery)', () => {
  it('recovers to a named restore point: writes before it are there, writes after it are not', async () => {
    const bin = await serverBin();
    const root = await mkdtemp(path.join(os.tmpdir(), 'mos-pitr-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await ownedByServerUser(root);
    const primary = path.join(root, 'primary');
    const archive = path.join(root, 'archive');
    const base = path.join(root, 'base');
    const restored = path.join(root, 'restored');
    await ownedByServerUser(archive);

    // A primary configured as the page says: wal_level replica, archive_mode on, an archive_command.
    await asServerUser(path.join(bin, 'initdb'), ['-D', primary, '-A', 'trust', '-U', 'postgres']);
    const primaryPort = await freePort();
    await asServerUser('sh', [
      '-c',
      `cat >> ${primary}/postgresql.conf <<'EOF'
listen_addresses = '127.0.0.1'
port = ${primaryPort}
unix_socket_directories = '${root}'
wal_level = replica
archive_mode = on
archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'
EOF
echo 'host replication all 127.0.0.1/32 trust' >> ${primary}/pg_hba.conf`,
    ]);
    await asServerUser(path.join(bin, 'pg_ctl'), ['-D', primary, '-l', path.join(root, 'primary.log'), '-w', 'start']);
    cleanups.push(() => asServerUser(path.join(bin, 'pg_ctl'), ['-D', primary, '-w', '-m', 'immediate', 'stop']));
    const primaryAdmin = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
    await query(primaryAdmin, 'CREATE DATABASE mos');
    const url = `postgres://postgres@127.0.0.1:${primaryPort}/mos`;

    const seeded = await seed(url);
    await asServerUser(path.join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', base, '-Ft', '-z', '-X', 'fetch', '-c', 'fast']);
    // After the base backup: only the archived WAL brings this one back.
    const afterBase = (await seeded.account.client.POST('/v1/quotes', { body: { amount: 310000, term: 30 } })).data!.quoteId;
    await query(url, "SELECT pg_create_restore_point('before_mistake')");
    const afterTarget = (await seeded.account.client.POST('/v1/quotes', { body: { amount: 320000, term: 30 } })).data!.quoteId;
    const walfile = (await query<{ walfile: string }>(url, 'SELECT pg_walfile_name(pg_switch_wal()) AS walfile'))[0]!.walfile;
    for (let i = 0; i < 200 && !(await readdir(archive)).includes(walfile); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readdir(archive)).toContain(walfile);
    await seeded.close();
    await asServerUser(path.join(bin, 'pg_ctl'), ['-D', primary, '-w', '-m', 'fast', 'stop']);

    // The restore, as the page says: unpack, verify, restore_command + recovery target, recovery.signal, start.
    await ownedByServerUser(restored);
    await asServerUser('tar', ['-xzf', path.join(base, 'base.tar.gz'), '-C', restored]);
    await asServerUser(path.join(bin, 'pg_verifybackup'), ['-n', '-m', path.join(base, 'backup_manifest'), restored]);
    const restoredPort = await freePort();
    await asServerUser('sh', [
      '-c',
      `cat >> ${restored}/postgresql.conf <<'EOF'
port = ${restoredPort}
archive_mode = off
restore_command = 'cp ${archive}/%f %p'
recovery_target_name = 'before_mistake'
recovery_target_action = 'promote'
EOF
touch ${restored}/recovery.signal`,
    ]);
    await asServerUser(path.join(bin, 'pg_ctl'), ['-D', restored, '-l', path.join(root, 'restored.log'), '-w', 'start']);
    cleanups.push(() => asServerUser(path.join(bin, 'pg_ctl'), ['-D', restored, '-w', '-m', 'immediate', 'stop']));
    const restoredUrl = `postgres://postgres@127.0.0.1:${restoredPort}/mos`;
    for (let i = 0; i < 200; i++) {
      const recovering = (await query<{ recovering: boolean }>(restoredUrl, 'SELECT pg_is_in_recovery() AS recovering'))[0]!.recovering;
      if (!recovering) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await serves(restoredUrl, seeded.account.apiKey, [...seeded.quoteIds, afterBase], [afterTarget], seeded.webhookId);
  }, 120_000);
});
