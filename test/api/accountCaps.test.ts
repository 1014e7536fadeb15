/**
 * Per-account caps, so that one account can multiply neither deliveries nor its rate-limit
 * allowance without bound: webhook endpoints (WEBHOOK_ENDPOINTS_PER_ACCOUNT, default 16), one
 * endpoint per URL, and active API keys (API_KEYS_PER_ACCOUNT).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { publish } from '../../src/events/outbox.ts';
import { newId } from '../../src/ids.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

const KEY_CAP = 5;
let app: TestApp;

beforeAll(async () => {
  // The endpoint cap is left at its default; the key cap is lowered so the test makes few keys.
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', API_KEYS_PER_ACCOUNT: String(KEY_CAP) } });
});
afterAll(() => app?.close());

async function registerHook(owner: TestAccount, url: string) {
  return owner.client.POST('/v1/webhooks', { body: { url, events: ['application.approved'] } });
}

describe('createWebhook', () => {
  it('registers at most 16 endpoints per account by default: the 17th gets 422 with the limit, deleting one makes room', async () => {
    const owner = await app.newAccount('Fan Out Lending');
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const { data, response } = await registerHook(owner, `http://127.0.0.1:9/hook-${i}`);
      expect(response.status).toBe(201);
      ids.push(data!.webhookId);
    }
    const refused = await registerHook(owner, 'http://127.0.0.1:9/hook-16');
    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ code: 'webhook_endpoint_limit_reached', limit: 16 });
    expect((refused.error as { detail: string }).detail).toContain('the most it may register (16)');

    // Another account is not affected by this one's endpoints.
    const other = await app.newAccount('Other Lending');
    expect((await registerHook(other, 'http://127.0.0.1:9/hook-0')).response.status).toBe(201);

    // One event of the full account fans out to exactly its 16 endpoints.
    const { eventId } = await app.ctx.store.transaction((tx) =>
      publish(tx, {
        accountId: owner.accountId,
        payload: { event: 'application.approved', mortgageId: newId('mtg'), status: 'approved', applicant: { name: 'Jane Doe', amount: 350000 }, timestamp: new Date().toISOString() },
        occurredAt: new Date(),
      }),
    );
    const deliveries = await app.ctx.store.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE event_id = ?', [eventId]));
    expect(Number(deliveries!.n)).toBe(16);

    const removed = await owner.client.DELETE('/v1/webhooks/{webhookId}', { params: { path: { webhookId: ids[0]! } } });
    expect(removed.response.status).toBe(204);
    expect((await registerHook(owner, 'http://127.0.0.1:9/hook-16')).response.status).toBe(201);
  });

  it('refuses a second endpoint with the same URL with 409 naming the existing one', async () => {
    const owner = await app.newAccount('Duplicate Lending');
    const first = await registerHook(owner, 'http://127.0.0.1:9/same');
    expect(first.response.status).toBe(201);
    const again = await owner.client.POST('/v1/webhooks', { body: { url: 'http://127.0.0.1:9/same', events: ['document.uploaded'] } });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'webhook_url_already_registered', existingWebhookId: first.data!.webhookId });
    expect((again.error as { detail: string }).detail).toContain(first.data!.webhookId);
    const list = await owner.member.GET('/v1/webhooks', {});
    expect(list.data!.data.map((w) => w.url)).toEqual(['http://127.0.0.1:9/same']);
    // Another account may use the same URL.
    const other = await app.newAccount('Other Duplicate Lending');
    expect((await registerHook(other, 'http://127.0.0.1:9/same')).response.status).toBe(201);
  });
});

describe('updateWebhook', () => {
  it("refuses to move an endpoint onto another endpoint's URL (409), and accepts its own URL unchanged", async () => {
    const owner = await app.newAccount('Moving Lending');
    const a = await registerHook(owner, 'http://127.0.0.1:9/a');
    const b = await registerHook(owner, 'http://127.0.0.1:9/b');
    const moved = await owner.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: b.data!.webhookId } }, body: { url: 'http://127.0.0.1:9/a' } });
    expect(moved.response.status).toBe(409);
    expect(moved.error).toMatchObject({ code: 'webhook_url_already_registered', existingWebhookId: a.data!.webhookId });
    const same = await owner.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId: a.data!.webhookId } }, body: { url: 'http://127.0.0.1:9/a' } });
    expect(same.response.status).toBe(200);
  });
});

describe('createApiKey', () => {
  it('an account holds at most API_KEYS_PER_ACCOUNT active keys: one more is 422 with the limit, revoking one makes room', async () => {
    const owner = await app.newAccount('Key Minting Lending'); // an admin and a member key
    const created: string[] = [];
    for (let i = 2; i < KEY_CAP; i++) {
      const { data, response } = await owner.client.POST('/v1/api-keys', { body: { role: 'admin', name: `Key ${i}` } });
      expect(response.status).toBe(201);
      created.push(data!.keyId);
    }
    const refused = await owner.client.POST('/v1/api-keys', { body: { role: 'member', name: 'One too many' } });
    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ code: 'api_key_limit_reached', limit: KEY_CAP });
    expect((refused.error as { detail: string }).detail).toContain(`the most it may hold (${KEY_CAP})`);
    // The operator's command line meets the same cap.
    await expect(runAdminCommand(app.ctx, 'key create', { account: owner.accountId, role: 'member' })).rejects.toThrow(/the most it may hold/);

    const revoked = await owner.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: created[0]! } } });
    expect(revoked.response.status).toBeLessThan(300);
    expect((await owner.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Room again' } })).response.status).toBe(201);
  });
});
