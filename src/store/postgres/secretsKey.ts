/**
 * The sealing key of a database that several instances share. Every instance seals secrets under
 * its own SECRETS_KEY; one started with another key would open none of what the others sealed and
 * answer 500 for each, long after it started. So the database records the id (a fingerprint, never
 * the key) of the key secrets are sealed under (migration 011), and at open an instance is admitted
 * only when its keyring can open what is sealed: the recorded key and every key a stored secret
 * names are among its keys. Otherwise the store refuses to open, and the message names the fix.
 *
 * Rotation (SECRETS_KEY the new key, SECRETS_KEY_PREVIOUS the old one): the first instance started
 * so finds the recorded key among its older keys, records its own, and re-seals every secret under
 * it, as sql.js does at start. From then on an instance with only the old key is refused, and once
 * every secret is re-sealed one with only the new key is admitted.
 */
import { SecretsKeyFromEnvironmentError, SecretsKeyMismatchError } from '../core/errors.ts';
import type { SecretKeyring } from '../core/sealing.ts';
import { reanchorAuditChains, type Reanchored } from '../auditAnchors.ts';
import { countSealedValues, resealSecrets, sealedInventory } from '../sealedColumns.ts';
import type { SqlExecutor, Tx } from '../store.ts';

/** The advisory lock instances take turns under while they check and record the key (any constant shared by every instance). */
const SECRETS_KEY_LOCK_KEY = 727_274_14;

export interface AdoptedSecretsKey {
  keyId: string;
  /** The key id recorded before, when this instance changed it (a rotation); else null. */
  previousKeyId: string | null;
  /** Secrets re-sealed under this instance's key. */
  resealed: number;
  /** The audit chains' MACs brought under this instance's key (src/store/auditAnchors.ts). */
  anchors: Reanchored;
}

/**
 * Checks that `keyring` opens every secret of the database and records its sealing key; throws
 * SecretsKeyMismatchError when it does not. `origin` says where the key came from, for the message.
 */
export async function adoptSecretsKey(tx: Tx, keyring: SecretKeyring, origin: string): Promise<AdoptedSecretsKey> {
  // Instances starting together take turns: the first records, the others see its record.
  await tx.get('SELECT pg_advisory_xact_lock(?)', [SECRETS_KEY_LOCK_KEY]);
  const tables = new Set(
    (await tx.all<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()')).map((t) => t.table_name),
  );
  // a store opened with other migrations (tests)
  if (!tables.has('secrets_key')) return { keyId: keyring.primaryKeyId, previousKeyId: null, resealed: 0, anchors: await reanchorAuditChains(tx, tables) };
  const recorded = (await tx.get<{ key_id: string }>('SELECT key_id FROM secrets_key WHERE singleton'))?.key_id ?? null;
  const inventory = await sealedInventory(tx, tables);

  if (recorded !== null && !keyring.hasKey(recorded)) throw new SecretsKeyMismatchError(otherKeyMessage(recorded, keyring, origin));
  const missing = [...inventory.keyIds].filter((id) => !keyring.hasKey(id));
  if (missing.length > 0) throw new SecretsKeyMismatchError(staleSecretsMessage(missing, keyring, origin));

  const keyId = keyring.primaryKeyId;
  const now = new Date().toISOString();
  if (recorded === null) {
    await tx.run('INSERT INTO secrets_key (singleton, key_id, recorded_at) VALUES (TRUE, ?, ?)', [keyId, now]);
  } else if (recorded !== keyId) {
    await tx.run('UPDATE secrets_key SET key_id = ?, recorded_at = ? WHERE singleton', [keyId, now]);
  }
  const stale = inventory.unsealed || [...inventory.keyIds].some((id) => id !== keyId);
  const resealed = stale ? await resealSecrets(tx, tables) : 0;
  const anchors = await reanchorAuditChains(tx, tables);
  return { keyId, previousKeyId: recorded !== null && recorded !== keyId ? recorded : null, resealed, anchors };
}

/** What `secrets status` shows on PostgreSQL: this process's key, the key the database records, and how many values are sealed. */
export interface SharedSecretsStatus {
  keyId: string;
  source: 'environment' | 'file';
  keyFile: string | null;
  sealedValues: number;
  /** The id the database records (every instance must hold that key); null before any instance recorded one. */
  recordedKeyId: string | null;
}

export async function sharedSecretsStatus(db: SqlExecutor, keyring: SecretKeyring, keyFile: string | null): Promise<SharedSecretsStatus> {
  const tables = new Set(
    (await db.all<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()')).map((t) => t.table_name),
  );
  const recordedKeyId = tables.has('secrets_key') ? ((await db.get<{ key_id: string }>('SELECT key_id FROM secrets_key WHERE singleton'))?.key_id ?? null) : null;
  return { keyId: keyring.primaryKeyId, source: keyFile === null ? 'environment' : 'file', keyFile, sealedValues: await countSealedValues(db, tables), recordedKeyId };
}

/**
 * `secrets rotate-key` on PostgreSQL: the key is every instance's, so one command cannot swap it
 * under the others (they would stop opening what it re-sealed). The message gives the procedure.
 */
export function sharedKeyRotationRefused(): SecretsKeyFromEnvironmentError {
  return new SecretsKeyFromEnvironmentError(
    'on PostgreSQL every instance seals with the same key, so it is rotated by restarting them, not by this command: give every instance ' +
      'SECRETS_KEY_PREVIOUS (the current key) and SECRETS_KEY (a new one: openssl rand -base64 32); the first to start records the new key and ' +
      're-seals every secret. Check with `secrets status`, then remove SECRETS_KEY_PREVIOUS (README: Running several instances).',
  );
}

function heldKeys(keyring: SecretKeyring, origin: string): string {
  const [primary, ...others] = keyring.keyIds;
  return `its key (${origin}) has id ${primary}${others.length > 0 ? `, and SECRETS_KEY_PREVIOUS adds ${others.join(', ')}` : ''}`;
}

function otherKeyMessage(recorded: string, keyring: SecretKeyring, origin: string): string {
  return (
    `this instance cannot open the secrets in the database: they are sealed under the key of id ${recorded}, and ${heldKeys(keyring, origin)}. ` +
    `Every instance on one PostgreSQL database needs the same SECRETS_KEY: set SECRETS_KEY to the key the other instances use (the one of id ${recorded}) and start again. ` +
    `To rotate the key instead, set SECRETS_KEY_PREVIOUS to that key and SECRETS_KEY to the new one.`
  );
}

function staleSecretsMessage(missing: string[], keyring: SecretKeyring, origin: string): string {
  const keys = missing.length === 1 ? `the key of id ${missing[0]}` : `the keys of ids ${missing.join(', ')}`;
  return (
    `this instance cannot open some secrets in the database: they are still sealed under ${keys}, and ${heldKeys(keyring, origin)}. ` +
    `Add ${missing.length === 1 ? 'that key' : 'those keys'} to SECRETS_KEY_PREVIOUS and start again: the instance re-seals them under SECRETS_KEY at start, after which SECRETS_KEY_PREVIOUS can go.`
  );
}
