/**
 * The backup file as an operator meets it (`npm run admin -- backup`, `backup verify`, `restore`):
 * a backup of any store restores (the probe: a fresh store with no document, whose last entry does
 * not end with a newline), a backup of the first format still restores, and `backup verify`
 * refuses a damaged or changed file naming why, writing nothing. sql.js only (vitest.config.ts).
 */
import { createHash, createHmac } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivePurposeKey, KEY_PURPOSES } from '../../src/domain/keys/derivedKeys.ts';
import { decodeSecretsKey } from '../../src/store/core/sealing.ts';
import { entryHead, frameHead, frameTrailer, parseFrame } from '../../src/store/sqljs/backupFormat.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { createAccountWithCli, runAdmin, tempDataDir } from '../helpers/server.ts';

const FIXTURE = new URL('../fixtures/backups/v1-one-account-lsn17.mosbackup.gz', import.meta.url);
/** The account the fixture's store holds (written by the first backup writer, before the frame). */
const FIXTURE_ACCOUNT = 'acc-01m97xzbx2p0v5zywhw83spnf6';

let dirs: Awaited<ReturnType<typeof tempDataDir>>;
let source: string;
let work: string;
let backupFile: string;
let lsn: number;

beforeAll(async () => {
  dirs = await tempDataDir('mos-backup-verify-');
  source = dirs.dataDir;
  work = path.join(source, '..');
  await createAccountWithCli(source, 'Probe Lending');
}, 60_000);
afterAll(async () => {
  await dirs?.remove();
});

const restore = (file: string, target: string, ...extra: string[]) => runAdmin(['restore', '--from', file, '--data-dir', target, ...extra, '--json'], { dataDir: target });
/** `backup verify FILE` with the source's data directory as DATA_DIR: its key file is the key. */
const verify = (file: string, ...extra: string[]) => runAdmin(['backup', 'verify', file, ...extra, '--json'], { dataDir: source });

async function accountsOf(dataDir: string): Promise<string[]> {
  const store = await openSqlJsStore({ dataDir });
  try {
    return (await store.read((db) => db.all<{ id: string }>('SELECT id FROM accounts ORDER BY id'))).map((r) => r.id);
  } finally {
    await store.close();
  }
}

describe('a fresh data directory with one account and no documents (the probe)', () => {
  it('backs up, verifies and restores: its last entry, the database, ends without a newline', async () => {
    backupFile = path.join(work, 'store.backup');
    const taken = await runAdmin(['backup', '--to', backupFile, '--json'], { dataDir: source });
    expect(taken.code, taken.stderr).toBe(0);
    lsn = (JSON.parse(taken.stdout) as { lsn: number }).lsn;
    const frame = parseFrame(await readFile(backupFile));
    expect(frame.entries.map((e) => e.name)).toEqual(['snapshot.db']);
    expect(frame.entries[0]!.content.at(-1)).not.toBe(0x0a);

    const checked = await verify(backupFile);
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ format: 2, lsn, documents: 0, hmac: expect.stringMatching(/^verified \(sealing key [0-9a-f]{12}\)$/) });

    const target = path.join(work, 'restored');
    const run = await restore(backupFile, target);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ lsn, hmac: expect.stringMatching(/^not checked: no sealing key loaded/) });
    expect(await accountsOf(target)).toEqual(await accountsOf(source));
  }, 60_000);
});

describe('a backup written by the first format (before the frame)', () => {
  it('restores: found by its fixed 78-byte trailer although its database does not end with a newline', async () => {
    const file = path.join(work, 'first-format.mosbackup');
    await writeFile(file, gunzipSync(await readFile(FIXTURE)));
    const target = path.join(work, 'restored-first-format');
    const run = await restore(file, target);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ format: 1, lsn: 17, documents: 0 });
    expect(await accountsOf(target)).toEqual([FIXTURE_ACCOUNT, `${FIXTURE_ACCOUNT}.test`]); // its live and test environments
  }, 60_000);

  it('with a sealing key loaded, it has no HMAC to check: refused unless --accept-unauthenticated', async () => {
    const file = path.join(work, 'first-format.mosbackup');
    const keyFile = path.join(source, 'secrets.key');
    const refused = await restore(file, path.join(work, 'refused-first-format'), '--key-file', keyFile);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/its HMAC cannot be checked: the file has none \(a backup of the first format.*--accept-unauthenticated/);
    await expect(readdir(path.join(work, 'refused-first-format'))).rejects.toMatchObject({ code: 'ENOENT' });
    const accepted = await restore(file, path.join(work, 'accepted-first-format'), '--key-file', keyFile, '--accept-unauthenticated');
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout).hmac).toMatch(/^not checked \(accepted with --accept-unauthenticated\)/);
  }, 60_000);
});

describe('backup verify refuses a damaged or changed file, naming why, and writes nothing', () => {
  async function refusedWith(bytes: Buffer, name: string, reason: RegExp, ...extra: string[]) {
    const file = path.join(work, name);
    await writeFile(file, bytes);
    const before = (await readdir(work)).sort();
    const run = await verify(file, ...extra);
    expect(run.code, run.stdout).toBe(2);
    expect(run.stderr).toMatch(reason);
    expect((await readdir(work)).sort()).toEqual(before);
  }

  /** The backup with its LSN changed and its frame written again, its checksum recomputed: what someone who edits it can do. */
  async function reframed(sealingKey: Buffer | null): Promise<Buffer> {
    const frame = parseFrame(await readFile(backupFile));
    const parts = [frameHead({ ...frame.header, lsn: lsn + 1, entries: frame.entries.length })];
    for (const e of frame.entries) parts.push(entryHead(e.kind, e.name, e.content.length), e.content);
    const covered = Buffer.concat(parts);
    const hmac = sealingKey ? { ...frame.hmac!, value: createHmac('sha256', derivePurposeKey(sealingKey, KEY_PURPOSES.backupHmac)).update(covered).digest('hex') } : frame.hmac;
    return Buffer.concat([covered, frameTrailer(createHash('sha256').update(covered).digest('hex'), hmac)]);
  }

  it('a truncated file', async () => {
    const original = await readFile(backupFile);
    await refusedWith(original.subarray(0, original.length - 100), 'cut.backup', /is not a usable backup: it is cut short \(its trailer ends past the end of the file\)/);
    await refusedWith(original.subarray(0, 1000), 'cut-early.backup', /it is cut short \(entry 1 of 1, "snapshot.db", ends past the end of the file\)/);
  }, 30_000);

  it('a flipped byte', async () => {
    const damaged = Buffer.from(await readFile(backupFile));
    damaged[Math.floor(damaged.length / 2)]! ^= 0x01;
    await refusedWith(damaged, 'flipped.backup', /its checksum does not match \(recorded sha256 [0-9a-f]{64}, the content hashes to [0-9a-f]{64}\)/);
  }, 30_000);

  it('a re-framed file whose checksum was recomputed: its HMAC does not match the sealing key', async () => {
    await refusedWith(await reframed(null), 'reframed.backup', /its HMAC does not match \(made with sealing key [0-9a-f]{12}\): the file was changed after it was written/);
  }, 30_000);

  it('a re-framed file with its HMAC made again (with the key): the database holds another LSN than its header says', async () => {
    const sealingKey = decodeSecretsKey(await readFile(path.join(source, 'secrets.key'), 'utf8'), 'secrets.key');
    await refusedWith(await reframed(sealingKey), 'reframed-keyed.backup', new RegExp(`its database holds LSN ${lsn}, its header says ${lsn + 1}`));
  }, 30_000);
});
