/**
 * Bringing the audit chains' MACs under the current sealing key (src/store/auditAnchors.ts), on
 * each engine, as the store does at open and at `secrets rotate-key`: each record under an older
 * key the process holds is made again, and one whose old MAC does not hold keeps that it was moved
 * (what `audit verify` then names); one under a key not held is left as it is; chains recorded
 * before MACs existed are anchored once, while the migration's request is there, and a MAC removed
 * later is not made clean; a record another instance moved since it was read is not overwritten;
 * and the counts the operator's log shows say exactly which of these happened. A database at a
 * migration before MACs still opens, and its chains are anchored by the step that adds them.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anchorMac, type AnchorKind } from '../../src/domain/audit/anchors.ts';
import { GENESIS_HASH } from '../../src/domain/audit/chain.ts';
import { KEY_PURPOSES } from '../../src/domain/keys/derivedKeys.ts';
import { checkChainAnchors, reanchorAuditChains } from '../../src/store/auditAnchors.ts';
import { readChain } from '../../src/store/auditEvents.ts';
import { newSecretsKey, SecretKeyring, secretsKeyId } from '../../src/store/core/sealing.ts';
import type { OpenedStore } from '../../src/store/open.ts';
import { openPgStore } from '../../src/store/postgres/pgStore.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import type { SqlParams, Tx } from '../../src/store/store.ts';
import { onPostgres, testDatabase, type TempDatabase } from '../helpers/engine.ts';

const OLD = newSecretsKey();
const CURRENT = newSecretsKey();
const OLD_ID = secretsKeyId(OLD);
const CURRENT_ID = secretsKeyId(CURRENT);
const TABLES = new Set(['audit_chains', 'audit_anchor_backfill']);
const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'store', 'migrations', onPostgres() ? 'postgres' : 'sqlite');

const hash = (c: string) => c.repeat(64);

/** A store holding CURRENT as its sealing key and OLD as a previous one. */
async function openWithKeys(dataDir: string, database: TempDatabase | null, migrationsDir = MIGRATIONS): Promise<OpenedStore> {
  if (database) return openPgStore({ url: database.url, poolMax: 2, sealer: new SecretKeyring(CURRENT, [OLD]), migrationsDir });
  return openSqlJsStore({ dataDir, migrationsDir, secrets: { key: CURRENT.toString('base64'), previousKeys: [OLD.toString('base64')] } }) as Promise<OpenedStore>;
}

/** How a record's MAC is stored: made under the old or current key (over `over` when it was moved since), removed, or under a key not held. */
type MacSpec = { under: 'old' | 'current'; over?: number; brokenAt?: number } | { under: 'none' } | { under: 'unknown' };
interface RecordSpec {
  seq: number;
  mac: MacSpec;
}

function macOf(tx: Tx, accountId: string, kind: AnchorKind, seq: number, spec: MacSpec): { mac: string | null; brokenAt: number | null } {
  if (spec.under === 'none') return { mac: null, brokenAt: null };
  if (spec.under === 'unknown') return { mac: `v1:0123456789ab:${'e'.repeat(64)}`, brokenAt: null };
  const key = tx.sealer.purposeKey(KEY_PURPOSES.auditAnchor, spec.under === 'old' ? OLD_ID : CURRENT_ID)!;
  const covered = spec.over ?? seq;
  const brokenAt = spec.brokenAt ?? null;
  return { mac: anchorMac(key, accountId, kind, { seq: covered, hash: hash(String(covered % 10)) }, brokenAt), brokenAt };
}

/** Writes a chain row as a database at that point would hold it (hash of #n: its last digit, 64 times). */
async function putChain(store: OpenedStore, accountId: string, head: RecordSpec, pruned: RecordSpec): Promise<void> {
  await store.transaction(async (tx) => {
    const h = macOf(tx, accountId, 'head', head.seq, head.mac);
    const p = macOf(tx, accountId, 'pruned', pruned.seq, pruned.mac);
    await tx.run(
      'INSERT INTO audit_chains (account_id, last_seq, last_hash, head_mac, head_broken_at, pruned_seq, pruned_hash, pruned_mac, pruned_broken_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [accountId, head.seq, hash(String(head.seq % 10)), h.mac, h.brokenAt, pruned.seq, pruned.seq === 0 ? GENESIS_HASH : hash(String(pruned.seq % 10)), p.mac, p.brokenAt],
    );
  });
}

