/**
 * Authentication of API keys (`Authorization: Bearer mos_live_…` or `mos_test_…`), handed to the edge through the
 * context. A failed check throws `unauthenticated`, whose detail becomes the 401's.
 */
import type { AppContext } from '../context.ts';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import { apiKeyLivemode, hashApiKey, isWellFormedApiKey } from '../domain/accounts/apiKeyFormat.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { fail } from '../errors.ts';
import { findApiKeyByHash, touchApiKey } from '../store/apiKeys.ts';

/** Last-used times are recorded at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The API key check of one process: remembers when it last recorded each key's use, so a busy key
 * costs one write a minute, not one a request.
 */
export function apiKeyAuthenticator(ctx: AppContext): (token: string) => Promise<ApiKeyPrincipal> {
  const { store, clock, log } = ctx;
  const lastTouched = new Map<string, number>();

  return async function authenticate(token: string): Promise<ApiKeyPrincipal> {
    if (!isWellFormedApiKey(token)) {
      throw fail.unauthenticated('This operation needs an API key (mos_live_… or mos_test_…); the bearer token is not one.');
    }
    const key = await store.read((db) => findApiKeyByHash(db, hashApiKey(token)));
    if (!key) throw fail.unauthenticated('The API key is not valid.');
    if (key.revokedAt) throw fail.unauthenticated('The API key has been revoked.');
    const livemode = isLivemode(key.accountId);
    // The prefix is what people and scanners go by: a key must act in the mode it says.
    if (apiKeyLivemode(token) !== livemode) throw fail.unauthenticated('The API key is not valid.');

    const now = clock.now();
    const touched = lastTouched.get(key.keyId) ?? (key.lastUsedAt ? Date.parse(key.lastUsedAt) : 0);
    if (now.getTime() - touched >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.keyId, now.getTime());
      // Off the request's path: a failed touch must not fail the call it describes.
      store.transaction((tx) => touchApiKey(tx, key.keyId, now.toISOString())).catch((err: unknown) => {
        log.warn({ err, keyId: key.keyId }, 'could not record API key use');
      });
    }
    return { kind: 'apiKey', accountId: key.accountId, livemode, keyId: key.keyId, role: key.role };
  };
}
