/**
 * The embedded store's backup file on disk, without a store: what writeBackupFile writes and
 * readBackupFile reads back (checksum, HMAC and what it proves), each refusal naming what is wrong,
 * and restoreBackup's files. The contents are opaque bytes here (backupCheck.ts checks the database).
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_PURPOSES, derivePurposeKey } from '../../../../src/domain/keys/derivedKeys.ts';
import { SecretKeyring, newSecretsKey } from '../../../../src/store/core/sealing.ts';
import { checkBackupContents } from '../../../../src/store/sqljs/backupCheck.ts';
import { backupCheckKeys, backupHmacKey } from '../../../../src/store/sqljs/backupKeys.ts';
import { BackupInvalidError, readBackupFile, restoreBackup, writeBackupFile, type BackupSource } from '../../../../src/store/sqljs/backupFile.ts';
import { entryHead, frameHead, frameTrailer, type FrameHmac } from '../../../../src/store/sqljs/backupFormat.ts';
import { loadSqlJs } from '../../../../src/store/sqljs/connection.ts';

let root: string;
let n = 0;
const fresh = () => join(root, `f${++n}`);
beforeAll(async () => {
  root = await mkdtemp(join(os.tmpdir(), 'backup-file-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const key = newSecretsKey();
const keyring = new SecretKeyring(key);
const DOC = `documents/doc-01j${'0'.repeat(22)}a`;
const DB = Buffer.from('SQLite format 3\0 an image');
const meta = { lsn: 42, createdAt: '2026-12-07T10:00:00.000Z', includesKey: true };
const sources = (extra: BackupSource[] = []): BackupSource[] => [
  { kind: 'database', name: 'snapshot.db', read: async () => DB },
  { kind: 'document', name: DOC, read: async () => Buffer.from('%PDF-1.4\n') },
  ...extra,
];

type Entry = [kind: string, name: string, content: Buffer];
const ENTRIES: Entry[] = [['database', 'snapshot.db', DB], ['document', DOC, Buffer.from('%PDF')]];
const HEADER = { kind: 'backup', format: 2, engine: 'sqljs', lsn: 42, createdAt: meta.createdAt, includesKey: false };

/** A frame with a correct checksum around any header and entries, its HMAC made with `hmacWith` when given. */
function craft(header: Record<string, unknown>, entries: Entry[] = ENTRIES, hmacWith: Buffer | null = null): Buffer {
  const covered = Buffer.concat([
    frameHead({ ...header, entries: entries.length }),
    ...entries.flatMap(([kind, name, content]) => [entryHead(kind, name, content.length), content]),
  ]);
  const sha = createHash('sha256').update(covered).digest('hex');
  const hmac: FrameHmac | null = hmacWith
    ? { alg: 'HMAC-SHA256', keyId: keyring.primaryKeyId, value: createHmac('sha256', derivePurposeKey(hmacWith, KEY_PURPOSES.backupHmac)).update(covered).digest('hex') }
    : null;
  return Buffer.concat([covered, frameTrailer(sha, hmac)]);
}

async function written(bytes: Buffer): Promise<string> {
  const file = fresh();
  await writeFile(file, bytes);
  return file;
}

async function refusal(bytes: Buffer, ring: SecretKeyring | null = null): Promise<string> {
  const file = await written(bytes);
  const error = await readBackupFile(file, ring).then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(BackupInvalidError);
  expect((error as Error).name).toBe('BackupInvalidError');
  const message = (error as Error).message;
  expect(message.startsWith(`${file} is not a usable backup: `)).toBe(true);
  expect(message.endsWith('. Nothing was restored.')).toBe(true);
  return message.slice(`${file} is not a usable backup: `.length, -'. Nothing was restored.'.length);
}

