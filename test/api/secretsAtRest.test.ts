/**
 * Secrets and data at rest: webhook signing secrets (current and rotated-out) and bank partner
 * credentials (and applicants' demographics, ./demographicsAtRest.test.ts) never appear in plain text in journal.log, snapshot.db or any other file of the data
 * directory, nor (PostgreSQL) in any row of the database; the directory is 0700 and every file in
 * it 0600; the sealing key rotates with an admin command (sql.js; on PostgreSQL the command says
 * how instances rotate it, see test/postgres/secretsKey.test.ts) and values stored before sealing
 * existed are sealed at the next start.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { findBankPartner } from '../../src/store/bankPartners.ts';
import { leasedDeliveries } from '../../src/store/outbox.ts';
import { webhookSecretContext } from '../../src/store/sealedColumns.ts';
import { findEndpoint } from '../../src/store/webhooks.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { openStore } from '../../src/store/open.ts';
import { onPostgres, postgresContents } from '../helpers/engine.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost', BANK_PARTNER_ALLOWED_HOSTS: '127.0.0.1' } });
  account = await app.newAccount();
});
afterAll(() => app.close());

/** Every regular file under `dir` with its bytes and mode. */
async function filesUnder(dir: string): Promise<Array<{ file: string; bytes: Buffer; mode: number }>> {
  const out: Array<{ file: string; bytes: Buffer; mode: number }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, bytes: await readFile(file), mode: (await stat(file)).mode & 0o777 });
  }
  return out;
}

/** What holds the data at rest: the data directory's files, and on PostgreSQL every row of the database too. */
async function atRest(of: TestApp): Promise<Array<{ file: string; bytes: Buffer }>> {
  const files = await filesUnder(of.dataDir);
  return of.engine === 'postgres' ? [...files, { file: 'the PostgreSQL database', bytes: await postgresContents(of.ctx.store) }] : files;
}

function leaks(files: Array<{ file: string; bytes: Buffer }>, secrets: string[]): string[] {
  const found: string[] = [];
  for (const { file, bytes } of files) {
    for (const secret of secrets) if (bytes.includes(Buffer.from(secret, 'utf8'))) found.push(`${path.basename(file)} holds ${secret.slice(0, 10)}…`);
  }
  return found;
}

