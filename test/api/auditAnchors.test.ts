/**
 * The MACs of each audit chain's head and pruning anchor, on each engine: a writer of the database
 * who deletes entries and moves the head or the anchor to match (the two reproductions of the
 * probe) is found by `audit verify`, which names the record moved; so is a MAC removed, or a chain's
 * row deleted from under its entries; the service's next move of a moved record does not launder
 * it. Chains recorded before MACs existed are anchored once, at the next open; a rotation of the
 * sealing key makes every MAC again under the new key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/commands.ts';
import type { AppContext } from '../../src/context.ts';
import { pruneExpiredAuditEvents, recordAuditNow, verifyAuditChain } from '../../src/services/audit.ts';
import { rotateSecretsKey } from '../../src/services/secretsKey.ts';
import { openStore, type OpenedStore } from '../../src/store/open.ts';
import { onPostgres, testDatabase, type TempDatabase } from '../helpers/engine.ts';
import { loadConfig } from '../../src/config.ts';
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


type Entry = { seq: number; id: string; hash: string };

async function chainOf(store: OpenedStore | AppContext['store'], accountId: string): Promise<Entry[]> {
  const rows = await store.read((db) => db.all<Entry>('SELECT seq, id, hash FROM audit_events WHERE account_id = ? ORDER BY seq', [accountId]));
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

function verify(accountId?: string) {
  return runAdminCommand(app.ctx, 'audit verify', accountId ? { account: accountId } : {});
}

describe('a writer of the database who also moves the head or the pruning anchor', () => {
  it('deletes the newest entry and moves the head to the one before: verify names the head as moved, and the next append does not hide it', async () => {
    const account = await app.newAccount('Head Moved Lending');
    await someChanges(account, clock, 2);
    const entries = await chainOf(app.ctx.store, account.accountId);
    const [before, newest] = entries.slice(-2) as [Entry, Entry];
    await app.ctx.store.transaction(async (tx) => {
      await tx.run('DELETE FROM audit_events WHERE id = ?', [newest.id]);
      await tx.run('UPDATE audit_chains SET last_seq = ?, last_hash = ? WHERE account_id = ?', [before.seq, before.hash, account.accountId]);
    });
    await expect(verify(account.accountId)).rejects.toThrow(
      new RegExp(`audit chain of ${account.accountId} is broken at its head \\(#${before.seq}\\): moved in the database`),
    );
    expect(await verifyAuditChain(app.ctx, account.accountId)).toMatchObject({ ok: false, broken: { reason: 'anchor_moved', kind: 'head', seq: before.seq } });
    await expect(verify()).rejects.toThrow(/its head .*moved in the database/);

    // The service appends after the moved head: the chain holds again, but the head's new MAC keeps the move.
    await someChanges(account, clock, 1);
    await expect(verify(account.accountId)).rejects.toThrow(
      new RegExp(`its head \\(#${before.seq + 1}\\): had been moved in the database when it stood at #${before.seq}`),
    );
  });

  it('deletes the oldest two entries and moves the pruning anchor to match: verify names the pruning anchor as moved, and retention does not hide it', async () => {
    const account = await app.newAccount('Anchor Moved Lending');
    await someChanges(account, clock, 2);
    const [, second] = (await chainOf(app.ctx.store, account.accountId)) as [Entry, Entry];
    await app.ctx.store.transaction(async (tx) => {
      await tx.run('DELETE FROM audit_events WHERE account_id = ? AND seq <= ?', [account.accountId, second.seq]);
      await tx.run('UPDATE audit_chains SET pruned_seq = ?, pruned_hash = ? WHERE account_id = ?', [second.seq, second.hash, account.accountId]);
    });
    await expect(verify(account.accountId)).rejects.toThrow(
      new RegExp(`audit chain of ${account.accountId} is broken at its pruning anchor \\(#2\\): moved in the database`),
    );
    expect(await verifyAuditChain(app.ctx, account.accountId)).toMatchObject({ ok: false, broken: { reason: 'anchor_moved', kind: 'pruned', seq: 2 } });

    // Retention later moves the anchor past what is kept: the new MAC keeps the earlier move.
    clock.advance((app.ctx.config.auditRetentionDays + 1) * DAY);
    await someChanges(account, clock, 1);
    await pruneExpiredAuditEvents(app.ctx);
    await expect(verify(account.accountId)).rejects.toThrow(/its pruning anchor \(#\d+\): had been moved in the database when it stood at #2/);
  });

  it('removes a MAC, or replaces it with another chain\'s: verify says so', async () => {
    const removed = await app.newAccount('Mac Removed Lending');
    await app.ctx.store.transaction((tx) => tx.run('UPDATE audit_chains SET head_mac = NULL WHERE account_id = ?', [removed.accountId]));
    await expect(verify(removed.accountId)).rejects.toThrow(/its head \(#\d+\): its MAC was removed in the database/);

    const copied = await app.newAccount('Mac Copied Lending');
    const other = await app.newAccount('Mac Source Lending');
    await app.ctx.store.transaction((tx) =>
      tx.run('UPDATE audit_chains SET pruned_mac = (SELECT pruned_mac FROM audit_chains WHERE account_id = ?) WHERE account_id = ?', [other.accountId, copied.accountId]),
    );
    await expect(verify(copied.accountId)).rejects.toThrow(/its pruning anchor \(#0\): moved in the database/);
  });

  it('deletes a chain\'s row from under its entries: verify, of that account or of every chain, names its head as deleted', async () => {
    const account = await app.newAccount('Row Deleted Lending');
    await app.ctx.store.transaction((tx) => tx.run('DELETE FROM audit_chains WHERE account_id = ?', [account.accountId]));
    await expect(verify(account.accountId)).rejects.toThrow(/its head: the chain's head row was deleted from the database/);
    await expect(verify()).rejects.toThrow(new RegExp(`audit chain of ${account.accountId} is broken at its head: the chain's head row was deleted`));
  });
});

describe('anchoring over the store\'s life', () => {
  const K1 = 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=';
  const K2 = 'AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=';
  let dir: { dataDir: string; remove(): Promise<void> };
  let database: TempDatabase | null = null;

  beforeAll(async () => {
    dir = await tempDataDir('mos-anchors-');
    database = onPostgres() ? await testDatabase() : null;
  });
  afterAll(async () => {
    await database?.drop();
    await dir?.remove();
  });

  /** The store of this test's data (PostgreSQL: the key from SECRETS_KEY; sql.js: the key file, unless `key` is given). */
  function open(secrets: { key?: string; previousKeys?: string[] } = {}): Promise<OpenedStore> {
    const fromEnv = onPostgres() && secrets.key === undefined ? { key: K1 } : secrets;
    return openStore({ dataDir: dir.dataDir, database: { url: database?.url ?? null, poolMax: 2 }, secrets: fromEnv });
  }
  const ctxOf = (store: OpenedStore) => ({ store, clock: { now: () => new Date() } }) as unknown as AppContext;
  const record = (store: OpenedStore, accountId: string) =>
    recordAuditNow(ctxOf(store), { accountId, action: 'webhook.testSent', target: { type: 'webhook', id: 'whk-1' } });
  const macs = (store: OpenedStore, accountId: string) =>
    store.read((db) => db.get<{ head_mac: string | null; pruned_mac: string | null }>('SELECT head_mac, pruned_mac FROM audit_chains WHERE account_id = ?', [accountId]));

  it('anchors chains recorded before MACs existed once, at the next open; a MAC removed later is not made again', async () => {
    let store = await open();
    try {
      await record(store, 'acc-legacy');
      await record(store, 'acc-legacy');
      // As a database from before MACs existed: no MACs, and the migration's one-time request.
      await store.transaction(async (tx) => {
        await tx.run("UPDATE audit_chains SET head_mac = NULL, pruned_mac = NULL WHERE account_id = 'acc-legacy'");
        await tx.run("INSERT INTO audit_anchor_backfill (migration) VALUES ('019')");
      });
    } finally {
      await store.close();
    }
    store = await open();
    try {
      expect(await macs(store, 'acc-legacy')).toMatchObject({ head_mac: expect.stringMatching(/^v1:/), pruned_mac: expect.stringMatching(/^v1:/) });
      expect(await verifyAuditChain(ctxOf(store), 'acc-legacy')).toMatchObject({ ok: true, entriesChecked: 2 });
      expect(await store.read((db) => db.all('SELECT * FROM audit_anchor_backfill'))).toEqual([]);
      await store.transaction((tx) => tx.run("UPDATE audit_chains SET head_mac = NULL WHERE account_id = 'acc-legacy'"));
    } finally {
      await store.close();
    }
    store = await open();
    try {
      expect(await verifyAuditChain(ctxOf(store), 'acc-legacy')).toMatchObject({ ok: false, firstBroken: expect.stringMatching(/^its head \(#2\): (its MAC was removed|had been moved)/) });
    } finally {
      await store.close();
    }
  });

  it('a rotation of the sealing key makes every MAC again under the new key, keeping a move found before it', async () => {
    let store = await open();
    let oldKeyId = '';
    try {
      await record(store, 'acc-rotated');
      await record(store, 'acc-moved');
      await record(store, 'acc-moved');
      const [first] = await chainOf(store, 'acc-moved');
      await store.transaction(async (tx) => {
        await tx.run("DELETE FROM audit_events WHERE account_id = 'acc-moved' AND seq = 2");
        await tx.run("UPDATE audit_chains SET last_seq = 1, last_hash = ? WHERE account_id = 'acc-moved'", [first!.hash]);
      });
      oldKeyId = (await macs(store, 'acc-rotated'))!.head_mac!.split(':')[1]!;
      if (!onPostgres()) expect(await rotateSecretsKey(ctxOf(store))).toMatchObject({ previousKeyId: oldKeyId });
    } finally {
      await store.close();
    }
    // On PostgreSQL the key rotates by starting with SECRETS_KEY (new) and SECRETS_KEY_PREVIOUS (old); then without the old one.
    if (onPostgres()) await (await open({ key: K2, previousKeys: [K1] })).close();
    store = await open(onPostgres() ? { key: K2 } : {});
    try {
      const head = (await macs(store, 'acc-rotated'))!.head_mac!;
      expect(head.split(':')[1]).not.toBe(oldKeyId);
      expect(await verifyAuditChain(ctxOf(store), 'acc-rotated')).toMatchObject({ ok: true, entriesChecked: 1 });
      expect(await verifyAuditChain(ctxOf(store), 'acc-moved')).toMatchObject({
        ok: false,
        firstBroken: expect.stringMatching(/^its head \(#1\): had been moved in the database when it stood at #1 \(found when the service next moved it/),
      });
    } finally {
      await store.close();
    }
  });

  it.skipIf(onPostgres())('without the sealing key its MACs were made under, verify says it could not check them (sql.js: another SECRETS_KEY)', async () => {
    const store = await open({ key: 'AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=' });
    try {
      await expect(runAdminCommand(ctxOf(store), 'audit verify', {})).rejects.toThrow(
        /audit chain of acc-rotated was not checked: its head \(#1\): cannot be checked: its MAC was made under the sealing key of id [0-9a-f]{12}, which this process does not hold/,
      );
    } finally {
      await store.close();
    }
  });
});

describe('npm run admin -- audit verify', () => {
  it('exits 2 naming the head when the newest entry was deleted and the head moved back to the one before', async () => {
    const dir = await tempDataDir('mos-anchors-cli-');
    const database = onPostgres() ? await testDatabase() : null;
    const env: Record<string, string> = database ? { DATABASE_URL: database.url } : {};
    try {
      const { accountId } = await createAccountWithCli(dir.dataDir, 'Cli Anchor Lending', 'ops@anchor.test', env);
      await runAdmin(['key', 'create', '--account', accountId, '--role', 'member'], { dataDir: dir.dataDir, env });
      const config = loadConfig({ DATA_DIR: dir.dataDir, ...env });
      const store = await openStore({ dataDir: dir.dataDir, database: config.database, secrets: config.secrets });
      try {
        const [first, newest] = (await chainOf(store, accountId)) as [Entry, Entry];
        await store.transaction(async (tx) => {
          await tx.run('DELETE FROM audit_events WHERE id = ?', [newest.id]);
          await tx.run('UPDATE audit_chains SET last_seq = ?, last_hash = ? WHERE account_id = ?', [first.seq, first.hash, accountId]);
        });
      } finally {
        await store.close();
      }
      const broken = await runAdmin(['audit', 'verify', '--account', accountId], { dataDir: dir.dataDir, env });
      expect(broken.code).toBe(2);
      expect(broken.stderr).toContain(`error: audit chain of ${accountId} is broken at its head (#1): moved in the database`);
    } finally {
      await database?.drop();
      await dir.remove();
    }
  });
});
