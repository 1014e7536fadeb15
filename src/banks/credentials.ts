/**
 * The credential the service presents to an `http` partner, sealed for storage: AES-256-GCM
 * under a key derived from the server secret, with the partner id as additional data (a sealed
 * credential copied to another partner's row does not open). Stored as base64url of
 * `iv (12) | ciphertext | tag (16)`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function sealCredential(key: Buffer, partnerId: string, credential: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`bank-partner-credential:${partnerId}`, 'utf8'));
  return Buffer.concat([iv, cipher.update(credential, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
}

/** Throws when the sealed value was not made by this key for this partner (a changed secret, a tampered row). */
export function openCredential(key: Buffer, partnerId: string, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(`bank-partner-credential:${partnerId}`, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
