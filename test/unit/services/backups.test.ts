/**
 * The backup service in process (the command line's `backup`, `backup verify` and `restore` run it
 * in a child process, out of a mutation run's sight): the key files a backup carries, and the rule
 * for an HMAC the loaded keys cannot check, with the answer naming why.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { BackupInvalidError, KeyNotInFileError, restoreFromBackup, takeBackup, verifyBackup } from '../../../src/services/backups.ts';
import { newSecretsKey, SecretKeyring } from '../../../src/store/core/sealing.ts';
import { readBackupFile, writeBackupFile } from '../../../src/store/sqljs/backupFile.ts';
import { openSqlJsStore, type SqlJsStore } from '../../../src/store/sqljs/sqljsStore.ts';

let work: string;
let dataDir: string;
let store: SqlJsStore;
let n = 0;
const fresh = () => path.join(work, `f${++n}`);
const logged: Array<[string, unknown, string]> = [];

/** What takeBackup reads of the context: the clock, the data directory, the bank secret's source, the log. */
const ctx = (bankSecret: string | null = null) =>
  ({
    clock: { now: () => new Date('2026-12-07T10:00:00.000Z') },
    config: { dataDir, bank: { secret: bankSecret } },
    log: { info: (fields: unknown, msg: string) => logged.push(['info', fields, msg]), warn: (fields: unknown, msg: string) => logged.push(['warn', fields, msg]) },
  }) as unknown as AppContext;

const keyFile = () => path.join(dataDir, 'secrets.key');
const options = (extra: { keyFile?: string | null; acceptUnauthenticated?: boolean; secrets?: object } = {}) => ({
  dataDir,
  secrets: extra.secrets ?? {},
  keyFile: extra.keyFile ?? null,
  acceptUnauthenticated: extra.acceptUnauthenticated ?? false,
});

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'backups-service-'));
  dataDir = path.join(work, 'data');
  store = await openSqlJsStore({ dataDir, secrets: {} });
});
afterAll(async () => {
  await store.close();
  await rm(work, { recursive: true, force: true });
});