const reanchor = (store: OpenedStore) => store.transaction((tx) => reanchorAuditChains(tx, TABLES));

/** What `audit verify` finds of the chain's head and anchor (the head first), or null when both hold. */
async function anchorsOf(store: OpenedStore, accountId: string) {
  return store.read(async (db) => {
    const chain = (await readChain(db, accountId))!;
    return checkChainAnchors(db, accountId, chain.head, chain.anchor);
  });
}

const macs = (store: OpenedStore) =>
  store.read((db) => db.all<{ account_id: string; head_mac: string | null; pruned_mac: string | null }>('SELECT account_id, head_mac, pruned_mac FROM audit_chains ORDER BY account_id'));

describe('bringing the MACs under the current sealing key', () => {
  let dataDir: string;
  let database: TempDatabase | null = null;
  let store: OpenedStore;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-anchors-store-'));
    database = onPostgres() ? await testDatabase() : null;
    store = await openWithKeys(dataDir, database);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => store.transaction((tx) => tx.run('DELETE FROM audit_chains').then(() => tx.run('DELETE FROM audit_anchor_backfill'))));

  it('makes again each MAC under the old key, keeping a move found (or found before) in what it covers, and counts each', async () => {
    await putChain(store, 'acc-a-clean', { seq: 3, mac: { under: 'old' } }, { seq: 0, mac: { under: 'current' } });
    // The head was moved back from #4 to #3 in the database: its MAC still covers #4.
    await putChain(store, 'acc-b-moved', { seq: 3, mac: { under: 'old', over: 4 } }, { seq: 1, mac: { under: 'old' } });
    // The service found the head moved when it stood at #2, and moved it on since: its MAC covers that.
    await putChain(store, 'acc-c-found', { seq: 5, mac: { under: 'old', brokenAt: 2 } }, { seq: 0, mac: { under: 'current' } });
    await putChain(store, 'acc-d-current', { seq: 7, mac: { under: 'current' } }, { seq: 2, mac: { under: 'current' } });

    expect(await reanchor(store)).toEqual({ anchored: 0, reanchored: 4, foundMoved: 1, unverifiable: 0 });
    for (const row of await macs(store)) {
      expect(row.head_mac).toMatch(new RegExp(`^v1:${CURRENT_ID}:[0-9a-f]{64}$`));
      expect(row.pruned_mac).toMatch(new RegExp(`^v1:${CURRENT_ID}:[0-9a-f]{64}$`));
    }
    expect(await anchorsOf(store, 'acc-a-clean')).toBeNull();
    expect(await anchorsOf(store, 'acc-b-moved')).toEqual({ reason: 'anchor_moved_before', kind: 'head', seq: 3, brokenAt: 3 });
    expect(await anchorsOf(store, 'acc-c-found')).toEqual({ reason: 'anchor_moved_before', kind: 'head', seq: 5, brokenAt: 2 });
    expect(await anchorsOf(store, 'acc-d-current')).toBeNull();
    // Everything is under the current key now: nothing more to do.
    expect(await reanchor(store)).toEqual({ anchored: 0, reanchored: 0, foundMoved: 0, unverifiable: 0 });
  });

  it('a moved pruning anchor keeps the move; a record moved under the current key is left for verify to name', async () => {
    await putChain(store, 'acc-e', { seq: 6, mac: { under: 'current', over: 8 } }, { seq: 4, mac: { under: 'old', over: 2 } });
    expect(await reanchor(store)).toEqual({ anchored: 0, reanchored: 1, foundMoved: 1, unverifiable: 0 });
    expect(await anchorsOf(store, 'acc-e')).toEqual({ reason: 'anchor_moved', kind: 'head', seq: 6 });
    const chain = (await store.read((db) => readChain(db, 'acc-e')))!;
    expect(chain.anchor).toMatchObject({ seq: 4, brokenAt: 4, mac: expect.stringMatching(new RegExp(`^v1:${CURRENT_ID}:`)) });
    expect(chain.head.brokenAt).toBeNull();
  });

  it('leaves a MAC made under a key this process does not hold as it is, and counts it', async () => {
    await putChain(store, 'acc-f', { seq: 2, mac: { under: 'unknown' } }, { seq: 0, mac: { under: 'old' } });
    const before = (await macs(store))[0]!;
    expect(await reanchor(store)).toEqual({ anchored: 0, reanchored: 1, foundMoved: 0, unverifiable: 1 });
    const after = (await macs(store))[0]!;
    expect(after.head_mac).toBe(before.head_mac);
    expect(await anchorsOf(store, 'acc-f')).toEqual({ reason: 'anchor_key_unavailable', kind: 'head', seq: 2, keyId: '0123456789ab' });
  });

  it('anchors chains recorded before MACs existed once, while the migration asks for it; a MAC removed after is made again as moved', async () => {
    await putChain(store, 'acc-g-legacy', { seq: 4, mac: { under: 'none' } }, { seq: 1, mac: { under: 'none' } });
    await putChain(store, 'acc-h-old', { seq: 2, mac: { under: 'old' } }, { seq: 0, mac: { under: 'current' } });
    await store.transaction((tx) => tx.run("INSERT INTO audit_anchor_backfill (migration) VALUES ('019')"));

    expect(await reanchor(store)).toEqual({ anchored: 2, reanchored: 1, foundMoved: 0, unverifiable: 0 });
    expect(await anchorsOf(store, 'acc-g-legacy')).toBeNull();
    expect(await anchorsOf(store, 'acc-h-old')).toBeNull();
    expect(await store.read((db) => db.all('SELECT migration FROM audit_anchor_backfill'))).toEqual([]);

    // Removed in the database after that: the next pass makes it under the key, as moved where it stands.
    await store.transaction((tx) => tx.run("UPDATE audit_chains SET pruned_mac = NULL WHERE account_id = 'acc-g-legacy'"));
    expect(await reanchor(store)).toEqual({ anchored: 0, reanchored: 1, foundMoved: 1, unverifiable: 0 });
    expect(await anchorsOf(store, 'acc-g-legacy')).toEqual({ reason: 'anchor_moved_before', kind: 'pruned', seq: 1, brokenAt: 1 });
  });

  it('does not overwrite, nor count, a record another instance moved after it was read', async () => {
    await putChain(store, 'acc-i', { seq: 3, mac: { under: 'old' } }, { seq: 1, mac: { under: 'old' } });
    let theirs = '';
    const result = await store.transaction(async (tx) => {
      // Another instance appends to the chain between the read of the rows and the writes.
      const racing = new Proxy(tx, {
        get(target, prop) {
          if (prop === 'all') {
            return async (sql: string, params?: SqlParams) => {
              const rows = await target.all(sql, params);
              theirs = macOf(target, 'acc-i', 'head', 4, { under: 'current' }).mac!;
              await target.run("UPDATE audit_chains SET last_seq = 4, last_hash = ?, head_mac = ? WHERE account_id = 'acc-i'", [hash('4'), theirs]);
              return rows;
            };
          }
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      return reanchorAuditChains(racing, TABLES);
    });
    expect(result).toEqual({ anchored: 0, reanchored: 1, foundMoved: 0, unverifiable: 0 });
    const chain = (await store.read((db) => readChain(db, 'acc-i')))!;
    expect(chain.head).toEqual({ seq: 4, hash: hash('4'), mac: theirs, brokenAt: null });
    expect(await anchorsOf(store, 'acc-i')).toBeNull();
  });
});

describe('a database at a migration before the MACs', () => {
  it('opens as it did, and the step that adds them anchors its chains at the next open', async () => {
    const upTo018 = await mkdtemp(path.join(os.tmpdir(), 'mos-migrations-018-'));
    for (const file of await readdir(MIGRATIONS)) if (/^0(0\d|1[0-8])_/.test(file)) await copyFile(path.join(MIGRATIONS, file), path.join(upTo018, file));
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-store-019-'));
    const database = onPostgres() ? await testDatabase() : null;
    try {
      const before = await openWithKeys(dataDir, database, upTo018);
      try {
        await before.transaction((tx) =>
          tx.run('INSERT INTO audit_chains (account_id, last_seq, last_hash, pruned_seq, pruned_hash) VALUES (?, 0, ?, 0, ?)', ['acc-before', GENESIS_HASH, GENESIS_HASH]),
        );
      } finally {
        await before.close();
      }
      const after = await openWithKeys(dataDir, database);
      try {
        expect(await anchorsOf(after, 'acc-before')).toBeNull();
        expect((await macs(after))[0]).toMatchObject({ head_mac: expect.stringMatching(new RegExp(`^v1:${CURRENT_ID}:`)), pruned_mac: expect.stringMatching(new RegExp(`^v1:${CURRENT_ID}:`)) });
      } finally {
        await after.close();
      }
    } finally {
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
      await rm(upTo018, { recursive: true, force: true });
    }
  });
});
