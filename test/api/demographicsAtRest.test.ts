/**
 * Applicants' demographic information at rest, on each engine: stored sealed (AES-256-GCM, as
 * secrets are: src/store/core/sealing.ts), so neither the row, the journal and snapshot (sql.js)
 * nor any row of the database (PostgreSQL) holds what the applicant gave, while the admin's
 * GET …/demographics and the HMDA register still read it; a sealed value is bound to its
 * application; rows stored in plain JSON before sealing existed (on PostgreSQL, in the JSON column
 * migration 024 turns into TEXT) are sealed at the next open and read back the same. Rotation of
 * the key is in ./secretsAtRest.test.ts (sql.js) and test/postgres/secretsKey.test.ts.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/createContext.ts';
import { newId } from '../../src/ids.ts';
import { createLogger } from '../../src/log.ts';
import { larRecordOf } from '../../src/domain/hmda/layout.ts';
import { createAccount } from '../../src/services/accounts.ts';
import { findDemographics } from '../../src/store/applicationDemographics.ts';
import { insertApplication } from '../../src/store/applications.ts';
import { newSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { openPgStore } from '../../src/store/postgres/pgStore.ts';
import { applicationDemographicsContext } from '../../src/store/sealedColumns.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import type { Store } from '../../src/store/store.ts';
import { onPostgres, postgresContents, testDatabase } from '../helpers/engine.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { storedApplication } from '../helpers/storedApplication.ts';
import { DEMOGRAPHIC_MARKERS, MARKED_DEMOGRAPHICS } from '../helpers/demographicMarkers.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  account = await app.newAccount();
});
afterAll(() => app?.close());

const DEMOGRAPHICS = MARKED_DEMOGRAPHICS;
const MARKERS = DEMOGRAPHIC_MARKERS;

const BODY: components['schemas']['ApplicationCreateRequest'] = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
  loanPurpose: 'purchase',
  demographics: DEMOGRAPHICS,
};

const idPath = (mortgageId: string) => ({ params: { path: { mortgageId } } });

/** An application with the demographics, submitted (and so decided: approved, in this year's register). */
async function submittedApplication(owner: TestAccount, body = BODY): Promise<string> {
  const { data, response } = await owner.client.POST('/v1/applications', { body });
  expect(response.status).toBe(201);
  const submitted = await owner.client.POST('/v1/applications/{mortgageId}/submit', idPath(data!.mortgageId));
  expect(submitted.response.status).toBe(200);
  return data!.mortgageId;
}

async function storedValue(store: Pick<Store, 'read'>, mortgageId: string): Promise<string> {
  const row = await store.read((db) => db.get<{ v: string }>('SELECT demographics_json AS v FROM application_demographics WHERE mortgage_id = ?', [mortgageId]));
  return row!.v;
}

async function larRows(owner: TestAccount): Promise<{ status: number; rows: string[][] }> {
  const response = await app.fetch(`/v1/exports/hmda-lar?year=${new Date().getUTCFullYear()}`, { headers: { Authorization: `Bearer ${owner.apiKey}` } });
  const text = await response.text();
  return { status: response.status, rows: response.status === 200 ? text.split('\n').slice(1, -1).map((line) => line.split('|')) : [] };
}

/** What holds the data at rest: every file of the data directory, and on PostgreSQL every row of the database. */
async function atRest(dataDir: string, store: Pick<Store, 'read'>): Promise<Array<{ file: string; bytes: Buffer }>> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const entry of await readdir(dataDir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push({ file: entry.name, bytes: await readFile(path.join(entry.parentPath, entry.name)) });
  }
  if (onPostgres()) out.push({ file: 'the PostgreSQL database', bytes: await postgresContents(store) });
  return out;
}

const holding = (files: Array<{ file: string; bytes: Buffer }>, words: string[]) =>
  files.flatMap(({ file, bytes }) => words.filter((word) => bytes.includes(Buffer.from(word))).map((word) => `${file} holds ${word}`));