describe('takeBackup', () => {
  it('takes the database and, with the key asked for, the key file and the bank secret file when there is one', async () => {
    const plain = await takeBackup(ctx(), store, fresh(), false);
    expect(plain).toMatchObject({ lsn: store.stats().lsn, includesKey: false, documents: 0, skippedDocuments: [], createdAt: '2026-12-07T10:00:00.000Z', hmacKeyId: store.backupHmacKey().keyId });
    expect(logged.at(-1)).toEqual(['info', { file: plain.file, lsn: plain.lsn, sha256: plain.sha256, hmacKeyId: plain.hmacKeyId, includesKey: false, documents: 0 }, 'backup taken']);
    expect(logged.filter(([level]) => level === 'warn')).toEqual([]); // nothing was skipped: nothing to warn of
    // Without --include-key the key never travels with the data it opens.
    expect((await readBackupFile(plain.file, null)).header.entries.map((e) => e.name)).toEqual(['snapshot.db']);

    // No bank secret file yet: a key backup leaves it out, and it is no skipped document.
    const withKey = await takeBackup(ctx(), store, fresh(), true);
    expect(withKey).toMatchObject({ includesKey: true, skippedDocuments: [], documents: 0 });
    expect((await verifyBackup(withKey.file, options())).includesKey).toBe(true);
    const into = fresh();
    await restoreFromBackup(withKey.file, into, options());
    expect((await readdir(into)).sort()).toEqual(['manifest.json', 'secrets.key', 'snapshot.db']);
    expect(await readFile(path.join(into, 'secrets.key'), 'utf8')).toBe(await readFile(keyFile(), 'utf8'));

    await writeFile(path.join(dataDir, 'bank-secret.key'), 'the bank secret\n');
    const withBank = await takeBackup(ctx(), store, fresh(), true);
    const bankInto = fresh();
    await restoreFromBackup(withBank.file, bankInto, options());
    expect(await readFile(path.join(bankInto, 'bank-secret.key'), 'utf8')).toBe('the bank secret\n');
    // A bank secret given in the environment is not a file to carry.
    const envBank = await takeBackup(ctx('from the environment'), store, fresh(), true);
    const envInto = fresh();
    await restoreFromBackup(envBank.file, envInto, options());
    expect(await readdir(envInto)).not.toContain('bank-secret.key');
    await rm(path.join(dataDir, 'bank-secret.key'));
    // A bank secret file that is there but cannot be read fails the backup instead of leaving it out.
    await mkdir(path.join(dataDir, 'bank-secret.key'));
    const unreadable = fresh();
    await expect(takeBackup(ctx(), store, unreadable, true)).rejects.toThrow(/EISDIR/);
    await expect(readFile(unreadable)).rejects.toThrow(/ENOENT/);
    await rm(path.join(dataDir, 'bank-secret.key'), { recursive: true });
  });

  it('leaves out a document deleted between the copy of the database and the reading of its file, naming it', async () => {
    const kept = `doc-${'0'.repeat(25)}k`;
    const gone = `doc-${'0'.repeat(25)}g`;
    await mkdir(path.join(dataDir, 'documents'), { recursive: true });
    await writeFile(path.join(dataDir, 'documents', kept), '%PDF-1.4 kept');
    // The copy named both documents; one file was deleted before it was read.
    const real = store.backupImage.bind(store);
    const racing = Object.assign(Object.create(store) as SqlJsStore, {
      backupImage: async <T>(alsoRead: (db: never) => Promise<T>) => ({ ...(await real(alsoRead as never)), read: [kept, gone] as T }),
    });
    logged.length = 0;
    const taken = await takeBackup(ctx(), racing, fresh(), false);
    expect(taken).toMatchObject({ documents: 1, skippedDocuments: [gone] });
    expect(logged[0]).toEqual(['warn', { skippedDocuments: [gone] }, 'backup: documents deleted while it was taken are not in it']);
    expect(logged[1]).toMatchObject(['info', { documents: 1 }, 'backup taken']);
    expect((await readBackupFile(taken.file, null)).header.entries.map((e) => e.name)).toEqual(['snapshot.db', `documents/${kept}`]);
    await rm(path.join(dataDir, 'documents', kept));
  });

  it('refuses to carry a key that comes from SECRETS_KEY, writing nothing', async () => {
    const dir = await mkdtemp(path.join(work, 'env-key-'));
    const envStore = await openSqlJsStore({ dataDir: path.join(dir, 'data'), secrets: { key: newSecretsKey().toString('base64') } });
    try {
      const to = path.join(dir, 'backup');
      await expect(takeBackup(ctx(), envStore, to, true)).rejects.toThrow(new KeyNotInFileError());
      expect(new KeyNotInFileError().message).toBe(
        'the sealing key comes from SECRETS_KEY, not a key file: keep SECRETS_KEY with your backups yourself, and take the backup without --include-key',
      );
      expect(new KeyNotInFileError().name).toBe('KeyNotInFileError');
      expect(await readdir(dir)).toEqual(['data']);
    } finally {
      await envStore.close();
    }
  });
});