describe('a backup file', () => {
  it('reads back what was written: the header, every entry, its checksum, and an HMAC the sealing key verifies', async () => {
    const dir = fresh();
    await mkdir(dir);
    const file = join(dir, 'backup.mosbak');
    const taken = await writeBackupFile(file, meta, sources([{ kind: 'document', name: 'documents/doc-gone', read: async () => null }]), backupHmacKey(keyring));
    const bytes = await readFile(file);
    expect(await readdir(dir)).toEqual(['backup.mosbak']);
    expect(taken).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: bytes.length, skipped: ['documents/doc-gone'], hmacKeyId: keyring.primaryKeyId });
    expect((await stat(file)).mode & 0o077).toBe(0);
    const read = await readBackupFile(file, keyring);
    expect(read).toEqual({
      header: {
        format: 2,
        engine: 'sqljs',
        lsn: 42,
        createdAt: meta.createdAt,
        includesKey: true,
        entries: [
          { kind: 'database', name: 'snapshot.db', bytes: DB.length },
          { kind: 'document', name: DOC, bytes: 9 },
        ],
      },
      sha256: taken.sha256,
      contents: [DB, Buffer.from('%PDF-1.4\n')],
      layout: 2,
      authentication: 'verified',
      hmacKeyId: keyring.primaryKeyId,
    });
  });

  it('says why an HMAC could not be checked: no key loaded, another key loaded, or none written', async () => {
    const file = fresh();
    await writeBackupFile(file, meta, sources(), backupHmacKey(keyring));
    expect(await readBackupFile(file, null)).toMatchObject({ authentication: 'no-key', hmacKeyId: keyring.primaryKeyId });
    expect(await readBackupFile(file, new SecretKeyring(newSecretsKey()))).toMatchObject({ authentication: 'key-not-loaded', hmacKeyId: keyring.primaryKeyId });
    const unsigned = fresh();
    expect((await writeBackupFile(unsigned, meta, sources(), null)).hmacKeyId).toBeNull();
    expect(await readBackupFile(unsigned, keyring)).toMatchObject({ authentication: 'absent', hmacKeyId: null });
  });

  it('never overwrites a file, and leaves no partial file when writing fails', async () => {
    const dir = fresh();
    await mkdir(dir);
    const file = join(dir, 'backup.mosbak');
    await writeFile(file, 'kept');
    await expect(writeBackupFile(file, meta, sources(), null)).rejects.toThrow(
      new BackupInvalidError(`${file} already exists; choose a new file name (a backup never overwrites a file)`),
    );
    expect(await readFile(file, 'utf8')).toBe('kept');
    const other = join(dir, 'other.mosbak');
    await expect(writeBackupFile(other, meta, sources([{ kind: 'key', name: 'k'.repeat(0x10000), read: async () => Buffer.from('x') }]), null)).rejects.toThrow(RangeError);
    expect(await readdir(dir)).toEqual(['backup.mosbak']);
    // A partial file left by a backup that died is not taken for this one's: the write fails, and it is cleared for the next.
    await writeFile(`${other}.partial`, 'left by a crash');
    await expect(writeBackupFile(other, meta, sources(), null)).rejects.toThrow(/EEXIST/);
    expect(await readdir(dir)).toEqual(['backup.mosbak']);
    await writeBackupFile(other, meta, sources(), null);
    expect((await readdir(dir)).sort()).toEqual(['backup.mosbak', 'other.mosbak']);
  });

  it('is refused when it cannot be read, or is no frame', async () => {
    const missing = fresh();
    await expect(readBackupFile(missing, null)).rejects.toThrow(new RegExp(`^cannot read ${missing}: ENOENT`));
    await expect(readBackupFile(missing, null)).rejects.toThrow(BackupInvalidError);
    expect(await refusal(Buffer.from('not a backup at all'))).toBe('it does not start as a backup of this service does');
  });

  it('is refused damaged (its checksum), or changed with its checksum recomputed (its HMAC)', async () => {
    const good = craft(HEADER, ENTRIES, key);
    const damaged = Buffer.from(good);
    damaged[good.indexOf(DB) + 3]! ^= 0x01;
    const recorded = /"sha256":"([0-9a-f]{64})"/.exec(good.toString('latin1'))![1]!;
    expect(await refusal(damaged, keyring)).toMatch(new RegExp(`^its checksum does not match \\(recorded sha256 ${recorded}, the content hashes to [0-9a-f]{64}\\): the file was damaged or changed$`));
    // Changed by someone without the key: a new checksum, the old HMAC.
    const changed = craft({ ...HEADER, lsn: 43 }, ENTRIES);
    const withOldHmac = Buffer.concat([changed.subarray(0, changed.length - frameTrailer('0'.repeat(64), null).length), frameTrailer(/"sha256":"([0-9a-f]{64})"/.exec(changed.toString('latin1'))![1]!, JSON.parse(good.subarray(good.lastIndexOf('{"sha256"')).toString()).hmac)]);
    expect(await refusal(withOldHmac, keyring)).toBe(`its HMAC does not match (made with sealing key ${keyring.primaryKeyId}): the file was changed after it was written, and its checksum recomputed`);
    expect((await readBackupFile(await written(good), keyring)).authentication).toBe('verified');
  });

  it('is refused of another format, engine or kind', async () => {
    for (const change of [{ format: 3 }, { format: 1 }, { engine: 'postgres' }, { kind: 'snapshot' }]) {
      const header = { ...HEADER, ...change };
      expect(await refusal(craft(header)), JSON.stringify(change)).toBe(`it is format ${header.format} of engine ${header.engine}; this version restores formats 1 and 2 of sqljs`);
    }
  });

  it('is refused with an incomplete header', async () => {
    for (const change of [{ lsn: -1 }, { lsn: 1.5 }, { lsn: '42' }, { createdAt: 7 }, { createdAt: undefined }, { includesKey: 'no' }]) {
      expect(await refusal(craft({ ...HEADER, ...change })), JSON.stringify(change)).toBe('its header is incomplete');
    }
    expect((await readBackupFile(await written(craft({ ...HEADER, lsn: 0 })), null)).header.lsn).toBe(0);
  });

  it('is refused holding an entry no backup holds, one twice, or no database first', async () => {
    const bad: Entry[] = [
      ['document', 'documents/../../etc/passwd', Buffer.from('x')],
      ['document', 'documents/doc-short', Buffer.from('x')],
      ['key', DOC, Buffer.from('x')],
      ['document', 'secrets.key', Buffer.from('x')],
      ['database', 'snapshot.db.old', Buffer.from('x')],
      ['key', 'x-secrets.key', Buffer.from('x')],
    ];
    for (const entry of bad) expect(await refusal(craft(HEADER, [ENTRIES[0]!, entry])), entry[1]).toBe(`its entry ${JSON.stringify(entry[1])} is not one a backup holds`);
    expect(await refusal(craft(HEADER, [...ENTRIES, ENTRIES[1]!]))).toBe(`it holds ${DOC} twice`);
    expect(await refusal(craft(HEADER, [ENTRIES[1]!, ENTRIES[0]!]))).toBe('it holds no database');
    expect(await refusal(craft(HEADER, []))).toBe('it holds no database');
    const keys: Entry[] = [ENTRIES[0]!, ['key', 'secrets.key', Buffer.from('k')], ['key', 'bank-secret.key', Buffer.from('b')]];
    expect((await readBackupFile(await written(craft(HEADER, keys)), null)).header.entries.map((e) => e.kind)).toEqual(['database', 'key', 'key']);
  });

  it('of the first format (no frame, no HMAC) is read as format 1', async () => {
    const covered = Buffer.concat([
      Buffer.from('MOSBACKUP\n'),
      Buffer.from(`${JSON.stringify({ format: 1, engine: 'sqljs', lsn: 7, createdAt: meta.createdAt, includesKey: false, entries: [{ kind: 'database', name: 'snapshot.db', bytes: DB.length }] })}\n`),
      DB,
    ]);
    const file = await written(Buffer.concat([covered, Buffer.from(`{"sha256":"${createHash('sha256').update(covered).digest('hex')}"}\n`)]));
    expect(await readBackupFile(file, keyring)).toMatchObject({ layout: 1, authentication: 'absent', hmacKeyId: null, header: { format: 1, lsn: 7 }, contents: [DB] });
  });
});

