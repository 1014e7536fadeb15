/**
 * Authentication of API keys (`Authorization: Bearer mos_live_…` or `mos_test_…`), handed to the edge through the
 * context. A failed check throws `unauthenticated`, whose detail becomes the 401's.
 *
 * Valid keys are remembered between requests, so a busy key costs no database read per call (the
 * look-up was a sixteenth of GET /v1/account's CPU, issue 17). Revocation stays exact:
 * - in this process, the revoking use case calls `forget()` once the revocation has committed and
 *   before it answers: the next request with the key is refused;
 * - a look-up that was reading while a revocation committed keeps nothing of what it read (the
 *   generation check), since it may have read the key as it was before;
 * - several instances on one PostgreSQL database: the revoking transaction notifies
 *   API_KEYS_CHANNEL, delivered to every instance at commit, and each forgets on it. Should a
 *   notification be lost (the LISTEN connection down, or dead without anyone noticing yet), an
 *   entry is trusted for SHARED_CACHE_TTL_MS at most (by the context's clock, like every decision
 *   on time): no instance accepts a revoked key longer than that after the revocation committed.
 * On sql.js one process alone opens the data directory (the admin command line goes through the
 * server's socket), so nothing can revoke behind this process's back and entries need no age limit.
 */
import type { AppContext } from '../context.ts';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import { apiKeyLivemode, hashApiKey, isWellFormedApiKey } from '../domain/accounts/apiKeyFormat.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { fail } from '../errors.ts';
import { API_KEYS_CHANNEL, findApiKeyByHash, touchApiKey, type ApiKeyRecord } from '../store/apiKeys.ts';

/** Last-used times are recorded at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000;

/** How long an instance sharing its database trusts what it read of a key (see the file comment). */
export const SHARED_CACHE_TTL_MS = 2_000;

/** Keys remembered at most; the oldest is dropped beyond (a key not remembered is simply read again). */
const CACHE_MAX_KEYS = 10_000;

/** A key as remembered: with its account's pinned API version (forgotten when that changes, like a revocation). */
type KeyWithVersion = ApiKeyRecord & { apiVersion: string };

export interface ApiKeyAuthenticator {
  authenticate(token: string): Promise<ApiKeyPrincipal>;
  /** Drops every remembered key: called once a revocation has committed, before it is answered. */
  forget(): void;
}

/**
 * The API key check of one process: remembers the valid keys it has read, and when it last
 * recorded each key's use, so a busy key costs one write a minute and no read a request.
 */
export function apiKeyAuthenticator(ctx: AppContext): ApiKeyAuthenticator {
  const { store, clock, log } = ctx;
  const lastTouched = new Map<string, number>();
  const ttlMs = store.sharedByInstances ? SHARED_CACHE_TTL_MS : Infinity;
  /** Valid keys by the hash of their secret (never the secret itself), with when they were read. */
  const remembered = new Map<string, { key: KeyWithVersion; readAt: number }>();
  /** Bumped by every forget(): a look-up that started under an older generation keeps nothing. */
  let generation = 0;
  let listening = false;

  const forget = () => {
    generation += 1;
    remembered.clear();
  };

  async function lookUp(secretHash: string): Promise<KeyWithVersion | undefined> {
    const entry = remembered.get(secretHash);
    // Remembered for good where ttlMs is Infinity (sql.js): no clock read on that hit.
    if (entry && (ttlMs === Infinity || clock.now().getTime() - entry.readAt < ttlMs)) return entry.key;
    if (!listening) {
      // Subscribed on first use, so an admin command that never authenticates opens no LISTEN connection.
      listening = true;
      store.listen?.(API_KEYS_CHANNEL, forget);
    }
    const startedIn = generation;
    const readAt = clock.now().getTime();
    const key = await store.read((db) => findApiKeyByHash(db, secretHash));
    if (key && !key.revokedAt && startedIn === generation) {
      remembered.delete(secretHash);
      if (remembered.size >= CACHE_MAX_KEYS) remembered.delete(remembered.keys().next().value!);
      remembered.set(secretHash, { key, readAt });
    }
    return key;
  }

  async function authenticate(token: string): Promise<ApiKeyPrincipal> {
    if (!isWellFormedApiKey(token)) {
      throw fail.unauthenticated('This operation needs an API key (mos_live_… or mos_test_…); the bearer token is not one.');
    }
    const key = await lookUp(hashApiKey(token));
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
    return { kind: 'apiKey', accountId: key.accountId, livemode, keyId: key.keyId, role: key.role, scopes: key.scopes, apiVersion: key.apiVersion };
  }

  return { authenticate, forget };
}
