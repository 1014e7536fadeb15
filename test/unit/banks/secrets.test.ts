import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BANK_SECRET_FILE, bankKeys } from '../../../src/banks/secrets.ts';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mos-bank-secret-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('bankKeys', () => {
  it('generates a secret once in DATA_DIR (mode 0600) and derives the same keys from it after a restart', async () => {
    const dataDir = await tempDir();
    const first = await bankKeys({ dataDir, bank: { secret: null } });
    const file = path.join(dataDir, BANK_SECRET_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
    // A new path string for the same directory is a new cache entry: the file is read again.
    const again = await bankKeys({ dataDir: `${dataDir}/.`, bank: { secret: null } });
    expect(again.accountNumberHash.equals(first.accountNumberHash)).toBe(true);
  });

  it('derives distinct keys for each purpose, and other keys in another data directory', async () => {
    const a = await bankKeys({ dataDir: await tempDir(), bank: { secret: null } });
    const b = await bankKeys({ dataDir: await tempDir(), bank: { secret: null } });
    expect(a.accountNumberHash.equals(a.sandboxToken)).toBe(false);
    expect(a.sandboxToken.equals(a.partnerCredential)).toBe(false);
    expect(a.accountNumberHash.equals(b.accountNumberHash)).toBe(false);
  });

  it('uses BANK_SECRET when configured and writes no file', async () => {
    const dataDir = await tempDir();
    const secret = 'a-configured-secret-of-at-least-32-chars';
    const keys = await bankKeys({ dataDir, bank: { secret } });
    expect(keys.accountNumberHash.equals((await bankKeys({ dataDir: await tempDir(), bank: { secret } })).accountNumberHash)).toBe(true);
    await expect(stat(path.join(dataDir, BANK_SECRET_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
