/**
 * The audit log with several instances on one PostgreSQL database: changes of one account made
 * through both at once each take their own place in the account's chain (the head row's lock),
 * so the chain never forks and `audit verify` passes, whichever instance checks it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let database: TempDatabase;
let a: TestApp;
let b: TestApp;
let account: TestAccount;

beforeAll(async () => {
  database = await testDatabase();
  const env = { SECRETS_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=' };
  a = await startTestApp({ databaseUrl: database.url, env });
  b = await startTestApp({ databaseUrl: database.url, env });
  account = await a.newAccount('Two Instances Lending');
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

it('changes made through two instances at once all land in one unforked chain', async () => {
  const viaA = a.clientFor(account.apiKey);
  const viaB = b.clientFor(account.apiKey);
  const made = await Promise.all(
    Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? viaA : viaB).POST('/v1/api-keys', { body: { name: `Racing key ${i}`, role: 'member' } })),
  );
  expect(made.map((m) => m.response.status)).toEqual(made.map(() => 201));
  const { data } = await viaB.GET('/v1/audit-events', { params: { query: { action: 'apiKey.created', limit: 100 } } });
  // The member key newAccount made, and the 24.
  expect(data!.data).toHaveLength(25);
  const sequences = data!.data.map((e) => e.sequence).sort((x, y) => x - y);
  expect(new Set(sequences).size).toBe(sequences.length);
  expect(await runAdminCommand(a.ctx, 'audit verify', { account: account.accountId })).toMatchObject({ ok: true });
  expect(await runAdminCommand(b.ctx, 'audit verify', {})).toMatchObject({ ok: true });
});
