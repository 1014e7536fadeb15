/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint's
 * secret (the bytes of its base64 part), over the exact bytes sent. Computed with node:crypto
 * (the `standardwebhooks` package's pure-JS hash is several times slower); the tests check every
 * signature with that package's `verify`. While a rotated
 * secret is still in its overlap period a second signature, under the previous secret, follows
 * the first (space-separated); a receiver accepts the delivery when either verifies.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** What a listing shows of a secret: the prefix and its last four characters. */
export function secretHint(secret: string): string {
  return `${SECRET_PREFIX}…${secret.slice(-4)}`;
}

export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** Signs `body` (the exact JSON text sent) for message `id` at `at` with every secret given. */
export function signDelivery(id: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
  if (secrets.length === 0) throw new Error('signDelivery needs at least one secret');
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`);
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  };
}

/** The HMAC key of a secret: the bytes its base64 part decodes to (as the standardwebhooks package reads it). */
function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new Error('a webhook secret must not be empty');
  return key;
}

/** The secrets that sign at `now`: the current one, and the previous one until its overlap ends. */
export function signingSecrets(endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: string | null }, now: Date): string[] {
  const secrets = [endpoint.secret];
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && Date.parse(endpoint.previousSecretExpiresAt) > now.getTime()) {
    secrets.push(endpoint.previousSecret);
  }
  return secrets;
}

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
