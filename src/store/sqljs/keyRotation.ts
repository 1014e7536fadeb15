/**
 * Secrets at rest in the embedded store: sealing every secret under the current key, rotating the
 * key file, finishing a rotation a crash cut short. After anything is re-sealed, a checkpoint
 * (after VACUUM, so no free page keeps an old value) leaves no plain or old-key copy in the
 * snapshot or the journal.
 */
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretsKeyFromEnvironmentError } from '../core/errors.ts';
import { naming, syncDir, type FaultInjector } from '../core/files.ts';
import { newSecretsKey, writeKeyFile, type SecretKeyring } from '../core/sealing.ts';
import { reanchorAuditChains, type Reanchored } from '../auditAnchors.ts';
import { countSealedValues, resealSecrets } from '../sealedColumns.ts';
import type { SqlExecutor, Tx } from '../store.ts';
import type { Checkpoints } from './checkpoints.ts';
import type { Connection } from './connection.ts';
import type { EngineLog } from './dataDir.ts';
import type { WriteQueue } from './writeQueue.ts';

/** What sealing needs of the engine. */
export interface SealingHost {
  readonly keyring: SecretKeyring;
  readonly keySource: { keyFile: string | null };
  readonly queue: WriteQueue;
  readonly connection: Connection;
  readonly checkpoints: Checkpoints;
  readonly faults: FaultInjector | undefined;
  readonly log: EngineLog;
  read<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  assertAccepting(what: string, evenIfDegraded?: boolean): void;
}

/**
 * Seals every secret not sealed under the current key (values written before sealing existed,
 * or under a key being rotated out), and in the same transaction brings the audit chains' MACs
 * under it (src/store/auditAnchors.ts); returns how many secrets changed.
 */
export async function sealSecrets(host: SealingHost): Promise<number> {
  const tables = await host.read(async () => host.connection.existingTables());
  let anchors: Reanchored | undefined;
  const changed = await host.transaction(async (tx) => {
    const resealed = await resealSecrets(tx, tables);
    anchors = await reanchorAuditChains(tx, tables);
    return resealed;
  });
  logAnchors(host, anchors!);
  if (changed > 0) {
    await host.queue.enqueue(async () => {
      host.connection.vacuum();
      await host.checkpoints.write();
    });
    host.log('info', 'secrets sealed under the current key', { values: changed, keyId: host.keyring.primaryKeyId });
  }
  return changed;
}

function logAnchors(host: SealingHost, anchors: Reanchored): void {
  if (anchors.anchored + anchors.reanchored > 0) host.log('info', 'audit chain anchors made under the current key', { ...anchors, keyId: host.keyring.primaryKeyId });
  if (anchors.foundMoved + anchors.unverifiable > 0) host.log('warn', 'audit chain anchors found moved in the database, or made under a key not held: run audit verify', { ...anchors });
}

/** Key file `keyFile.next` was written but never renamed over `keyFile`: seals everything under it, then replaces the file. */
export async function finishInterruptedRotation(host: SealingHost, keyFile: string, nextKey: Buffer): Promise<void> {
  host.keyring.usePrimary(nextKey);
  await sealSecrets(host);
  await naming('rename', `${keyFile}.next`, () => rename(`${keyFile}.next`, keyFile));
  await syncDir(join(keyFile, '..'));
  host.keyring.dropOthers();
}

export async function rotateSecretsKey(host: SealingHost): Promise<{ keyId: string; previousKeyId: string; resealed: number; keyFile: string }> {
  const keyFile = host.keySource.keyFile;
  if (keyFile === null) {
    throw new SecretsKeyFromEnvironmentError(
      'the sealing key comes from SECRETS_KEY: rotate it by setting SECRETS_KEY_PREVIOUS to the current key and SECRETS_KEY to a new one ' +
        '(openssl rand -base64 32), then restarting; every secret is re-sealed at start. Then remove SECRETS_KEY_PREVIOUS.',
    );
  }
  host.assertAccepting('transaction');
  const keyring = host.keyring;
  const previousKeyId = keyring.primaryKeyId;
  const next = newSecretsKey();
  const nextFile = `${keyFile}.next`;
  await rm(nextFile, { force: true });
  // 1. the new key is durable before anything is sealed under it (a crash here: the next start finishes the rotation)
  await writeKeyFile(nextFile, next, join(keyFile, '..'), host.faults);
  keyring.usePrimary(next);
  let resealed: number;
  try {
    // 2. every secret re-sealed in one transaction, then a checkpoint drops old-key copies from snapshot and journal
    resealed = await sealSecrets(host);
  } catch (err) {
    await rm(nextFile, { force: true }).catch(() => {});
    throw err;
  }
  // 3. the new key replaces the old file; the old key is forgotten
  await naming('rename', nextFile, () => rename(nextFile, keyFile));
  await syncDir(join(keyFile, '..'));
  keyring.dropOthers();
  host.log('info', 'secrets key rotated', { keyId: keyring.primaryKeyId, previousKeyId, resealed });
  return { keyId: keyring.primaryKeyId, previousKeyId, resealed, keyFile };
}

export async function secretsStatus(host: SealingHost): Promise<{ keyId: string; source: 'environment' | 'file'; keyFile: string | null; sealedValues: number }> {
  const tables = await host.read(async () => host.connection.existingTables());
  const sealedValues = await host.read((db) => countSealedValues(db, tables));
  const keyFile = host.keySource.keyFile;
  return { keyId: host.keyring.primaryKeyId, source: keyFile === null ? 'environment' : 'file', keyFile, sealedValues };
}
