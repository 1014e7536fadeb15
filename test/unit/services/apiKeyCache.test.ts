/**
 * The API key authenticator remembers valid keys (src/services/authentication.ts); these pin the
 * cases where remembering could let a revoked key through, against a store whose reads the test
 * holds and releases.
 */
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { generateApiKey, hashApiKey } from '../../../src/domain/accounts/apiKeyFormat.ts';
import { SHARED_CACHE_TTL_MS, apiKeyAuthenticator } from '../../../src/services/authentication.ts';
import type { ApiKeyRecord } from '../../../src/store/apiKeys.ts';

function fakeStore(records: Map<string, ApiKeyRecord>) {
  let reads = 0;
  let hold: Promise<void> | null = null;
  const store = {
    reads: () => reads,
    /** Reads started from now on read at once, but answer only when `release` is called. */
    holdReads(): () => void {
      let release!: () => void;
      hold = new Promise<void>((resolve) => (release = resolve));
      return () => {
        hold = null;
        release();
      };
    },
    async read<T>(fn: (db: unknown) => Promise<T>): Promise<T> {
      reads += 1;
      const db = {
        get: async (_sql: string, params: string[]) => {
          const record = records.get(params[0]!);
          return record && { id: record.keyId, account_id: record.accountId, name: record.name, role: record.role, scopes: record.scopes === null ? null : JSON.stringify(record.scopes), hint: record.hint, created_at: record.createdAt, last_used_at: new Date().toISOString(), revoked_at: record.revokedAt };
        },
      };
      const result = await fn(db);
      if (hold) await hold;
      return result;
    },
    transaction: async () => undefined,
  };
  return store;
}

function setUp() {
  const token = generateApiKey(true);
  const record: ApiKeyRecord = { keyId: 'key_1', accountId: 'acc_1', name: 'k', role: 'member', scopes: null, hint: 'h', createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null };
  const records = new Map([[hashApiKey(token), record]]);
  const store = fakeStore(records);
  const ctx = { store, clock: { now: () => new Date() }, log: { warn: () => {} } } as unknown as AppContext;
  return { token, record, store, auth: apiKeyAuthenticator(ctx) };
}

