/**
 * The audit log's hash chain on each engine: `audit verify` passes an intact chain and names the
 * first broken entry when one is changed or deleted straight in the database; the store refuses
 * to update an entry; retention deletes the oldest entries and the chain stays verifiable from
 * the anchor it leaves; appends racing on one chain (several instances on PostgreSQL) never fork it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { pruneExpiredAuditEvents, recordAuditNow, verifyAuditChain } from '../../src/services/audit.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open.ts';
import { dialectOf } from '../../src/store/store.ts';
import { onPostgres, testDatabase } from '../helpers/engine.ts';
import { createAccountWithCli, runAdmin, tempDataDir } from '../helpers/server.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { someChanges } from '../helpers/auditChanges.ts';

const DAY = 24 * 3_600_000;
const clock = manualClock(Date.parse('2026-11-21T18:30:00.000Z'));
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ clock });
});
afterAll(() => app?.close());


/** The account's live entries in chain order: [seq, id]. */
async function chainOf(accountId: string): Promise<Array<{ seq: number; id: string }>> {
  const rows = await app.ctx.store.read((db) => db.all<{ seq: number; id: string }>('SELECT seq, id FROM audit_events WHERE account_id = ? ORDER BY seq', [accountId]));
  return rows.map((r) => ({ seq: Number(r.seq), id: r.id }));
}

/** What an intruder with the database's rights does first: remove the append-only trigger. */
async function dropAppendOnlyTrigger(): Promise<void> {
  const sql = dialectOf(app.ctx.store) === 'postgres' ? 'DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events' : 'DROP TRIGGER IF EXISTS audit_events_append_only';
  await app.ctx.store.transaction((tx) => tx.run(sql));
}

function verify(accountId?: string) {
  return runAdminCommand(app.ctx, 'audit verify', accountId ? { account: accountId } : {});
}

describe('audit verify', () => {
  it('passes intact chains, live and test, and counts their entries', async () => {
    const account = await app.newAccount('Intact Lending');
    await someChanges(account, clock, 3);
    await account.test.POST('/v1/api-keys', { body: { name: 'Test key', role: 'member' } });
    // account.created, the member key of newAccount, three keys; one test key.
    expect(await verify(account.accountId)).toEqual({ ok: true, chains: 2, entriesChecked: 6 });
    expect(await verify()).toMatchObject({ ok: true });
    await expect(verify('key-01jdz8k3n4q2v6x9b7c5t1r0aa')).rejects.toThrow(/--account must be an account id/);
  });

  it('the store refuses to update an entry', async () => {
    const account = await app.newAccount('Locked Lending');
    await expect(app.ctx.store.transaction((tx) => tx.run("UPDATE audit_events SET action = 'x' WHERE account_id = ?", [account.accountId]))).rejects.toThrow(/append-only/);
  });

  it('names an entry whose content was changed in the database', async () => {
    const account = await app.newAccount('Changed Lending');
    await someChanges(account, clock, 3);
    const [, , third] = await chainOf(account.accountId);
    await dropAppendOnlyTrigger();
    await app.ctx.store.transaction((tx) => tx.run("UPDATE audit_events SET actor_name = 'Someone else' WHERE id = ?", [third!.id]));
    await expect(verify(account.accountId)).rejects.toThrow(new RegExp(`${account.accountId} is broken at entry ${third!.id} \\(#3\\): content changed`));
    const result = await verifyAuditChain(app.ctx, account.accountId);
    expect(result).toMatchObject({ ok: false, entriesChecked: 2, broken: { reason: 'content_changed', auditEventId: third!.id, seq: 3 } });
    // Every chain at once names it too, and only it.
    await expect(verify()).rejects.toThrow(/content changed/);
  });

  it('names the entry after one deleted from the database as missing its predecessor, and a deleted newest entry', async () => {
    const account = await app.newAccount('Deleted Lending');
    await someChanges(account, clock, 4);
    const entries = await chainOf(account.accountId);
    await app.ctx.store.transaction((tx) => tx.run('DELETE FROM audit_events WHERE id = ?', [entries[2]!.id]));
    await expect(verify(account.accountId)).rejects.toThrow(new RegExp(`entry ${entries[3]!.id} \\(#4\\): missing predecessor`));

    const newest = await app.newAccount('Newest Deleted');
    await someChanges(newest, clock, 1);
    const last = (await chainOf(newest.accountId)).at(-1)!;
    await app.ctx.store.transaction((tx) => tx.run('DELETE FROM audit_events WHERE id = ?', [last.id]));
    await expect(verify(newest.accountId)).rejects.toThrow(/the newest entry \(#3\) is missing/);
  });
});

describe('retention', () => {
  it('deletes entries past AUDIT_RETENTION_DAYS, oldest first, and the rest still verifies from the anchor', async () => {
    const account = await app.newAccount('Kept Lending');
    await someChanges(account, clock, 2);
    const old = await chainOf(account.accountId);
    clock.advance((app.ctx.config.auditRetentionDays + 1) * DAY);
    await someChanges(account, clock, 2);
    expect(await pruneExpiredAuditEvents(app.ctx)).toBeGreaterThanOrEqual(old.length);
    const kept = await chainOf(account.accountId);
    expect(kept.map((e) => e.seq)).toEqual([old.length + 1, old.length + 2]);
    expect(await verify(account.accountId)).toMatchObject({ ok: true, entriesChecked: 2 });
    const { data } = await account.client.GET('/v1/audit-events');
    expect(data!.data.map((e) => e.sequence)).toEqual([old.length + 2, old.length + 1]);
    // Nothing more is due: a second run deletes nothing.
    expect(await pruneExpiredAuditEvents(app.ctx)).toBe(0);

    // The oldest kept entry deleted by hand is not retention: the anchor no longer leads to the next.
    await app.ctx.store.transaction((tx) => tx.run('DELETE FROM audit_events WHERE id = ?', [kept[0]!.id]));
    await expect(verify(account.accountId)).rejects.toThrow(new RegExp(`entry ${kept[1]!.id} \\(#${kept[1]!.seq}\\): missing predecessor`));
  });
});

describe('concurrency', () => {
  it('appends racing on one chain each get their own place in it (on PostgreSQL several instances at once)', async () => {
    const account = await app.newAccount('Busy Lending');
    // The live chain has entries already; the test environment's has none: its first entries race to make its head.
    for (const chain of [account.accountId, `${account.accountId}.test`]) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => recordAuditNow(app.ctx, { accountId: chain, action: 'webhook.testSent', target: { type: 'webhook', id: `whk-${i}` } })),
      );
      const entries = await chainOf(chain);
      expect(entries.length).toBeGreaterThanOrEqual(20);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
    }
    expect(await verify(account.accountId)).toMatchObject({ ok: true, chains: 2 });
  });
});

