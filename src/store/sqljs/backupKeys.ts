/**
 * The key a backup's HMAC is made with, and the sealing keys a restore or `backup verify` checks a backup's HMAC with, read without writing
 * anything (the store's own loadKeyring creates a key file when there is none: here that would
 * invent a key no backup was made with).
 */
import { readFile } from 'node:fs/promises';
import { KEY_PURPOSES } from '../../domain/keys/derivedKeys.ts';
import { SecretKeyring, decodeSecretsKey, keyFilePath, type SecretsKeyOptions } from '../core/sealing.ts';

async function keyIn(file: string, required: boolean): Promise<Buffer | null> {
  try {
    return decodeSecretsKey(await readFile(file, 'utf8'), file);
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * `keyFile` when given (the operator's kept key file: it must exist), else SECRETS_KEY and
 * SECRETS_KEY_PREVIOUS, else the service's key file (SECRETS_KEY_FILE or DATA_DIR/secrets.key, with
 * the `.next` of a rotation under way) when it exists. Null when there is none. `source` says which.
 */
export async function backupCheckKeys(dataDir: string, options: SecretsKeyOptions, keyFile: string | null): Promise<{ keyring: SecretKeyring; source: string } | null> {
  if (keyFile !== null) return { keyring: new SecretKeyring((await keyIn(keyFile, true))!), source: keyFile };
  if (options.key) {
    const previous = (options.previousKeys ?? []).map((text, i) => decodeSecretsKey(text, `SECRETS_KEY_PREVIOUS (key ${i + 1})`));
    return { keyring: new SecretKeyring(decodeSecretsKey(options.key, 'SECRETS_KEY'), previous), source: 'SECRETS_KEY' };
  }
  const file = keyFilePath(dataDir, options);
  const key = await keyIn(file, false);
  if (key === null) return null;
  const next = await keyIn(`${file}.next`, false);
  return { keyring: new SecretKeyring(key, next ? [next] : []), source: file };
}

/** The key a backup's HMAC is made with: derived from the sealing key of id `keyId` (derivedKeys.ts). */
export interface BackupHmacKey {
  keyId: string;
  key: Buffer;
}

/** The backup HMAC key of the keyring's key `keyId` (default its sealing key), or null when not loaded. */
export function backupHmacKey(keyring: SecretKeyring, keyId: string = keyring.primaryKeyId): BackupHmacKey | null {
  const key = keyring.purposeKey(KEY_PURPOSES.backupHmac, keyId)?.key ?? null;
  return key ? { keyId, key } : null;
}