describe('apiKeyAuthenticator', () => {
  it('reads a valid key once, then answers from memory', async () => {
    const { token, store, auth } = setUp();
    for (let i = 0; i < 5; i++) await auth.authenticate(token);
    expect(store.reads()).toBe(1);
  });

  it('a key revoked and forgotten is read again and refused', async () => {
    const { token, record, auth } = setUp();
    await auth.authenticate(token);
    record.revokedAt = '2026-01-02T00:00:00.000Z';
    auth.forget();
    await expect(auth.authenticate(token)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('a look-up in flight while a revocation commits does not remember what it read', async () => {
    const { token, record, store, auth } = setUp();
    const release = store.holdReads();
    const inFlight = auth.authenticate(token); // has read the key as valid, not yet answered
    await new Promise((resolve) => setImmediate(resolve));
    record.revokedAt = '2026-01-02T00:00:00.000Z';
    auth.forget();
    release();
    await inFlight; // the request that raced the revocation may pass, as it began before it
    await expect(auth.authenticate(token)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(store.reads()).toBe(2);
  });

  it('never remembers an unknown or revoked key', async () => {
    const { record, store, auth } = setUp();
    record.revokedAt = '2026-01-02T00:00:00.000Z';
    const unknown = generateApiKey(true);
    for (let i = 0; i < 3; i++) await expect(auth.authenticate(unknown)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(store.reads()).toBe(3);
  });
});

describe('apiKeyAuthenticator: what it answers', () => {
  it('a valid key: its account, mode, id and role; a malformed one is refused without a read; unknown, revoked and wrong-mode keys each with their reason', async () => {
    const { token, store, auth } = setUp();
    expect(await auth.authenticate(token)).toEqual({ kind: 'apiKey', accountId: 'acc_1', livemode: true, keyId: 'key_1', role: 'member', scopes: null });
    const malformed = auth.authenticate(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`); // its checksum broken
    await expect(malformed).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'This operation needs an API key (mos_live_… or mos_test_…); the bearer token is not one.' });
    expect(store.reads()).toBe(1);
    await expect(auth.authenticate(generateApiKey(true))).rejects.toMatchObject({ detail: 'The API key is not valid.' });

    const revoked = setUp();
    revoked.record.revokedAt = '2026-01-02T00:00:00.000Z';
    await expect(revoked.auth.authenticate(revoked.token)).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'The API key has been revoked.' });

    // A key whose prefix says live, stored for a test environment (or the other way round), is not valid.
    const other = setUp();
    other.record.accountId = 'acc_1.test';
    await expect(other.auth.authenticate(other.token)).rejects.toMatchObject({ kind: 'unauthenticated', detail: 'The API key is not valid.' });
  });

  it("records a key's use at most once a minute, off the request's path: a failed record is logged, not the request's failure", async () => {
    let now = Date.parse('2026-11-21T18:00:00.000Z');
    const token = generateApiKey(false);
    const record: ApiKeyRecord = { keyId: 'key_t', accountId: 'acc_2.test', name: 'k', role: 'admin', scopes: null, hint: 'h', createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null };
    const touches: string[] = [];
    const warnings: string[] = [];
    const store = {
      read: async <T>(fn: (db: unknown) => Promise<T>) =>
        fn({ get: async () => ({ id: record.keyId, account_id: record.accountId, name: 'k', role: record.role, scopes: null, hint: 'h', created_at: record.createdAt, last_used_at: null, revoked_at: null }) }),
      transaction: async (fn: (tx: unknown) => Promise<unknown>) => {
        touches.push(new Date(now).toISOString());
        if (touches.length === 2) throw new Error('disk full');
        return fn({ run: async () => ({ changes: 1 }) });
      },
    };
    const ctx = { store, clock: { now: () => new Date(now) }, log: { warn: (_fields: unknown, message: string) => void warnings.push(message) } } as unknown as AppContext;
    const auth = apiKeyAuthenticator(ctx);
    expect(await auth.authenticate(token)).toMatchObject({ livemode: false, accountId: 'acc_2.test', role: 'admin' });
    now += 59_999;
    await auth.authenticate(token);
    expect(touches).toEqual(['2026-11-21T18:00:00.000Z']);
    now += 1;
    expect(await auth.authenticate(token)).toMatchObject({ keyId: 'key_t' }); // its touch fails: the call does not
    await new Promise((resolve) => setImmediate(resolve));
    expect(touches).toEqual(['2026-11-21T18:00:00.000Z', '2026-11-21T18:01:00.000Z']);
    expect(warnings).toEqual(['could not record API key use']);
  });

  it('instances sharing a database: a key is trusted for 2 s by the clock, and forgotten at once on the revocation channel', async () => {
    let now = Date.parse('2026-11-21T18:00:00.000Z');
    const { token, record, store } = setUp();
    const listeners: Array<[string, () => void]> = [];
    const shared = Object.assign(store, { sharedByInstances: true, listen: (channel: string, onMessage: () => void) => void listeners.push([channel, onMessage]) });
    const ctx = { store: shared, clock: { now: () => new Date(now) }, log: { warn: () => {} } } as unknown as AppContext;
    const auth = apiKeyAuthenticator(ctx);
    await auth.authenticate(token);
    await auth.authenticate(token);
    expect(store.reads()).toBe(1);
    expect(listeners.map(([channel]) => channel)).toEqual(['mos_api_keys']); // subscribed once, on first use
    now += SHARED_CACHE_TTL_MS - 1;
    await auth.authenticate(token);
    expect(store.reads()).toBe(1);
    now += 1;
    await auth.authenticate(token);
    expect(store.reads()).toBe(2); // read again after 2 s
    // Another instance revoked it: the notice makes this one forget at once.
    record.revokedAt = '2026-11-21T18:00:02.000Z';
    listeners[0]![1]();
    await expect(auth.authenticate(token)).rejects.toMatchObject({ detail: 'The API key has been revoked.' });
    expect(listeners).toHaveLength(1);
  });

  it('remembers at most 10,000 keys: past that the oldest is read again, the newer ones are not', async () => {
    const records = new Map<string, ApiKeyRecord>();
    const tokens = Array.from({ length: 10_001 }, (_, i) => {
      const token = generateApiKey(true);
      records.set(hashApiKey(token), { keyId: `key_${i}`, accountId: 'acc_1', name: 'k', role: 'member', scopes: null, hint: 'h', createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null });
      return token;
    });
    const store = fakeStore(records);
    const auth = apiKeyAuthenticator({ store, clock: { now: () => new Date() }, log: { warn: () => {} } } as unknown as AppContext);
    for (const token of tokens) await auth.authenticate(token);
    expect(store.reads()).toBe(10_001);
    await auth.authenticate(tokens[10_000]!);
    await auth.authenticate(tokens[1]!);
    expect(store.reads()).toBe(10_001); // the newest and the second oldest are remembered
    await auth.authenticate(tokens[0]!);
    expect(store.reads()).toBe(10_002); // the oldest was dropped for the 10,001st
  });
});