describe('npm run admin -- audit verify', () => {
  it('exits 0 on an intact chain and 2 naming the entry changed in the database', async () => {
    const dir = await tempDataDir('mos-audit-');
    const database = onPostgres() ? await testDatabase() : null;
    const env: Record<string, string> = database ? { DATABASE_URL: database.url } : {};
    try {
      const { accountId } = await createAccountWithCli(dir.dataDir, 'Cli Lending', 'ops@cli.test', env);
      await runAdmin(['key', 'create', '--account', accountId, '--role', 'member'], { dataDir: dir.dataDir, env });
      const intact = await runAdmin(['audit', 'verify', '--account', accountId, '--json'], { dataDir: dir.dataDir, env });
      expect(intact.code, intact.stderr).toBe(0);
      expect(JSON.parse(intact.stdout)).toEqual({ ok: true, chains: 2, entriesChecked: 2 });

      const config = loadConfig({ DATA_DIR: dir.dataDir, ...env });
      const store = await openStore({ dataDir: dir.dataDir, database: config.database, secrets: config.secrets });
      let changed = '';
      try {
        const [first] = await store.read((db) => db.all<{ id: string }>('SELECT id FROM audit_events WHERE account_id = ? ORDER BY seq', [accountId]));
        changed = first!.id;
        const drop = dialectOf(store) === 'postgres' ? 'DROP TRIGGER audit_events_append_only ON audit_events' : 'DROP TRIGGER audit_events_append_only';
        await store.transaction(async (tx) => {
          await tx.run(drop);
          await tx.run("UPDATE audit_events SET change = NULL WHERE id = ?", [changed]);
        });
      } finally {
        await store.close();
      }
      const broken = await runAdmin(['audit', 'verify'], { dataDir: dir.dataDir, env });
      expect(broken.code).toBe(2);
      expect(broken.stdout).toBe('');
      expect(broken.stderr).toContain(`error: audit chain of ${accountId} is broken at entry ${changed} (#1): content changed`);
    } finally {
      await database?.drop();
      await dir.remove();
    }
  });
});