describe('restoring a backup', () => {
  const backupOf = async (extra: BackupSource[] = []) => {
    const file = fresh();
    await writeBackupFile(file, meta, sources(extra), null);
    return readBackupFile(file, null);
  };

  it('writes the database, the documents and the key files into a new directory, with a clean manifest', async () => {
    const into = join(fresh(), 'a', 'data');
    await restoreBackup(await backupOf([{ kind: 'key', name: 'secrets.key', read: async () => Buffer.from('the key\n') }]), into);
    expect((await readdir(into)).sort()).toEqual(['documents', 'manifest.json', 'secrets.key', 'snapshot.db']);
    expect(await readFile(join(into, 'snapshot.db'))).toEqual(DB);
    expect(await readFile(join(into, DOC), 'utf8')).toBe('%PDF-1.4\n');
    expect((await stat(join(into, 'documents'))).mode & 0o077).toBe(0); // documents are the applicants': the owner's only
    expect(await readFile(join(into, 'secrets.key'), 'utf8')).toBe('the key\n');
    const manifest = JSON.parse(await readFile(join(into, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ snapshot: { lsn: 42, bytes: DB.length, sha256: createHash('sha256').update(DB).digest('hex') }, pending: null, clean: true });
  });

  it('makes no documents directory for a backup without documents, and takes an empty directory', async () => {
    const file = fresh();
    await writeBackupFile(file, meta, sources().slice(0, 1), null);
    const into = fresh();
    await mkdir(into);
    await restoreBackup(await readBackupFile(file, null), into);
    expect((await readdir(into)).sort()).toEqual(['manifest.json', 'snapshot.db']);
  });

  it('refuses a directory that is not empty, naming up to three of its files, and writes nothing', async () => {
    const backup = await backupOf();
    const one = fresh();
    await mkdir(one);
    await writeFile(join(one, 'x'), 'x');
    await expect(restoreBackup(backup, one)).rejects.toThrow(new BackupInvalidError(`${one} is not empty (x); restore into an empty or new directory`));
    const three = fresh();
    await mkdir(three);
    for (const name of ['a', 'b', 'c']) await writeFile(join(three, name), name);
    await expect(restoreBackup(backup, three)).rejects.toThrow(/is not empty \([a-c], [a-c], [a-c]\); restore into/);
    const four = fresh();
    await mkdir(four);
    for (const name of ['a', 'b', 'c', 'd']) await writeFile(join(four, name), name);
    await expect(restoreBackup(backup, four)).rejects.toThrow(/is not empty \([a-d], [a-d], [a-d], …\); restore into an empty or new directory/);
    expect((await readdir(four)).sort()).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('the keys a backup is checked with', () => {
  const text = (k: Buffer) => k.toString('base64');

  it('the kept key file when given; else SECRETS_KEY with its previous keys; else the key file and a rotation\'s next', async () => {
    const dataDir = fresh();
    await mkdir(dataDir);
    const kept = join(dataDir, 'kept.key');
    await writeFile(kept, `${text(key)}\n`);
    const fromFile = await backupCheckKeys(dataDir, {}, kept);
    expect(fromFile).toMatchObject({ source: kept });
    expect(fromFile!.keyring.primaryKeyId).toBe(keyring.primaryKeyId);
    await expect(backupCheckKeys(dataDir, {}, join(dataDir, 'absent.key'))).rejects.toThrow(/ENOENT/);

    const previous = newSecretsKey();
    const fromEnv = await backupCheckKeys(dataDir, { key: text(key), previousKeys: [text(previous)] }, null);
    expect(fromEnv!.source).toBe('SECRETS_KEY');
    expect(fromEnv!.keyring.keyIds).toEqual([keyring.primaryKeyId, new SecretKeyring(previous).primaryKeyId]);
    await expect(backupCheckKeys(dataDir, { key: text(key), previousKeys: ['short'] }, null)).rejects.toThrow(/SECRETS_KEY_PREVIOUS \(key 1\)/);
    await expect(backupCheckKeys(dataDir, { key: 'short' }, null)).rejects.toThrow(/^SECRETS_KEY must be 32 bytes/);

    expect(await backupCheckKeys(dataDir, {}, null)).toBeNull();
    const file = join(dataDir, 'secrets.key');
    await writeFile(file, text(key));
    const fromDataDir = await backupCheckKeys(dataDir, {}, null);
    expect(fromDataDir!.source).toBe(file);
    expect(fromDataDir!.keyring.keyIds).toEqual([keyring.primaryKeyId]);
    await writeFile(`${file}.next`, text(previous));
    expect((await backupCheckKeys(dataDir, {}, null))!.keyring.keyIds).toEqual([keyring.primaryKeyId, new SecretKeyring(previous).primaryKeyId]);
    await writeFile(file, 'not a key');
    await expect(backupCheckKeys(dataDir, {}, null)).rejects.toThrow();
  });

  it('the HMAC key of a loaded key only', () => {
    const hmacKey = backupHmacKey(keyring);
    expect(hmacKey).toEqual({ keyId: keyring.primaryKeyId, key: derivePurposeKey(key, KEY_PURPOSES.backupHmac) });
    expect(backupHmacKey(keyring, 'ffff')).toBeNull();
  });
});

describe('a backup\'s contents', () => {
  /** A database image as the store writes one: its meta row at `lsn`, and the documents it names. */
  async function image(lsn: number, documents: string[] | null = [], meta = true): Promise<Buffer> {
    const { SQL } = await loadSqlJs();
    const db = new SQL.Database();
    try {
      if (meta) db.run(`CREATE TABLE _engine_meta (id INTEGER PRIMARY KEY, last_lsn INTEGER NOT NULL); INSERT INTO _engine_meta VALUES (1, ${lsn});`);
      if (documents) {
        db.run('CREATE TABLE documents (id TEXT PRIMARY KEY)');
        for (const id of documents) db.run('INSERT INTO documents (id) VALUES (?)', [id]);
      }
      return Buffer.from(db.export());
    } finally {
      db.close();
    }
  }
  const docId = DOC.slice('documents/'.length);

  /** A verified backup of these entries (name → bytes; the database first) at `lsn`. */
  async function backup(lsn: number, entries: Array<[string, Buffer]>) {
    const file = fresh();
    const kind = (name: string) => (name === 'snapshot.db' ? 'database' : name.startsWith('documents/') ? 'document' : 'key');
    await writeBackupFile(file, { lsn, createdAt: meta.createdAt, includesKey: false }, entries.map(([name, bytes]) => ({ kind: kind(name), name, read: async () => bytes })), null);
    return { file, backup: await readBackupFile(file, null) };
  }
  async function refusedWith(lsn: number, entries: Array<[string, Buffer]>): Promise<string> {
    const { file, backup: read } = await backup(lsn, entries);
    const error = await checkBackupContents(file, read).then(() => null, (err: unknown) => err);
    expect(error).toBeInstanceOf(BackupInvalidError);
    const message = (error as Error).message;
    expect(message.startsWith(`${file} is not a usable backup: `) && message.endsWith('. Nothing was restored.')).toBe(true);
    return message.slice(`${file} is not a usable backup: `.length, -'. Nothing was restored.'.length);
  }

  it('passes a sound database at the header\'s LSN naming every document it holds, with a key that is a key', async () => {
    const { file, backup: read } = await backup(42, [['snapshot.db', await image(42, [docId, 'doc-other'])], [DOC, Buffer.from('%PDF')], ['secrets.key', Buffer.from(`${key.toString('base64')}\n`)], ['bank-secret.key', Buffer.from('anything')]]);
    await expect(checkBackupContents(file, read)).resolves.toBeUndefined();
  });

  it('refuses a database that is not SQLite, or not this service\'s', async () => {
    expect(await refusedWith(42, [['snapshot.db', Buffer.alloc(4096, 7)]])).toMatch(/^its database does not open as SQLite \(file is not a database\)$/);
    expect(await refusedWith(42, [['snapshot.db', await image(42, [], false)]])).toBe('its database is not one of this service (no such table: _engine_meta)');
    expect(await refusedWith(42, [['snapshot.db', await image(42, null)]])).toBe('its database is not one of this service (no such table: documents)');
  });

  it('refuses a database at another LSN than its header\'s, or a document the database does not name', async () => {
    expect(await refusedWith(42, [['snapshot.db', await image(41)]])).toBe('its database holds LSN 41, its header says 42');
    const { SQL } = await loadSqlJs();
    const noMetaRow = new SQL.Database();
    noMetaRow.run('CREATE TABLE _engine_meta (id INTEGER PRIMARY KEY, last_lsn INTEGER NOT NULL); CREATE TABLE documents (id TEXT PRIMARY KEY);');
    const bytes = Buffer.from(noMetaRow.export());
    noMetaRow.close();
    expect(await refusedWith(42, [['snapshot.db', bytes]])).toBe('its database holds LSN undefined, its header says 42');
    expect(await refusedWith(42, [['snapshot.db', await image(42, ['doc-other'])], [DOC, Buffer.from('%PDF')]])).toBe(`it holds ${DOC}, which its database does not name`);
  });

  it('refuses a secrets.key that is not a key', async () => {
    expect(await refusedWith(42, [['snapshot.db', await image(42)], ['secrets.key', Buffer.from('short')]])).toMatch(/^its secrets\.key is not a key \(.+\)$/);
  });
});
