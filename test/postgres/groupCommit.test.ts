/**
 * Group commit of autocommit INSERTs on PostgreSQL (src/store/postgres/groupCommit.ts): concurrent
 * quotes share multi-row INSERTs, each caller answered only once its row committed; a row PostgreSQL
 * refuses fails its own caller only; units that hold a connection while their INSERT waits for a
 * group cannot starve the group of one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { insertAccount } from '../../src/store/accounts.ts';
import { decodeSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { InsertGroups } from '../../src/store/postgres/groupCommit.ts';
import { openPgStore, type PgStore } from '../../src/store/postgres/pgStore.ts';
import { StatementSender } from '../../src/store/postgres/statements.ts';
import { findQuote, insertQuote, type QuoteRecord } from '../../src/store/quotes.ts';
import { autocommit } from '../../src/store/store.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';

const sealer = new SecretKeyring(decodeSecretsKey('BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=', 'SECRETS_KEY'));
const T0 = '2026-11-21T18:30:00.000Z';
let database: TempDatabase;
const stores: PgStore[] = [];
let accountId: string;

async function open(poolMax: number): Promise<PgStore> {
  const store = await openPgStore({ url: database.url, poolMax, sealer });
  stores.push(store);
  return store;
}

beforeAll(async () => {
  database = await testDatabase();
  accountId = newId('acc');
  const store = await open(2);
  await store.transaction((tx) => insertAccount(tx, { accountId, name: 'Group Lending', email: 'ops@group.test', currency: 'USD', createdAt: T0 }));
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await database.drop();
});

function quote(quoteId = newId('qte')): QuoteRecord {
  return {
    quoteId,
    amount: 350000,
    term: 30,
    currency: 'USD',
    propertyValue: 437500,
    creditScore: 742,
    interestRate: 6.5,
    apr: 6.611,
    monthlyPayment: 2212.24,
    numberOfPayments: 360,
    finalPayment: 2209.89,
    totalInterest: 446404.05,
    totalOfPayments: 796404.05,
    amountFinanced: 346005,
    financeCharge: 450399.05,
    ltv: 80,
    fees: [{ name: 'origination', amount: 3500, prepaidFinanceCharge: true }],
    lockPeriodDays: 30,
    createdAt: T0,
    expiresAt: '2026-12-21T18:30:00.000Z',
  };
}

describe('group commit of autocommit INSERTs', () => {
  it('200 concurrent quotes: each readable once its call resolved, carried by far fewer statements than quotes', async () => {
    const store = await open(4);
    const reader = await open(2);
    const before = store.stats();
    const quotes = Array.from({ length: 200 }, () => quote());
    await Promise.all(
      quotes.map(async (q) => {
        await autocommit(store, (tx) => insertQuote(tx, accountId, q));
        // Answered only after its commit: another pool sees it at once.
        expect(await reader.read((db) => findQuote(db, accountId, q.quoteId))).toMatchObject({ quoteId: q.quoteId, amount: 350000, fees: q.fees });
      }),
    );
    const after = store.stats();
    const statements = after.statements - before.statements;
    expect(statements).toBeLessThan(200 / 2); // each INSERT alone would be 200
    expect(after.roundTrips - before.roundTrips).toBe(statements);
    expect(after.groupCommit.groupedRows - before.groupCommit.groupedRows).toBeGreaterThan(0);
    expect(after.groupCommit.groupStatements - before.groupCommit.groupStatements).toBeLessThan(after.groupCommit.groupedRows - before.groupCommit.groupedRows);
    expect(after.lsn - before.lsn).toBe(200);
  });

  it('a row PostgreSQL refuses in a group fails its own caller only; the rest of the group commits', async () => {
    const store = await open(4);
    const taken = quote();
    await autocommit(store, (tx) => insertQuote(tx, accountId, taken));
    const before = store.stats().groupCommit;
    // The first goes alone (nothing in flight); the others wait for it and leave as one group, the duplicate among them.
    const rows = [quote(), quote(), quote(), quote(taken.quoteId), quote(), quote()];
    const outcomes = await Promise.allSettled(rows.map((q) => autocommit(store, (tx) => insertQuote(tx, accountId, q))));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    const after = store.stats().groupCommit;
    expect(after.groupsSplit - before.groupsSplit).toBe(1);
    for (const [i, q] of rows.entries()) {
      if (i === 3) continue;
      expect(await store.read((db) => findQuote(db, accountId, q.quoteId))).toBeDefined();
    }
    // The one stored under the duplicate id is still the first one.
    expect((await store.read((db) => findQuote(db, accountId, taken.quoteId)))?.createdAt).toBe(taken.createdAt);
  });

  it('units holding a connection while their INSERT waits for a group do not starve the group (pool of 2, 30 units)', async () => {
    const store = await open(2);
    const quotes = Array.from({ length: 30 }, () => quote());
    await Promise.all(
      quotes.map((q) =>
        autocommit(store, async (tx) => {
          await tx.get('SELECT 1 AS one'); // takes a pooled connection for this unit
          await insertQuote(tx, accountId, q);
          return tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM quotes WHERE id = ?', [q.quoteId]);
        }),
      ),
    ).then((counts) => expect(counts.map((c) => c?.n)).toEqual(quotes.map(() => 1)));
  });

  it('groups only a plain one-row INSERT of placeholders, with as many parameters as it names', () => {
    const groups = new InsertGroups(new StatementSender(sealer), () => Promise.reject(new Error('not used')));
    const plain = 'INSERT INTO t (a, b) VALUES (?, ?)';
    expect(groups.lane(plain, [1, 2])).toMatchObject({ width: 2 });
    expect(groups.lane(plain, [1])).toBeUndefined();
    // A value the driver cannot bind fails its own statement, never a group.
    expect(groups.lane(plain, [1, undefined as unknown as null])).toBeUndefined();
    expect(groups.lane('INSERT INTO t (a, b) VALUES (?, ?) RETURNING a', [1, 2])).toBeUndefined();
    expect(groups.lane('INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO NOTHING', [1, 2])).toBeUndefined();
    expect(groups.lane("INSERT INTO t (a, b) VALUES (?, 'x')", [1])).toBeUndefined();
    expect(groups.lane('UPDATE t SET a = ? WHERE b = ?', [1, 2])).toBeUndefined();
    // Bound by PostgreSQL's 65,535 parameters as well as by rows.
    const wide = `INSERT INTO t (${Array.from({ length: 5000 }, (_, i) => `c${i}`).join(', ')}) VALUES (${Array.from({ length: 5000 }, () => '?').join(', ')})`;
    expect(groups.lane(wide, Array.from({ length: 5000 }, () => 0))?.maxRows).toBe(13);
  });
});
