import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  account = await app.newAccount();
});
afterAll(() => app.close());

describe('getAccount', () => {
  it("returns the API key's own account", async () => {
    const { data, response } = await account.member.GET('/v1/account');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ accountId: account.accountId, name: 'Harbor Lending', currency: 'USD' });
  });
});

describe('createApiKey', () => {
  it('returns the secret once, and the new key authenticates', async () => {
    const { data, response } = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Reporting job' } });
    expect(response.status).toBe(201);
    expect(data!.apiKey).toMatch(/^mos_live_[0-9A-Za-z]{38}$/);
    expect(data!.hint).toBe(`mos_live_…${data!.apiKey.slice(-4)}`);
    const again = await app.clientFor(data!.apiKey).GET('/v1/account');
    expect(again.response.status).toBe(200);
  });

  it('a member key may not create keys (403)', async () => {
    const { error, response } = await account.member.POST('/v1/api-keys', { body: { role: 'admin', name: 'Escalation' } });
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'forbidden' });
  });

  it('never stores the secret for a retry: a retried Idempotency-Key gets 409 naming the key, not a second key', async () => {
    const headers = { 'Idempotency-Key': 'retry-me-1' };
    const first = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Once' }, headers });
    expect(first.response.status).toBe(201);
    const second = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Once' }, headers });
    expect(second.response.status).toBe(409);
    expect(second.error).toMatchObject({ code: 'idempotency_secret_withheld' });
    expect(second.error!.detail).toContain(first.data!.keyId);
    expect(second.error!.detail).not.toContain(first.data!.apiKey);
    const stored = await app.ctx.store.read((db) => db.all<{ response_body: string }>('SELECT response_body FROM idempotency_keys'));
    expect(JSON.stringify(stored)).not.toContain(first.data!.apiKey);
    const { data } = await account.client.GET('/v1/api-keys', { params: { query: { limit: 100 } } });
    expect(data!.data.filter((key) => key.name === 'Once')).toHaveLength(1);
  });

  it('refuses an Idempotency-Key reused with another body (422)', async () => {
    const headers = { 'Idempotency-Key': 'retry-me-2' };
    await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'First use' }, headers });
    const other = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Other' }, headers });
    expect(other.response.status).toBe(422);
    expect(other.error).toMatchObject({ code: 'idempotency_key_reused' });
  });
});

describe('listApiKeys', () => {
  it('pages newest first with a cursor and never shows a secret', async () => {
    const fresh = await app.newAccount('Paging Bank');
    for (const name of ['a', 'b', 'c']) await fresh.client.POST('/v1/api-keys', { body: { role: 'member', name } });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await fresh.client.GET('/v1/api-keys', { params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } } });
      seen.push(...data!.data.map((key) => key.name));
      for (const key of data!.data) expect(key).not.toHaveProperty('apiKey');
      expect(JSON.stringify(data)).not.toContain(fresh.apiKey);
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['c', 'b', 'a', 'Member key', 'First admin key']);
  });

  it('refuses a tampered cursor with 400', async () => {
    const { response, error } = await account.client.GET('/v1/api-keys', { params: { query: { cursor: 'bm9wZQ' } } });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: 'invalid_cursor' });
  });
});

describe('revokeApiKey', () => {
  it('a revoked key gets 401 at once', async () => {
    const created = await account.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Short-lived' } });
    // Used first, so the instance remembers it as valid: the revocation must undo that, not wait it out.
    for (let i = 0; i < 3; i++) expect((await app.clientFor(created.data!.apiKey).GET('/v1/account')).response.status).toBe(200);
    const revoked = await account.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: created.data!.keyId } } });
    expect(revoked.response.status).toBe(200);
    expect(revoked.data!.revokedAt).not.toBeNull();
    const after = await app.clientFor(created.data!.apiKey).GET('/v1/account');
    expect(after.response.status).toBe(401);
  });

  it("another account's key is 404, not 403", async () => {
    const other = await app.newAccount('Other Lender');
    const { data } = await other.client.GET('/v1/api-keys');
    const theirs = data!.data[0]!.keyId;
    const { response } = await account.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: theirs } } });
    expect(response.status).toBe(404);
  });

  it("refuses to revoke the account's last admin key", async () => {
    const solo = await app.newAccount('Solo Broker');
    const { data } = await solo.client.GET('/v1/api-keys');
    const adminKey = data!.data.find((key) => key.role === 'admin')!;
    const { response, error } = await solo.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: adminKey.keyId } } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'last_admin_key' });
  });
});

