/**
 * Keys for other purposes, derived from the sealing key (src/store/core/sealing.ts): whoever holds
 * the sealing key can make them, and a writer of the database alone cannot. Each purpose has its
 * own domain-separated key (HKDF-SHA-256, the purpose as `info`), so a value made for one purpose
 * is never valid for another, and none reveals the sealing key.
 */
import { hkdfSync } from 'node:crypto';

/** The purposes a key is derived for; each name is fixed forever (changing it changes the key). */
export const KEY_PURPOSES = {
  /** The MACs of the audit log's chain heads and pruning anchors (src/domain/audit/anchors.ts). */
  auditAnchor: 'mos audit anchor v1',
  /** The HMAC of the embedded store's backup files (src/store/sqljs/backupKeys.ts). */
  backupHmac: 'mos backup v1',
} as const;

export type KeyPurpose = (typeof KEY_PURPOSES)[keyof typeof KEY_PURPOSES];

/** The 32-byte key of `purpose` under `sealingKey`. */
export function derivePurposeKey(sealingKey: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', sealingKey, Buffer.alloc(0), purpose, 32));
}
