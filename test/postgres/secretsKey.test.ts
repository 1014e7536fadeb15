/**
 * The sealing key on a database several instances share (src/store/postgres/secretsKey.ts): the
 * database records the id of the key secrets are sealed under, an instance whose keys cannot open
 * what is sealed refuses to start and says how to fix it, and a rotation through
 * SECRETS_KEY / SECRETS_KEY_PREVIOUS moves the record and re-seals every secret.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/createContext.ts';
import { createLogger } from '../../src/log.ts';
import { createAccount } from '../../src/services/accounts.ts';
import { createApplication } from '../../src/services/applications.ts';
import { createWebhook, rotateWebhookSecret } from '../../src/services/webhooks.ts';
import { findDemographics } from '../../src/store/applicationDemographics.ts';
import { SecretsKeyMismatchError } from '../../src/store/core/errors.ts';
import { encodeSecretsKey, newSecretsKey, SecretKeyring, secretsKeyId, type SecretsKeyOptions } from '../../src/store/core/sealing.ts';
import { openStore, type OpenedStore } from '../../src/store/open.ts';
import { webhookSecretContext } from '../../src/store/sealedColumns.ts';
import { findEndpoint } from '../../src/store/webhooks.ts';
import { postgresContents, testDatabase, type TempDatabase } from '../helpers/engine.ts';
import { startService, tempDataDir } from '../helpers/server.ts';

const [OLD, NEW, OTHER] = [newSecretsKey(), newSecretsKey(), newSecretsKey()];
const [OLD_ID, NEW_ID, OTHER_ID] = [OLD, NEW, OTHER].map(secretsKeyId);
const env = (key: Buffer, ...previous: Buffer[]): SecretsKeyOptions => ({ key: encodeSecretsKey(key), previousKeys: previous.map(encodeSecretsKey) });

const cleanups: Array<() => Promise<unknown>> = [];
let dataDir: string;
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-secrets-key-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
});

async function freshDatabase(): Promise<TempDatabase> {
  const database = await testDatabase();
  cleanups.push(() => database.drop());
  return database;
}

/** Opens the database as an instance (or the admin command line) does, with these keys. */
async function open(database: TempDatabase, secrets: SecretsKeyOptions, dir = dataDir): Promise<OpenedStore> {
  const store = await openStore({ dataDir: dir, database: { url: database.url, poolMax: 2 }, secrets });
  cleanups.push(() => store.close());
  return store;
}

async function recordedKeyId(store: OpenedStore): Promise<string | undefined> {
  return (await store.read((db) => db.get<{ key_id: string }>('SELECT key_id FROM secrets_key')))?.key_id;
}

/** The key ids the stored webhook secrets (current and previous) and applicants' demographics are sealed under. */
async function sealedUnder(store: OpenedStore): Promise<string[]> {
  const rows = await store.read((db) => db.all<{ secret: string; previous_secret: string | null }>('SELECT secret, previous_secret FROM webhook_endpoints'));
  const demographics = await store.read((db) => db.all<{ v: string }>('SELECT demographics_json AS v FROM application_demographics'));
  const values = [...rows.flatMap((r) => [r.secret, r.previous_secret]), ...demographics.map((r) => r.v)];
  return [...new Set(values.filter((v) => v !== null).map((v) => v.split(':')[2]!))].sort();
}

const DEMOGRAPHICS: components['schemas']['DemographicsInput'] = { ethnicity: ['mexican'], race: ['korean'], sex: 'male', age: 29, collectedOnVisualObservation: false };

/**
 * An account with a webhook endpoint whose secret was rotated once (a current and a previous
 * sealed secret), and an application with the applicant's demographics (sealed too).
 */
