/**
 * The keys of bank verification, all derived (HKDF-SHA-256) from one server secret:
 * - `accountNumberHash`: the HMAC key of account number hashes (kept in bank_verifications);
 * - `sandboxToken`: AES-256-GCM key of sandbox tokens (they carry the account number, encrypted);
 * - `partnerCredential`: AES-256-GCM key of the credentials stored for `http` partners.
 *
 * The secret is BANK_SECRET when configured; otherwise 32 random bytes generated once and kept in
 * DATA_DIR/bank-secret.key (mode 0600). It must survive restarts: a new secret would orphan every
 * stored hash and invalidate every sandbox token and stored partner credential.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BankConfig } from '../config/integrations.ts';

export const BANK_SECRET_FILE = 'bank-secret.key';

export interface BankKeys {
  accountNumberHash: Buffer;
  sandboxToken: Buffer;
  partnerCredential: Buffer;
}

function derive(secret: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `mortgage-origination/bank/${label}`, 32));
}

function deriveBankKeys(secret: Buffer): BankKeys {
  return {
    accountNumberHash: derive(secret, 'account-number-hash'),
    sandboxToken: derive(secret, 'sandbox-token'),
    partnerCredential: derive(secret, 'partner-credential'),
  };
}

/** Reads DATA_DIR/bank-secret.key, creating it (exclusively, so two processes agree) when absent. */
async function storedSecret(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, BANK_SECRET_FILE);
  try {
    return decodeSecretFile(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32);
  try {
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(secret.toString('base64') + '\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return decodeSecretFile(await readFile(file, 'utf8'), file); // another process created it first
  }
}

function decodeSecretFile(text: string, file: string): Buffer {
  const secret = Buffer.from(text.trim(), 'base64');
  if (secret.length < 32) throw new Error(`${file} does not hold a bank secret (32 bytes, base64); restore it or set BANK_SECRET`);
  return secret;
}

const cache = new Map<string, Promise<BankKeys>>();

/** The keys for this configuration; the secret file is read once per process and data directory. */
export function bankKeys(config: { dataDir: string; bank: Pick<BankConfig, 'secret'> }): Promise<BankKeys> {
  const cacheKey = config.bank.secret === null ? `file:${path.resolve(config.dataDir)}` : `env:${config.bank.secret}`;
  let keys = cache.get(cacheKey);
  if (!keys) {
    keys = (config.bank.secret === null ? storedSecret(config.dataDir) : Promise.resolve(Buffer.from(config.bank.secret, 'utf8'))).then(deriveBankKeys);
    keys.catch(() => cache.delete(cacheKey));
    cache.set(cacheKey, keys);
  }
  return keys;
}
