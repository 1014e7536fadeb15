/**
 * The API key authenticator remembers valid keys (src/services/authentication.ts); these pin the
 * cases where remembering could let a revoked key through, against a store whose reads the test
 * holds and releases.
 */
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { generateApiKey, hashApiKey } from '../../../src/domain/accounts/apiKeyFormat.ts';
import { apiKeyAuthenticator } from '../../../src/services/authentication.ts';
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
          return record && { id: record.keyId, account_id: record.accountId, name: record.name, role: record.role, hint: record.hint, created_at: record.createdAt, last_used_at: new Date().toISOString(), revoked_at: record.revokedAt };
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
  const record: ApiKeyRecord = { keyId: 'key_1', accountId: 'acc_1', name: 'k', role: 'member', hint: 'h', createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null };
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
