/**
 * Sealing secrets at rest (src/store/core/sealing.ts): AES-256-GCM under the data directory's
 * key, each value bound to its row by the additional data, keys named by a fingerprint, older keys
 * loaded beside the sealing one during a rotation, and the key file made 0600 on first start.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivePurposeKey, KEY_PURPOSES } from '../../../../src/domain/keys/derivedKeys.ts';
import {
  SEALED_HEAD_CHARS,
  SEALED_PREFIX,
  SECRETS_KEY_FILE,
  SecretKeyring,
  decodeSecretsKey,
  encodeSecretsKey,
  keyFilePath,
  loadKeyring,
  newSecretsKey,
  sealedKeyId,
  secretsKeyId,
} from '../../../../src/store/core/sealing.ts';

const keyA = Buffer.alloc(32, 0xa1);
const keyB = Buffer.alloc(32, 0xb2);
const SECRET = 'whsec_c2VjcmV0IG9mIHRoZSBmaXJzdCBlbmRwb2ludCEhISEhISEhIQ==';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sealing-test-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('SecretKeyring', () => {
  it('derives a purpose key from the sealing key, or from a loaded older key by id, and none from a key not loaded', () => {
    const keyring = new SecretKeyring(keyB, [keyA]);
    expect(keyring.purposeKey(KEY_PURPOSES.auditAnchor)).toEqual({ keyId: secretsKeyId(keyB), key: derivePurposeKey(keyB, KEY_PURPOSES.auditAnchor) });
    expect(keyring.purposeKey(KEY_PURPOSES.auditAnchor, secretsKeyId(keyA))).toEqual({ keyId: secretsKeyId(keyA), key: derivePurposeKey(keyA, KEY_PURPOSES.auditAnchor) });
    keyring.dropOthers();
    expect(keyring.purposeKey(KEY_PURPOSES.auditAnchor, secretsKeyId(keyA))).toBeNull();
    expect(keyring.purposeKey(KEY_PURPOSES.auditAnchor, 'cccccccccccc')).toBeNull();
  });

  it('seals to sealed:v1:<key id>:<base64url>, a new IV each time, and opens it back', () => {
    const keyring = new SecretKeyring(keyA);
    const first = keyring.seal(SECRET, 'webhook_endpoints:whk-1');
    const second = keyring.seal(SECRET, 'webhook_endpoints:whk-1');
    expect(first).toMatch(new RegExp(`^sealed:v1:${secretsKeyId(keyA)}:[A-Za-z0-9_-]+$`));
    expect(first).not.toBe(second);
    expect(first).not.toContain(SECRET);
    // 12 bytes of IV, the ciphertext (as long as the text), 16 bytes of tag
    expect(Buffer.from(first.slice(SEALED_HEAD_CHARS), 'base64url')).toHaveLength(12 + Buffer.byteLength(SECRET) + 16);
    expect(keyring.open(first, 'webhook_endpoints:whk-1')).toBe(SECRET);
    expect(keyring.open(second, 'webhook_endpoints:whk-1')).toBe(SECRET);
    expect(keyring.open(keyring.seal('', 'c'), 'c')).toBe('');
    expect(keyring.open(keyring.seal('é ü 💡', 'c'), 'c')).toBe('é ü 💡');
  });

  it("a value sealed for one row does not open as another row's (the additional data), even under the same key", () => {
    const keyring = new SecretKeyring(keyA);
    const sealed = keyring.seal(SECRET, 'webhook_endpoints:whk-1');
    for (const other of ['webhook_endpoints:whk-2', 'webhook_endpoints:whk-10', 'bank_partners:whk-1', '']) {
      expect(() => keyring.open(sealed, other), other).toThrow(/unable to authenticate/);
    }
    // Another keyring with the same key opens it for the same row: the binding is the row, not the object.
    expect(new SecretKeyring(keyA).open(sealed, 'webhook_endpoints:whk-1')).toBe(SECRET);
  });

  it('refuses a value whose ciphertext, tag or IV was changed', () => {
    const keyring = new SecretKeyring(keyA);
    const sealed = keyring.seal(SECRET, 'c');
    const bytes = Buffer.from(sealed.slice(SEALED_HEAD_CHARS), 'base64url');
    for (const at of [0, 12, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at]! ^= 1;
      expect(() => keyring.open(sealed.slice(0, SEALED_HEAD_CHARS) + changed.toString('base64url'), 'c'), `byte ${at}`).toThrow();
    }
  });

  it('refuses a value that is not sealed, or sealed under a key it does not hold (naming the key)', () => {
    const keyring = new SecretKeyring(keyA);
    expect(() => keyring.open(SECRET, 'webhook_endpoints:whk-1')).toThrow('a stored secret of webhook_endpoints:whk-1 is not sealed');
    const underB = new SecretKeyring(keyB).seal(SECRET, 'c');
    expect(() => keyring.open(underB, 'c')).toThrow(`a stored secret of c is sealed under key ${secretsKeyId(keyB)}, which is not loaded`);
  });

  it('during a rotation: seals under the new key, opens values of both, and after dropOthers only the new', () => {
    const keyring = new SecretKeyring(keyA);
    const old = keyring.seal(SECRET, 'c');
    expect(keyring.isSealed(old)).toBe(true);
    expect(keyring.isSealed(SECRET)).toBe(false);
    expect(keyring.isCurrent(old)).toBe(true);

    keyring.usePrimary(keyB);
    expect(keyring.primaryKeyId).toBe(secretsKeyId(keyB));
    expect(keyring.keyIds).toEqual([secretsKeyId(keyB), secretsKeyId(keyA)]);
    expect(keyring.hasKey(secretsKeyId(keyA))).toBe(true);
    expect(keyring.isCurrent(old)).toBe(false);
    const fresh = keyring.seal(SECRET, 'c');
    expect(sealedKeyId(fresh)).toBe(secretsKeyId(keyB));
    expect(keyring.isCurrent(fresh)).toBe(true);
    expect(keyring.open(old, 'c')).toBe(SECRET);
    expect(keyring.open(fresh, 'c')).toBe(SECRET);

    keyring.dropOthers();
    expect(keyring.keyIds).toEqual([secretsKeyId(keyB)]);
    expect(keyring.hasKey(secretsKeyId(keyA))).toBe(false);
    expect(keyring.open(fresh, 'c')).toBe(SECRET);
    expect(() => keyring.open(old, 'c')).toThrow(/not loaded/);
  });

  it('built with older keys: seals under the primary, lists it first, opens values of the others', () => {
    const underA = new SecretKeyring(keyA).seal(SECRET, 'c');
    const keyring = new SecretKeyring(keyB, [keyA]);
    expect(keyring.primaryKeyId).toBe(secretsKeyId(keyB));
    expect(keyring.keyIds).toEqual([secretsKeyId(keyB), secretsKeyId(keyA)]);
    expect(sealedKeyId(keyring.seal(SECRET, 'c'))).toBe(secretsKeyId(keyB));
    expect(keyring.open(underA, 'c')).toBe(SECRET);
    // The primary given again among the others is one key, listed once.
    expect(new SecretKeyring(keyB, [keyB]).keyIds).toEqual([secretsKeyId(keyB)]);
  });
});

describe('key ids and key text', () => {
  it('a key id is 12 hex characters, the same for the same key, different for another, and not the key', () => {
    expect(secretsKeyId(keyA)).toMatch(/^[0-9a-f]{12}$/);
    expect(secretsKeyId(Buffer.from(keyA))).toBe(secretsKeyId(keyA));
    expect(secretsKeyId(keyB)).not.toBe(secretsKeyId(keyA));
    expect(keyA.toString('hex')).not.toContain(secretsKeyId(keyA));
    expect(SEALED_HEAD_CHARS).toBe(SEALED_PREFIX.length + 12 + 1);
  });

  it('sealedKeyId reads the key id of a sealed value; null for anything else', () => {
    expect(sealedKeyId('sealed:v1:0123456789ab:AAAA')).toBe('0123456789ab');
    expect(sealedKeyId('sealed:v1:0123456789ab:')).toBe('0123456789ab');
    expect(sealedKeyId('sealed:v1:0123456789ab')).toBeNull(); // a head without its colon
    expect(sealedKeyId('whsec_abc:def')).toBeNull();
    expect(sealedKeyId('sealed:v2:0123456789ab:AAAA')).toBeNull();
  });

  it('a key is read from hex or base64 of 32 bytes (surrounding space ignored); anything else is refused with its length', () => {
    const key = newSecretsKey();
    expect(key).toHaveLength(32);
    expect(newSecretsKey().equals(key)).toBe(false);
    expect(decodeSecretsKey(key.toString('hex'), 'K').equals(key)).toBe(true);
    expect(decodeSecretsKey(key.toString('hex').toUpperCase(), 'K').equals(key)).toBe(true);
    expect(decodeSecretsKey(` ${encodeSecretsKey(key)}\n`, 'K').equals(key)).toBe(true);
    expect(decodeSecretsKey(key.toString('base64url'), 'K').equals(key)).toBe(true);
    expect(encodeSecretsKey(key)).toBe(key.toString('base64'));
    expect(() => decodeSecretsKey(Buffer.alloc(31).toString('base64'), 'SECRETS_KEY')).toThrow('SECRETS_KEY must be 32 bytes in base64 or hex (e.g. openssl rand -base64 32); it decodes to 31 bytes');
    expect(() => decodeSecretsKey('ab'.repeat(33), 'K')).toThrow(/decodes to 49 bytes/); // 66 hex digits are no hex key: read as base64
  });
});

describe('loadKeyring', () => {
  it('with a configured key: that key seals, the previous keys open, and no key file is used', async () => {
    const dataDir = path.join(root, 'configured');
    const loaded = await loadKeyring(dataDir, { key: keyB.toString('base64'), previousKeys: [keyA.toString('hex')] });
    expect(loaded.keyFile).toBeNull();
    expect(loaded.nextKey).toBeNull();
    expect(loaded.keyring.keyIds).toEqual([secretsKeyId(keyB), secretsKeyId(keyA)]);
    await expect(stat(path.join(dataDir, SECRETS_KEY_FILE))).rejects.toThrow();
    await expect(loadKeyring(dataDir, { key: keyB.toString('base64'), previousKeys: ['short'] })).rejects.toThrow('SECRETS_KEY_PREVIOUS (key 1) must be 32 bytes');
    await expect(loadKeyring(dataDir, { key: 'c2hvcnQ=' })).rejects.toThrow('SECRETS_KEY must be 32 bytes in base64 or hex (e.g. openssl rand -base64 32); it decodes to 5 bytes');
  });

  it('without one: creates DATA_DIR/secrets.key (0600) on first start and reads the same key after', async () => {
    const dataDir = path.join(root, 'generated');
    await mkdir(dataDir, { recursive: true });
    const first = await loadKeyring(dataDir, {});
    const file = path.join(dataDir, SECRETS_KEY_FILE);
    expect(first.keyFile).toBe(file);
    expect(keyFilePath(dataDir, {})).toBe(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    expect(first.keyring.primaryKeyId).toBe(secretsKeyId(decodeSecretsKey(text, file)));
    const again = await loadKeyring(dataDir, {});
    expect(again.keyring.primaryKeyId).toBe(first.keyring.primaryKeyId);
    expect(again.nextKey).toBeNull();
  });

  it('a key file of its own, and a half-done rotation: <keyFile>.next is loaded beside the key and handed back to finish', async () => {
    const keyFile = path.join(root, 'own.key');
    await writeFile(keyFile, `${keyA.toString('hex')}\n`, { mode: 0o600 });
    await writeFile(`${keyFile}.next`, encodeSecretsKey(keyB), { mode: 0o600 });
    expect(keyFilePath('/unused', { keyFile })).toBe(keyFile);
    const loaded = await loadKeyring(path.join(root, 'unused'), { keyFile, previousKeys: [] });
    expect(loaded.keyFile).toBe(keyFile);
    expect(loaded.nextKey?.equals(keyB)).toBe(true);
    expect(loaded.keyring.primaryKeyId).toBe(secretsKeyId(keyA));
    expect(loaded.keyring.hasKey(secretsKeyId(keyB))).toBe(true);
    await writeFile(keyFile, 'not a key');
    await expect(loadKeyring(root, { keyFile })).rejects.toThrow(`${keyFile} must be 32 bytes`);
  });
});
