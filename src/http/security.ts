/**
 * Authentication of API keys (`Authorization: Bearer mos_live_…`). A failed check throws an
 * Error whose message becomes the 401's detail; openapi-backend records it as a failed scheme.
 */
import type { Clock } from '../clock.ts';
import { hashApiKey, isWellFormedApiKey } from '../domain/accounts/apiKeyFormat.ts';
import type { Logger } from '../log.ts';
import { findApiKeyByHash, touchApiKey } from '../store/apiKeys.ts';
import type { Store } from '../store/store.ts';
import type { ApiKeyPrincipal } from '../operations/types.ts';

/** Last-used times are recorded at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000;

export class AuthenticationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthenticationError';
  }
}

/** The bearer token of an Authorization header, or null when there is none of that form. */
export function bearerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer +([^\s]+) *$/i.exec(value ?? '');
  return match?.[1] ?? null;
}

export function apiKeyAuthenticator(store: Store, clock: Clock, log: Logger) {
  const lastTouched = new Map<string, number>();

  return async function authenticate(authorization: string | string[] | undefined): Promise<ApiKeyPrincipal> {
    if (authorization === undefined) throw new AuthenticationError('Send an API key as Authorization: Bearer <API key>.');
    const token = bearerToken(authorization);
    if (!token) throw new AuthenticationError('The Authorization header must be "Bearer <API key>".');
    if (!isWellFormedApiKey(token)) {
      throw new AuthenticationError('This operation needs an API key (mos_live_…); the bearer token is not one.');
    }
    const key = await store.read((db) => findApiKeyByHash(db, hashApiKey(token)));
    if (!key) throw new AuthenticationError('The API key is not valid.');
    if (key.revokedAt) throw new AuthenticationError('The API key has been revoked.');

    const now = clock.now();
    const touched = lastTouched.get(key.keyId) ?? (key.lastUsedAt ? Date.parse(key.lastUsedAt) : 0);
    if (now.getTime() - touched >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.keyId, now.getTime());
      // Off the request's path: a failed touch must not fail the call it describes.
      store.transaction((tx) => touchApiKey(tx, key.keyId, now.toISOString())).catch((err: unknown) => {
        log.warn({ err, keyId: key.keyId }, 'could not record API key use');
      });
    }
    return { kind: 'apiKey', accountId: key.accountId, keyId: key.keyId, role: key.role };
  };
}