describe('a backup whose HMAC the loaded keys cannot check', () => {
  let signed: string;
  let unsigned: string;
  let legacy: string;
  beforeAll(async () => {
    signed = (await takeBackup(ctx(), store, fresh(), false)).file;
    // The same content written without a key (the bytes of a signed one, re-written unsigned).
    const read = await readBackupFile(signed, null);
    unsigned = fresh();
    await writeBackupFile(unsigned, { lsn: read.header.lsn, createdAt: read.header.createdAt, includesKey: false }, read.header.entries.map((e, i) => ({ kind: e.kind, name: e.name, read: async () => read.contents[i]! })), null);
    const covered = Buffer.concat([
      Buffer.from('MOSBACKUP\n'),
      Buffer.from(`${JSON.stringify({ format: 1, engine: 'sqljs', lsn: read.header.lsn, createdAt: read.header.createdAt, includesKey: false, entries: [{ kind: 'database', name: 'snapshot.db', bytes: read.contents[0]!.length }] })}\n`),
      read.contents[0]!,
    ]);
    legacy = fresh();
    await writeFile(legacy, Buffer.concat([covered, Buffer.from(`{"sha256":"${createHash('sha256').update(covered).digest('hex')}"}\n`)]));
  });

  it('is verified with the sealing key, and the answer sums up the backup', async () => {
    const checked = await verifyBackup(signed, options());
    expect(checked).toEqual({
      file: signed,
      format: 2,
      lsn: store.stats().lsn,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      createdAt: '2026-12-07T10:00:00.000Z',
      includesKey: false,
      documents: 0,
      hmac: `verified (sealing key ${store.backupHmacKey().keyId})`,
    });
    const into = fresh();
    expect(await restoreFromBackup(signed, into, options())).toEqual({ dataDir: into, ...checked });
  });

  it('is refused when it has none and a key is loaded, unless accepted, naming the first format', async () => {
    const why = 'the file has none (written without a key)';
    await expect(verifyBackup(unsigned, options())).rejects.toThrow(
      new BackupInvalidError(`${unsigned} is not a usable backup: its HMAC cannot be checked: ${why}. Give the key it was made with (--key-file), or, knowing where the file comes from, --accept-unauthenticated. Nothing was restored.`),
    );
    expect((await verifyBackup(unsigned, options({ acceptUnauthenticated: true }))).hmac).toBe(`not checked (accepted with --accept-unauthenticated): ${why}`);
    expect((await verifyBackup(legacy, options({ acceptUnauthenticated: true }))).hmac).toBe(
      'not checked (accepted with --accept-unauthenticated): the file has none (a backup of the first format, written before backups had one)',
    );
    const into = fresh();
    await expect(restoreFromBackup(unsigned, into, options())).rejects.toThrow(BackupInvalidError);
    await expect(readdir(into)).rejects.toThrow(/ENOENT/);
  });

  it('is refused when made with a key not loaded, naming the key and where the loaded ones come from', async () => {
    const other = path.join(work, 'other.key');
    await writeFile(other, newSecretsKey().toString('base64'));
    await expect(verifyBackup(signed, options({ keyFile: other }))).rejects.toThrow(
      `its HMAC cannot be checked: it was made with sealing key ${store.backupHmacKey().keyId}, which is not loaded (keys from ${other})`,
    );
    const env = newSecretsKey().toString('base64');
    expect((await verifyBackup(signed, options({ secrets: { key: env }, acceptUnauthenticated: true }))).hmac).toBe(
      `not checked (accepted with --accept-unauthenticated): it was made with sealing key ${store.backupHmacKey().keyId}, which is not loaded (keys from SECRETS_KEY)`,
    );
    expect(new SecretKeyring(Buffer.from(env, 'base64')).primaryKeyId).not.toBe(store.backupHmacKey().keyId);
  });

  it('is not checked when no key is loaded at all, and says so', async () => {
    const elsewhere = { ...options(), dataDir: path.join(work, 'no-keys') };
    expect((await verifyBackup(signed, elsewhere)).hmac).toBe(
      'not checked: no sealing key loaded (give --key-file, or set SECRETS_KEY or SECRETS_KEY_FILE); the checksum shows the file is undamaged, not who wrote it',
    );
    expect((await verifyBackup(unsigned, elsewhere)).hmac).toMatch(/^not checked: no sealing key loaded/);
  });

  it('is refused when the key to check it with cannot be loaded', async () => {
    const missing = path.join(work, 'missing.key');
    await expect(verifyBackup(signed, options({ keyFile: missing }))).rejects.toThrow(new RegExp(`^cannot load the key to check the backup with: .*ENOENT`));
    await expect(verifyBackup(signed, options({ keyFile: missing }))).rejects.toThrow(BackupInvalidError);
  });
});