describe('secrets at rest', () => {
  let current = '';
  let rotatedOut = '';
  let webhookId = '';
  let mortgageId = '';
  const credential = 'partner-credential-' + 'k'.repeat(40);
  const demographics: components['schemas']['DemographicsInput'] = { ethnicity: ['cuban'], race: ['samoan'], sex: 'female', age: 52, collectedOnVisualObservation: false };

  it('seals webhook secrets (current and rotated-out) and partner credentials in the journal and the snapshot (the database rows on PostgreSQL)', async () => {
    const created = await account.client.POST('/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['application.approved'] } });
    expect(created.response.status).toBe(201);
    webhookId = created.data!.webhookId;
    rotatedOut = created.data!.secret;
    const rotated = await account.client.POST('/v1/webhooks/{webhookId}/rotate-secret', { params: { path: { webhookId } } });
    expect(rotated.response.status).toBe(200);
    current = rotated.data!.secret;
    await runAdminCommand(app.ctx, 'bank-partner create', {
      name: 'Sealed Bank',
      connector: 'http',
      'base-url': 'http://127.0.0.1:9/verify/',
      credential,
    });
    // and a value that is not a secret but is sealed as one: an applicant's demographics
    const application = await account.client.POST('/v1/applications', { body: { applicant: { name: 'Ann Lee', amount: 200000 }, term: 30, demographics } });
    expect(application.response.status).toBe(201);
    mortgageId = application.data!.mortgageId;

    // the service still reads them: the listing shows the current secret's tail
    const shown = await account.client.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } });
    expect(JSON.stringify(shown.data)).toContain(current.slice(-4));

    const secrets = [current, rotatedOut, current.slice('whsec_'.length), rotatedOut.slice('whsec_'.length), credential];
    expect(leaks(await atRest(app), secrets)).toEqual([]); // journal.log, before any checkpoint
    await app.ctx.store.checkpoint();
    const files = await atRest(app);
    expect(files.map((f) => path.basename(f.file))).toContain(app.engine === 'postgres' ? 'the PostgreSQL database' : 'snapshot.db');
    expect(leaks(files, secrets)).toEqual([]);
    // and what is stored is sealed, not merely encoded
    const row = await app.ctx.store.read((db) => db.get<{ secret: string; previous_secret: string }>('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = ?', [webhookId]));
    expect(row!.secret).toMatch(/^sealed:v1:[0-9a-f]{12}:/);
    expect(row!.previous_secret).toMatch(/^sealed:v1:[0-9a-f]{12}:/);
  });

  it('keeps the data directory 0700 and every file in it 0600', async () => {
    expect((await stat(app.dataDir)).mode & 0o777).toBe(0o700);
    const files = await filesUnder(app.dataDir);
    // sql.js: the snapshot, journal, manifest, key file…; PostgreSQL: the key file (no SECRETS_KEY here) and whatever uploads left.
    expect(files.length).toBeGreaterThanOrEqual(app.engine === 'postgres' ? 1 : 4);
    expect(files.filter((f) => f.mode !== 0o600).map((f) => `${path.relative(app.dataDir, f.file)} ${f.mode.toString(8)}`)).toEqual([]);
  });

  it.runIf(onPostgres())('on PostgreSQL, secrets status shows the key the database records, and rotate-key says how instances rotate it instead', async () => {
    const status = await runAdminCommand(app.ctx, 'secrets status', {});
    expect(status).toMatchObject({ source: 'file', keyFile: path.join(app.dataDir, 'secrets.key'), sealedValues: 4 });
    expect(status.recordedKeyId).toBe(status.keyId);
    await expect(runAdminCommand(app.ctx, 'secrets rotate-key', {})).rejects.toThrow(/SECRETS_KEY_PREVIOUS .*SECRETS_KEY/);
    expect(await runAdminCommand(app.ctx, 'secrets status', {})).toEqual(status);
  });

  // On PostgreSQL: the test above, and the rotation through SECRETS_KEY in test/postgres/secretsKey.test.ts.
  it.skipIf(onPostgres())('rotates the sealing key with an admin command: every value re-sealed, the old key gone, deliveries still signed', async () => {
    const before = await runAdminCommand(app.ctx, 'secrets status', {});
    // two webhook secrets, a partner's credential, an applicant's demographics
    expect(before).toMatchObject({ source: 'file', sealedValues: 4 });
    const oldKeyFile = await readFile(path.join(app.dataDir, 'secrets.key'), 'utf8');
    const result = await runAdminCommand(app.ctx, 'secrets rotate-key', {});
    expect(result).toMatchObject({ previousKeyId: before.keyId, resealed: 4 });
    expect(result.keyId).not.toBe(before.keyId);
    expect(await readFile(path.join(app.dataDir, 'secrets.key'), 'utf8')).not.toBe(oldKeyFile);
    for (const { file, bytes } of await filesUnder(app.dataDir)) {
      expect(bytes.includes(Buffer.from(`sealed:v1:${String(before.keyId)}:`)), path.basename(file)).toBe(false);
      expect(bytes.includes(Buffer.from(oldKeyFile.trim())), path.basename(file)).toBe(false);
    }
    // what the dispatcher signs with opens under the new key (a delivery made and rolled back)
    let seen: Awaited<ReturnType<typeof leasedDeliveries>> = [];
    const now = new Date().toISOString();
    await app.ctx.store
      .transaction(async (tx) => {
        await tx.run('INSERT INTO webhook_events (id, account_id, type, is_test, payload, occurred_at) VALUES (?, ?, ?, 1, ?, ?)', [
          'evt-rotation-check', account.accountId, 'application.approved', '{}', now,
        ]);
        await tx.run(
          `INSERT INTO webhook_deliveries (webhook_id, event_id, account_id, state, attempts, next_attempt_at, lease_token, created_at, updated_at)
           VALUES (?, ?, ?, 'pending', 0, ?, 'lease-check', ?, ?)`,
          [webhookId, 'evt-rotation-check', account.accountId, now, now, now],
        );
        seen = await leasedDeliveries(tx, 'lease-check');
        throw new Error('roll back');
      })
      .catch((err: Error) => expect(err.message).toBe('roll back'));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ secret: current, previousSecret: rotatedOut });
    const shown = await account.client.GET('/v1/webhooks/{webhookId}', { params: { path: { webhookId } } });
    expect(JSON.stringify(shown.data)).toContain(current.slice(-4));
    // the demographics, re-sealed under the new key, read back the same
    const stored = await app.ctx.store.read((db) => db.get<{ v: string }>('SELECT demographics_json AS v FROM application_demographics WHERE mortgage_id = ?', [mortgageId]));
    expect(stored!.v.startsWith(`sealed:v1:${String(result.keyId)}:`)).toBe(true);
    const read = await account.client.GET('/v1/applications/{mortgageId}/demographics', { params: { path: { mortgageId } } });
    expect(read.data!.demographics).toEqual(demographics);
  });
});

