/**
 * Secrets at rest: webhook signing secrets, bank partner credentials and the other values
 * src/store/sealedColumns.ts lists (applicants' demographics among them) are sealed with
 * AES-256-GCM before they reach SQL, so the journal, the snapshot and any copy or backup of them
 * reveal none. One key (SECRETS_KEY, or the key file, by default DATA_DIR/secrets.key, created
 * 0600 on first start) seals; older keys may be loaded beside it to open values during a rotation.
 *
 * A sealed value is `sealed:v1:<key id>:<base64url(iv 12 | ciphertext | tag 16)>`, bound to its
 * row by the additional data (a sealed value copied to another row does not open).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { open as openFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { derivePurposeKey, type KeyPurpose } from '../../domain/keys/derivedKeys.ts';
import type { SecretSealer } from '../store.ts';
import { FILE_MODE, naming, syncDir, type FaultInjector } from './files.ts';

export const SEALED_PREFIX = 'sealed:v1:';
export const SECRETS_KEY_FILE = 'secrets.key';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** Hex characters of a key id. */
const KEY_ID_CHARS = 12;
/** Characters of a sealed value up to and including the colon after its key id. */
export const SEALED_HEAD_CHARS = SEALED_PREFIX.length + KEY_ID_CHARS + 1;

/** The id of a key: a fingerprint that names it in sealed values and records, from which the key cannot be found. */
export function secretsKeyId(key: Buffer): string {
  return createHash('sha256').update('mortgage-origination/secrets-key-id\0').update(key).digest('hex').slice(0, KEY_ID_CHARS);
}

/** A key from its text: base64, base64url or hex of 32 bytes. */
export function decodeSecretsKey(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES) {
    throw new Error(`${origin} must be 32 bytes in base64 or hex (e.g. openssl rand -base64 32); it decodes to ${key.length} bytes`);
  }
  return key;
}

export function newSecretsKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function encodeSecretsKey(key: Buffer): string {
  return key.toString('base64');
}

/** The id of the key `value` was sealed under; null for a value that is not sealed. */
export function sealedKeyId(value: string): string | null {
  if (!value.startsWith(SEALED_PREFIX)) return null;
  const colon = value.indexOf(':', SEALED_PREFIX.length);
  return colon < 0 ? null : value.slice(SEALED_PREFIX.length, colon);
}

export class SecretKeyring implements SecretSealer {
  readonly #keys = new Map<string, Buffer>();
  readonly #derived = new Map<string, Buffer>();
  #primary: string;

  constructor(primary: Buffer, others: readonly Buffer[] = []) {
    for (const key of others) this.#keys.set(secretsKeyId(key), key);
    this.#primary = secretsKeyId(primary);
    this.#keys.set(this.#primary, primary);
  }

  get primaryKeyId(): string {
    return this.#primary;
  }

  /** The ids of every loaded key, the sealing one first. */
  get keyIds(): string[] {
    return [this.#primary, ...[...this.#keys.keys()].filter((id) => id !== this.#primary)];
  }

  /** True when the key of id `keyId` is loaded (values sealed under it open). */
  hasKey(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  /** Makes `key` the sealing key; the others stay to open values not yet re-sealed. */
  usePrimary(key: Buffer): void {
    this.#primary = secretsKeyId(key);
    this.#keys.set(this.#primary, key);
  }

  /** Forgets every key but the sealing one (after everything was re-sealed). */
  dropOthers(): void {
    for (const id of [...this.#keys.keys()]) if (id !== this.#primary) this.#keys.delete(id);
  }

  isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  purposeKey(purpose: KeyPurpose, keyId: string = this.#primary): { keyId: string; key: Buffer } | null {
    const key = this.#keys.get(keyId);
    if (!key) return null;
    // Derived once per key and purpose: an audit entry's append asks for it every time.
    const cacheKey = `${keyId}\0${purpose}`;
    let derived = this.#derived.get(cacheKey);
    if (!derived) {
      derived = derivePurposeKey(key, purpose);
      this.#derived.set(cacheKey, derived);
    }
    return { keyId, key: derived };
  }

  /** True when `value` is sealed under the current sealing key. */
  isCurrent(value: string): boolean {
    return value.startsWith(`${SEALED_PREFIX}${this.#primary}:`);
  }

  seal(plaintext: string, context: string): string {
    const key = this.#keys.get(this.#primary)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(`mortgage-origination/sealed/${context}`, 'utf8'));
    const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
    return `${SEALED_PREFIX}${this.#primary}:${body}`;
  }

  open(sealed: string, context: string): string {
    if (!this.isSealed(sealed)) throw new Error(`a stored secret of ${context} is not sealed`);
    const rest = sealed.slice(SEALED_PREFIX.length);
    const colon = rest.indexOf(':');
    const keyId = rest.slice(0, colon);
    const key = this.#keys.get(keyId);
    if (!key) throw new Error(`a stored secret of ${context} is sealed under key ${keyId}, which is not loaded (SECRETS_KEY or the key file changed?)`);
    const bytes = Buffer.from(rest.slice(colon + 1), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(`mortgage-origination/sealed/${context}`, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** Where the sealing key comes from (config: SECRETS_KEY, SECRETS_KEY_PREVIOUS, SECRETS_KEY_FILE). */
export interface SecretsKeyOptions {
  /** The key itself (base64 or hex of 32 bytes); when set, no key file is used. */
  key?: string | null;
  /** Older keys, to open values sealed before a rotation of `key`. */
  previousKeys?: readonly string[];
  /** The key file when `key` is not set; default DATA_DIR/secrets.key. */
  keyFile?: string | null;
}

export interface LoadedKeyring {
  keyring: SecretKeyring;
  /** The key file in use (null when the key came from the environment). */
  keyFile: string | null;
  /** A key file rotation left half done: `<keyFile>.next` holds the new key; finish it. */
  nextKey: Buffer | null;
}

async function writeKeyFile(path: string, key: Buffer, dir: string, faults?: FaultInjector): Promise<void> {
  await naming('write', path, async () => {
    faults?.beforeWrite(path, 64);
    const handle = await openFile(path, 'wx', FILE_MODE);
    try {
      await handle.writeFile(encodeSecretsKey(key) + '\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
  await syncDir(dir);
}

async function readKeyFile(path: string): Promise<Buffer | null> {
  try {
    return decodeSecretsKey(await readFile(path, 'utf8'), path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export function keyFilePath(dataDir: string, options: SecretsKeyOptions): string {
  return options.keyFile ?? join(dataDir, SECRETS_KEY_FILE);
}

/** The keyring of this data directory; creates the key file (0600) on first start when no key is configured. */
export async function loadKeyring(dataDir: string, options: SecretsKeyOptions, faults?: FaultInjector): Promise<LoadedKeyring> {
  const previous = (options.previousKeys ?? []).map((text, i) => decodeSecretsKey(text, `SECRETS_KEY_PREVIOUS (key ${i + 1})`));
  if (options.key) return { keyring: new SecretKeyring(decodeSecretsKey(options.key, 'SECRETS_KEY'), previous), keyFile: null, nextKey: null };
  const file = keyFilePath(dataDir, options);
  let key = await readKeyFile(file);
  if (!key) {
    key = newSecretsKey();
    await writeKeyFile(file, key, join(file, '..'), faults);
  }
  const nextKey = await readKeyFile(`${file}.next`);
  return { keyring: new SecretKeyring(key, nextKey ? [...previous, nextKey] : previous), keyFile: file, nextKey };
}

export { writeKeyFile };