async function storeSecrets(store: OpenedStore): Promise<{ accountId: string; webhookId: string; mortgageId: string }> {
  const ctx = createContext({ config: loadConfig({ LOG_LEVEL: 'silent', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' }), store, clock: { now: () => new Date() }, log: createLogger('silent') });
  const { account } = await createAccount(ctx, { name: 'Sealed Lending', email: 'ops@sealed.test' });
  const { webhook } = await createWebhook(ctx, account.accountId, { url: 'http://127.0.0.1:9/hook', events: ['application.approved'] });
  await rotateWebhookSecret(ctx, account.accountId, webhook.webhookId);
  const application = await createApplication(ctx, account.accountId, { applicant: { name: 'Ann Lee', amount: 200000 }, term: 30, demographics: DEMOGRAPHICS });
  return { accountId: account.accountId, webhookId: webhook.webhookId, mortgageId: application.mortgageId };
}

describe('one sealing key per database', () => {
  it('the first instance records the id of its key, a fingerprint: the key itself is nowhere in the database', async () => {
    const database = await freshDatabase();
    const store = await open(database, env(OLD));
    await storeSecrets(store);
    expect(await recordedKeyId(store)).toBe(OLD_ID);
    const contents = await postgresContents(store);
    for (const form of [OLD.toString('base64'), OLD.toString('hex'), OLD.toString('base64url')]) expect(contents.includes(form)).toBe(false);
  });

  it('an instance with another SECRETS_KEY refuses to start, naming the key it needs and the fix; one with the same key starts', async () => {
    const database = await freshDatabase();
    await open(database, env(OLD)); // nothing sealed yet: the record alone decides
    const refused = open(database, env(OTHER));
    await expect(refused).rejects.toBeInstanceOf(SecretsKeyMismatchError);
    await expect(refused).rejects.toThrow(`sealed under the key of id ${OLD_ID}, and its key (SECRETS_KEY) has id ${OTHER_ID}`);
    await expect(refused).rejects.toThrow('set SECRETS_KEY to the key the other instances use');
    const again = await open(database, env(OLD));
    expect(await recordedKeyId(again)).toBe(OLD_ID);
  });

  it('instances starting together with the same key all start, and record it once', async () => {
    const database = await freshDatabase();
    const stores = await Promise.all([open(database, env(OLD)), open(database, env(OLD)), open(database, env(OLD))]);
    const rows = await stores[0]!.read((db) => db.all<{ key_id: string }>('SELECT key_id FROM secrets_key'));
    expect(rows).toEqual([{ key_id: OLD_ID }]);
  });

  it('a rotation (SECRETS_KEY new, SECRETS_KEY_PREVIOUS old) records the new id and re-seals every secret; then the old key alone is refused and the new one alone starts', async () => {
    const database = await freshDatabase();
    const before = await open(database, env(OLD));
    const { accountId, webhookId, mortgageId } = await storeSecrets(before);
    expect(await sealedUnder(before)).toEqual([OLD_ID]);

    const rotating = await open(database, env(NEW, OLD));
    expect(await recordedKeyId(rotating)).toBe(NEW_ID);
    expect(await sealedUnder(rotating)).toEqual([NEW_ID]);

    await expect(open(database, env(OLD))).rejects.toThrow(`sealed under the key of id ${NEW_ID}, and its key (SECRETS_KEY) has id ${OLD_ID}`);
    const after = await open(database, env(NEW));
    const endpoint = await after.read((db) => findEndpoint(db, accountId, webhookId)); // opens the re-sealed secret
    expect(endpoint?.webhookId).toBe(webhookId);
    expect((await after.read((db) => findDemographics(db, accountId, mortgageId)))?.demographics).toEqual(DEMOGRAPHICS);
  });

  it('an instance without a key that some stored secret still needs is refused, and told to add it to SECRETS_KEY_PREVIOUS', async () => {
    const database = await freshDatabase();
    const store = await open(database, env(NEW));
    const { webhookId } = await storeSecrets(store);
    // A secret sealed under the old key after the rotation (by an instance not yet restarted, say).
    const stale = new SecretKeyring(OLD).seal('whsec_left-behind', webhookSecretContext(webhookId));
    await store.transaction((tx) => tx.run('UPDATE webhook_endpoints SET previous_secret = ? WHERE id = ?', [stale, webhookId]));

    const refused = open(database, env(NEW));
    await expect(refused).rejects.toThrow(`still sealed under the key of id ${OLD_ID}, and its key (SECRETS_KEY) has id ${NEW_ID}`);
    await expect(refused).rejects.toThrow('Add that key to SECRETS_KEY_PREVIOUS');
    const healed = await open(database, env(NEW, OLD));
    expect(await sealedUnder(healed)).toEqual([NEW_ID]);
    await open(database, env(NEW));
  });

  it('a database whose secrets were sealed before the key was recorded admits only keys that open them', async () => {
    const database = await freshDatabase();
    const store = await open(database, env(OLD));
    await storeSecrets(store);
    await store.transaction((tx) => tx.run('DELETE FROM secrets_key'));
    await expect(open(database, env(OTHER))).rejects.toThrow(`still sealed under the key of id ${OLD_ID}`);
    expect(await recordedKeyId(store)).toBeUndefined();
    await open(database, env(OLD));
    expect(await recordedKeyId(store)).toBe(OLD_ID);
  });
});

describe('the service', () => {
  it('started without SECRETS_KEY beside instances that have one, exits with a message that names the fix', async () => {
    const database = await freshDatabase();
    await open(database, env(OLD));
    const dir = await tempDataDir('mos-secrets-key-');
    cleanups.push(dir.remove);
    const started = startService({ dataDir: dir.dataDir, env: { DATABASE_URL: database.url, LOG_LEVEL: 'warn' } });
    await expect(started).rejects.toThrow(/exited/);
    const message = await started.catch((err: Error) => err.message);
    expect(message).toContain(`sealed under the key of id ${OLD_ID}, and its key (the key file ${path.join(dir.dataDir, 'secrets.key')}, as SECRETS_KEY is unset)`);
    expect(message).toContain('Every instance on one PostgreSQL database needs the same SECRETS_KEY');
  });
});
