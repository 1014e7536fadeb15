/**
 * Keys for other purposes than sealing, derived from the sealing key with HKDF-SHA256 (RFC 5869):
 * one key per `info` label, none of which reveals the sealing key or another derived key. A
 * derived key is named by the id of the key it comes from, so it changes with a key rotation.
 */
import { hkdfSync } from 'node:crypto';

/** The label of the key that authenticates backup files (backupFile.ts). */
export const BACKUP_HMAC_INFO = 'mos backup v1';

export function deriveKey(sealingKey: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', sealingKey, Buffer.alloc(0), Buffer.from(info, 'utf8'), 32));
}