describe('listApiKeys', () => {
  const clock = manualClock(Date.parse('2026-11-21T18:00:00.000Z'));
  let timed: TestApp;
  let owner: TestAccount;
  beforeAll(async () => {
    timed = await startTestApp({ clock });
    owner = await timed.newAccount('Last Used Lending');
  });
  afterAll(() => timed?.close());

  async function lastUsedAt(keyId: string): Promise<string | null> {
    const { data } = await owner.client.GET('/v1/api-keys', { params: { query: { limit: 100 } } });
    const key = data!.data.find((k) => k.keyId === keyId);
    expect(key, keyId).toBeDefined();
    return key!.lastUsedAt;
  }

  it('shows lastUsedAt: null until a key is used, then when it last authenticated a request, updated at most once a minute', async () => {
    const created = await owner.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Reporting job' } });
    const sentinel = await owner.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Sentinel' } });
    const { keyId, apiKey } = created.data!;
    expect(created.data!.lastUsedAt).toBeNull();
    expect(await lastUsedAt(keyId)).toBeNull();

    const t0 = clock.now().toISOString();
    expect((await timed.clientFor(apiKey).GET('/v1/account')).response.status).toBe(200);
    await eventually(async () => (await lastUsedAt(keyId)) === t0);

    // Used again within the minute: not written again. The sentinel key's first use is recorded
    // after any write this use would have made (writes are serialised in order), so once the
    // sentinel's shows, the key's would have too.
    clock.advance(30_000);
    expect((await timed.clientFor(apiKey).GET('/v1/account')).response.status).toBe(200);
    expect((await timed.clientFor(sentinel.data!.apiKey).GET('/v1/account')).response.status).toBe(200);
    await eventually(async () => (await lastUsedAt(sentinel.data!.keyId)) === clock.now().toISOString());
    expect(await lastUsedAt(keyId)).toBe(t0);

    // A minute after it was recorded, the next use is recorded.
    clock.advance(30_000);
    const t1 = clock.now().toISOString();
    expect((await timed.clientFor(apiKey).GET('/v1/account')).response.status).toBe(200);
    await eventually(async () => (await lastUsedAt(keyId)) === t1);
  });
});