describe('demographics at rest', () => {
  it('are stored sealed, holding none of the answers, in the row, the journal and snapshot (every row on PostgreSQL); GET …/demographics and the register still read them', async () => {
    const mortgageId = await submittedApplication(account);
    const stored = await storedValue(app.ctx.store, mortgageId);
    expect(stored).toMatch(/^sealed:v1:[0-9a-f]{12}:/);
    for (const marker of [...MARKERS, '117', 'race', 'ethnicity']) expect(stored.includes(marker), marker).toBe(false);
    expect(holding(await atRest(app.dataDir, app.ctx.store), MARKERS)).toEqual([]); // sql.js: journal.log, before a checkpoint
    await app.ctx.store.checkpoint();
    expect(holding(await atRest(app.dataDir, app.ctx.store), MARKERS)).toEqual([]);

    const { data } = await account.client.GET('/v1/applications/{mortgageId}/demographics', idPath(mortgageId));
    expect(data!.demographics).toEqual(DEMOGRAPHICS);
    const { status, rows } = await larRows(account);
    expect(status).toBe(200);
    expect(rows).toHaveLength(1);
    const row = larRecordOf(rows[0]!);
    expect([row.eth1, row.eth2, row.race1, row.race2, row.sex, row.age]).toEqual(['12', '13', '42', '43', '6', '117']);
  });

  it("one application's sealed value copied into another's row does not open there: its reads fail (500) rather than give the other applicant's answers", async () => {
    const owner = await app.newAccount('Bound Lending');
    const first = await submittedApplication(owner);
    const given: components['schemas']['DemographicsInput'] = { ethnicity: ['not_hispanic_or_latino'], race: ['white'], sex: 'female', age: 41, collectedOnVisualObservation: false };
    const second = await submittedApplication(owner, { ...BODY, demographics: given });
    const firstSealed = await storedValue(app.ctx.store, first);
    const secondSealed = await storedValue(app.ctx.store, second);
    await app.ctx.store.read(async (db) => {
      expect(JSON.parse(db.sealer.open(firstSealed, applicationDemographicsContext(first)))).toEqual(DEMOGRAPHICS);
      expect(() => db.sealer.open(firstSealed, applicationDemographicsContext(second))).toThrow();
    });

    await app.ctx.store.transaction((tx) => tx.run('UPDATE application_demographics SET demographics_json = ? WHERE mortgage_id = ?', [firstSealed, second]));
    try {
      const moved = await owner.client.GET('/v1/applications/{mortgageId}/demographics', idPath(second));
      expect(moved.response.status).toBe(500);
      expect(JSON.stringify(moved.error)).not.toContain('guamanian');
      const register = await larRows(owner);
      expect(register.status).toBe(500);
      // The first application's own row still opens.
      expect((await owner.client.GET('/v1/applications/{mortgageId}/demographics', idPath(first))).data!.demographics).toEqual(DEMOGRAPHICS);
    } finally {
      await app.ctx.store.transaction((tx) => tx.run('UPDATE application_demographics SET demographics_json = ? WHERE mortgage_id = ?', [secondSealed, second]));
    }
    expect((await owner.client.GET('/v1/applications/{mortgageId}/demographics', idPath(second))).data!.demographics).toEqual(given);
    expect((await larRows(owner)).rows.map((r) => larRecordOf(r).race1).sort()).toEqual(['42', '5']);
  });
});

describe('demographics stored before sealing existed', () => {
  it('are sealed at the next open (PostgreSQL: once migration 024 made the JSON column TEXT), no plain copy stays, and they read back the same', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mos-demographics-'));
    const database = onPostgres() ? await testDatabase() : null;
    const keyring = new SecretKeyring(newSecretsKey());
    const open = () => (database ? openPgStore({ url: database.url, poolMax: 2, sealer: keyring }) : openSqlJsStore({ dataDir: dir }));
    let store: Awaited<ReturnType<typeof open>> | null = null;
    try {
      store = await open();
      const ctx = createContext({ config: loadConfig({ LOG_LEVEL: 'silent' }), store, clock: { now: () => new Date() }, log: createLogger('silent') });
      const { account: owner } = await createAccount(ctx, { name: 'Older Lending', email: 'ops@older.test' });
      const mortgageId = newId('mtg');
      const at = new Date().toISOString();
      // What an older version stored: the demographics as JSON text; on PostgreSQL in the json
      // column of 021, with 024 not yet applied.
      await store.transaction(async (tx) => {
        await insertApplication(tx, storedApplication({ mortgageId, accountId: owner.accountId, createdAt: at, updatedAt: at }));
        if (database) {
          await tx.run('ALTER TABLE application_demographics ALTER COLUMN demographics_json TYPE JSON USING demographics_json::json');
          await tx.run("DELETE FROM schema_migrations WHERE version = '024'");
        }
        await tx.run('INSERT INTO application_demographics (mortgage_id, account_id, demographics_json, updated_at) VALUES (?, ?, ?, ?)', [mortgageId, owner.accountId, JSON.stringify(DEMOGRAPHICS), at]);
      });
      const columnType = () =>
        store!.read(async (db) => (await db.get<{ t: string }>("SELECT data_type AS t FROM information_schema.columns WHERE table_name = 'application_demographics' AND column_name = 'demographics_json'"))!.t);
      if (database) expect(await columnType()).toBe('json');
      await store.close();
      store = null;

      store = await open();
      if (database) expect(await columnType()).toBe('text');
      const stored = await storedValue(store, mortgageId);
      expect(stored).toMatch(/^sealed:v1:/);
      expect(await store.read((db) => findDemographics(db, owner.accountId, mortgageId))).toEqual({ demographics: DEMOGRAPHICS, updatedAt: expect.any(String) });
      expect(holding(await atRest(dir, store), MARKERS)).toEqual([]);
      // Sealed once: the next open finds it current and leaves it as it is.
      await store.close();
      store = await open();
      expect(await storedValue(store, mortgageId)).toBe(stored);
    } finally {
      await store?.close();
      await database?.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