describe('secrets stored before sealing existed', () => {
  it('are sealed at the next start, and no plain copy stays in the journal or snapshot (the database on PostgreSQL)', async () => {
    const scratch = await startTestApp();
    const owner = await scratch.newAccount();
    const dataDir = scratch.dataDir;
    const plain = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    // what an older version wrote: the secret as is
    await scratch.ctx.store.transaction((tx) =>
      tx.run(
        `INSERT INTO webhook_endpoints (id, account_id, url, description, enabled, secret, created_at, updated_at)
         VALUES ('whk-01legacy00000000000000000', ?, 'https://example.test/hook', '', 1, ?, ?, ?)`,
        [owner.accountId, plain, new Date().toISOString(), new Date().toISOString()],
      ),
    );
    await scratch.ctx.store.close();
    const { config } = scratch.ctx;
    const reopened = (
      scratch.engine === 'postgres' ? await openStore({ dataDir, database: config.database, secrets: config.secrets }) : await openSqlJsStore({ dataDir })
    ) as typeof scratch.ctx.store;
    try {
      const stored = await reopened.read((db) => db.get<{ secret: string }>("SELECT secret FROM webhook_endpoints WHERE id = 'whk-01legacy00000000000000000'"));
      expect(stored!.secret).toMatch(/^sealed:v1:/);
      scratch.ctx.store = reopened;
      expect(leaks(await atRest(scratch), [plain])).toEqual([]);
    } finally {
      await reopened.close();
      scratch.ctx.store = reopened; // already closed; close() is idempotent (and drops the PostgreSQL database)
      await scratch.close();
    }
  });
});

describe('a sealed secret is bound to its row (the sealing\'s additional data)', () => {
  it("an endpoint's sealed signing secret copied into another endpoint's row does not open as that endpoint's; nor a partner's credential as another partner's", async () => {
    const endpoint = async (path: string) => {
      const { data, response } = await account.client.POST('/v1/webhooks', { body: { url: `http://127.0.0.1:9${path}`, events: ['application.approved'] } });
      expect(response.status).toBe(201);
      return data!;
    };
    const first = await endpoint('/bound-first');
    const second = await endpoint('/bound-second');
    const sealedSecret = async (id: string) =>
      (await app.ctx.store.read((db) => db.get<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE id = ?', [id])))!.secret;
    const firstSealed = await sealedSecret(first.webhookId);
    const secondSealed = await sealedSecret(second.webhookId);
    await app.ctx.store.read(async (db) => {
      expect(db.sealer.open(firstSealed, webhookSecretContext(first.webhookId))).toBe(first.secret);
      expect(() => db.sealer.open(firstSealed, webhookSecretContext(second.webhookId))).toThrow();
    });

    // The first endpoint's sealed secret, copied into the second's row, is not read as the second's.
    await app.ctx.store.transaction((tx) => tx.run('UPDATE webhook_endpoints SET secret = ? WHERE id = ?', [firstSealed, second.webhookId]));
    try {
      await expect(app.ctx.store.read((db) => findEndpoint(db, account.accountId, second.webhookId))).rejects.toThrow();
      expect((await app.ctx.store.read((db) => findEndpoint(db, account.accountId, first.webhookId)))!.secretTail).toBe(first.secret.slice(-4));
    } finally {
      await app.ctx.store.transaction((tx) => tx.run('UPDATE webhook_endpoints SET secret = ? WHERE id = ?', [secondSealed, second.webhookId]));
    }
    expect((await app.ctx.store.read((db) => findEndpoint(db, account.accountId, second.webhookId)))!.secretTail).toBe(second.secret.slice(-4));

    // The same for bank partners' credentials.
    const partner = async (name: string) =>
      (await runAdminCommand(app.ctx, 'bank-partner create', { name, connector: 'http', 'base-url': 'http://127.0.0.1:9/verify/', credential: `credential-of-${name.replaceAll(' ', '-')}` })).partnerId as string;
    const bankA = await partner('Bound Bank A');
    const bankB = await partner('Bound Bank B');
    const sealedCredential = async (id: string) =>
      (await app.ctx.store.read((db) => db.get<{ c: string }>('SELECT credential_encrypted AS c FROM bank_partners WHERE id = ?', [id])))!.c;
    const credentialA = await sealedCredential(bankA);
    const credentialB = await sealedCredential(bankB);
    await app.ctx.store.transaction((tx) => tx.run('UPDATE bank_partners SET credential_encrypted = ? WHERE id = ?', [credentialA, bankB]));
    try {
      await expect(app.ctx.store.read((db) => findBankPartner(db, bankB))).rejects.toThrow();
      expect((await app.ctx.store.read((db) => findBankPartner(db, bankA)))!.credentialSealed).not.toBeNull();
    } finally {
      await app.ctx.store.transaction((tx) => tx.run('UPDATE bank_partners SET credential_encrypted = ? WHERE id = ?', [credentialB, bankB]));
    }
  });
});