describe('restricted keys (scopes instead of a role)', () => {
  const activeKeys = async () => (await account.client.GET('/v1/api-keys', { params: { query: { limit: 100 } } })).data!.data.filter((k) => !k.revokedAt).length;

  it('an admin creates a key with scopes: role restricted, the scopes shown at creation and in the list; role keys show scopes null', async () => {
    const { data, response } = await account.client.POST('/v1/api-keys', { body: { name: 'CRM sync', scopes: { applications: 'read', events: 'read', quotes: 'none' } } });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ role: 'restricted', scopes: { applications: 'read', events: 'read' } });
    expect(Object.keys(data!.scopes!)).toEqual(['applications', 'events']);
    const list = await account.client.GET('/v1/api-keys', { params: { query: { limit: 100 } } });
    expect(list.data!.data.find((k) => k.keyId === data!.keyId)).toMatchObject({ role: 'restricted', scopes: { applications: 'read', events: 'read' } });
    expect(list.data!.data.find((k) => k.name === 'First admin key')).toMatchObject({ role: 'admin', scopes: null });
    // It reads applications and events, and nothing else.
    const crm = app.clientFor(data!.apiKey);
    expect((await crm.GET('/v1/applications')).response.status).toBe(200);
    expect((await crm.GET('/v1/events')).response.status).toBe(200);
    const quote = await crm.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    expect(quote.response.status).toBe(403);
    expect(quote.error).toMatchObject({ code: 'scope_missing', requiredScope: 'quotes:write' });
  });

  it('a restricted key with apiKeys:write creates keys only within its own scopes, never a role key (403 scope_escalation)', async () => {
    const creator = await account.client.POST('/v1/api-keys', { body: { name: 'Key maker', scopes: { apiKeys: 'write', applications: 'write', events: 'read' } } });
    const maker = app.clientFor(creator.data!.apiKey);
    const within = await maker.POST('/v1/api-keys', { body: { name: 'Narrower', scopes: { applications: 'read', events: 'read' } } });
    expect(within.response.status).toBe(201);
    expect(within.data).toMatchObject({ role: 'restricted', scopes: { applications: 'read', events: 'read' } });

    const before = await activeKeys();
    const refused: Array<[string, Record<string, unknown>]> = [
      ['another family', { name: 'More', scopes: { quotes: 'read' } }],
      ['a higher level', { name: 'More', scopes: { events: 'write' } }],
      ['an admin key', { name: 'Admin', role: 'admin' }],
      ['a member key', { name: 'Member', role: 'member' }],
    ];
    for (const [what, body] of refused) {
      const { error, response } = await maker.POST('/v1/api-keys', { body: body as never });
      expect(response.status, what).toBe(403);
      expect(error, what).toMatchObject({ code: 'scope_escalation' });
    }
    expect(await activeKeys()).toBe(before);
  });

  it('a restricted key with apiKeys:write revokes only restricted keys within its scopes (403 scope_escalation for the others)', async () => {
    const maker = app.clientFor((await account.client.POST('/v1/api-keys', { body: { name: 'Revoker', scopes: { apiKeys: 'write', events: 'read' } } })).data!.apiKey);
    const narrow = (await account.client.POST('/v1/api-keys', { body: { name: 'Narrow', scopes: { events: 'read' } } })).data!;
    const wide = (await account.client.POST('/v1/api-keys', { body: { name: 'Wide', scopes: { quotes: 'write' } } })).data!;
    const adminKey = (await account.client.POST('/v1/api-keys', { body: { name: 'Another admin', role: 'admin' } })).data!;
    for (const keyId of [wide.keyId, adminKey.keyId]) {
      const { error, response } = await maker.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId } } });
      expect(response.status).toBe(403);
      expect(error).toMatchObject({ code: 'scope_escalation' });
      expect((await app.clientFor(keyId === wide.keyId ? wide.apiKey : adminKey.apiKey).GET('/v1/account')).response.status).toBe(200);
    }
    const revoked = await maker.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: narrow.keyId } } });
    expect(revoked.response.status).toBe(200);
    expect((await app.clientFor(narrow.apiKey).GET('/v1/account')).response.status).toBe(401);
  });

  it('a restricted key without apiKeys:write may not create keys, even narrower ones (403 scope_missing)', async () => {
    const reader = await account.client.POST('/v1/api-keys', { body: { name: 'Reader', scopes: { apiKeys: 'read', applications: 'read' } } });
    const client = app.clientFor(reader.data!.apiKey);
    expect((await client.GET('/v1/api-keys')).response.status).toBe(200);
    const { error, response } = await client.POST('/v1/api-keys', { body: { name: 'Narrower', scopes: { applications: 'read' } } });
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'scope_missing', requiredScope: 'apiKeys:write' });
  });

  it('a member key may not create a restricted key either (403 forbidden: creating keys needs an admin)', async () => {
    const { error, response } = await account.member.POST('/v1/api-keys', { body: { name: 'Sneaky', scopes: { applications: 'read' } } });
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'forbidden' });
  });

  it('a request with both a role and scopes, neither, role restricted without scopes, or an unknown family → 400, nothing created', async () => {
    const before = await activeKeys();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'Both', role: 'admin', scopes: { applications: 'read' } }, '/role'],
      [{ name: 'Neither' }, '/role'],
      [{ name: 'No scopes', role: 'restricted' }, '/scopes'],
      [{ name: 'Unknown family', scopes: { mortgages: 'read' } }, '/scopes/mortgages'],
      [{ name: 'Unknown level', scopes: { applications: 'admin' } }, '/scopes/applications'],
    ];
    for (const [body, pointer] of cases) {
      const { error, response } = await account.client.POST('/v1/api-keys', { body: body as never });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(error!.errors!.map((e) => e.pointer), JSON.stringify(body)).toContain(pointer);
    }
    expect(await activeKeys()).toBe(before);
  });
});
