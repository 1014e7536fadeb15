/**
 * POST /v1/account/api-version: an admin key upgrades the account's pinned version to the current
 * one, or rolls an upgrade back to the version before it within 72 hours (the test's clock moves),
 * each recorded in the audit log; requests follow at once. Refused, changing nothing: a member key,
 * a restricted key without apiKeys:write, a test key, another account's key (it acts on its own
 * account only), an unknown, early, future or malformed version, an older version that is not the
 * one before the upgrade, and a rollback after 72 hours. Both engines (test/api/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, FIRST_VERSION, VERSIONS } from '../../src/domain/versions/registry.ts';
import { setAccountApiVersion } from '../../src/store/accounts.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

const HOUR = 3_600_000;
const clock = manualClock(Date.parse('2026-12-07T09:00:00Z'));
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ clock });
});
afterAll(() => app?.close());

/** A new account pinned to the first version, as one made before versions existed. */
async function earlyAccount(name: string): Promise<TestAccount> {
  const account = await app.newAccount(name);
  await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, account.accountId, { apiVersion: FIRST_VERSION, previousApiVersion: null, changedAt: null }));
  app.ctx.authenticate.apiKeyRevoked();
  return account;
}

const change = (key: string, body: unknown) =>
  app.fetch('/v1/account/api-version', { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const pinned = async (key: string) => (await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${key}` } })).headers.get('mos-version');

const auditActions = async (key: string) => {
  const response = await app.fetch('/v1/audit-events', { headers: { Authorization: `Bearer ${key}` } });
  return ((await response.json()) as { data: { action: string; actor: { type: string; id: string | null }; change: unknown }[] }).data.filter((e) => e.action.startsWith('account.apiVersion'));
};

describe('changeApiVersion', () => {
  describe('upgrading and rolling back with an admin key', () => {
    it('upgrades to the current version, with 72 hours to roll back, recorded in the audit log; requests follow at once', async () => {
      const account = await earlyAccount('Upgrading Lending');
      expect(await pinned(account.apiKey)).toBe(FIRST_VERSION);
      const response = await change(account.apiKey, { version: CURRENT_VERSION });
      expect(response.status).toBe(200);
      // Answered in the version the request was made in.
      expect(response.headers.get('mos-version')).toBe(FIRST_VERSION);
      expect(await response.json()).toEqual({
        apiVersion: CURRENT_VERSION,
        currentVersion: CURRENT_VERSION,
        rollback: { toVersion: FIRST_VERSION, until: new Date(clock.now().getTime() + 72 * HOUR).toISOString() },
      });
      expect(await pinned(account.apiKey)).toBe(CURRENT_VERSION);
      expect(await pinned(account.memberKey)).toBe(CURRENT_VERSION);
      const [entry] = await auditActions(account.apiKey);
      expect(entry).toMatchObject({ action: 'account.apiVersionUpgraded', actor: { type: 'apiKey' }, change: { before: { apiVersion: FIRST_VERSION }, after: { apiVersion: CURRENT_VERSION } } });

      const again = await change(account.apiKey, { version: CURRENT_VERSION });
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ code: 'api_version_current' });
      expect(await auditActions(account.apiKey)).toHaveLength(1);
    });

    it('rolls back to the version before the upgrade within 72 hours, recorded; then there is nothing to roll back', async () => {
      const account = await earlyAccount('Rolling Lending');
      expect((await change(account.apiKey, { version: CURRENT_VERSION })).status).toBe(200);
      clock.advance(71 * HOUR);
      const response = await change(account.apiKey, { version: FIRST_VERSION });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ apiVersion: FIRST_VERSION, currentVersion: CURRENT_VERSION, rollback: null });
      expect(await pinned(account.apiKey)).toBe(FIRST_VERSION);
      expect((await auditActions(account.apiKey))[0]).toMatchObject({ action: 'account.apiVersionRolledBack', change: { before: { apiVersion: CURRENT_VERSION }, after: { apiVersion: FIRST_VERSION } } });

      const twice = await change(account.apiKey, { version: FIRST_VERSION });
      expect(twice.status).toBe(409);
      expect(await twice.json()).toMatchObject({ code: 'api_version_rollback_unavailable' });
      expect(await pinned(account.apiKey)).toBe(FIRST_VERSION);
      expect(await auditActions(account.apiKey)).toHaveLength(2);
    });

    it('refuses a rollback more than 72 hours after the upgrade, changing nothing', async () => {
      const account = await earlyAccount('Late Lending');
      expect((await change(account.apiKey, { version: CURRENT_VERSION })).status).toBe(200);
      clock.advance(72 * HOUR + 1000);
      const response = await change(account.apiKey, { version: FIRST_VERSION });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'api_version_rollback_unavailable' });
      expect(await pinned(account.apiKey)).toBe(CURRENT_VERSION);
      expect(await auditActions(account.apiKey)).toHaveLength(1);
    });

    it('refuses a move to an older version that was never the one before an upgrade, changing nothing', async () => {
      const account = await app.newAccount('Current Lending');
      const response = await change(account.apiKey, { version: FIRST_VERSION });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'api_version_rollback_unavailable' });
      expect(await pinned(account.apiKey)).toBe(CURRENT_VERSION);
      expect(await auditActions(account.apiKey)).toHaveLength(0);
    });
  });

  describe('refused callers and versions, changing nothing', () => {
    let account: TestAccount;
    beforeAll(async () => {
      account = await earlyAccount('Guarded Lending');
    });
    const unchanged = async () => {
      expect(await pinned(account.apiKey)).toBe(FIRST_VERSION);
      expect(await auditActions(account.apiKey)).toHaveLength(0);
    };

    it('refuses a member key with 403 forbidden', async () => {
      const response = await change(account.memberKey, { version: CURRENT_VERSION });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'forbidden' });
      await unchanged();
    });

    it('refuses a restricted key without apiKeys:write with 403 scope_missing', async () => {
      const { data } = await account.client.POST('/v1/api-keys', { body: { name: 'reader', scopes: { applications: 'write', apiKeys: 'read', events: 'read' } } });
      const response = await change(data!.apiKey, { version: CURRENT_VERSION });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'scope_missing', requiredScope: 'apiKeys:write' });
      await unchanged();
    });

    it("refuses a test key: the version is the account's, shared with live mode", async () => {
      const response = await change(account.testKey, { version: CURRENT_VERSION });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'live_key_required' });
      await unchanged();
    });

    it("changes only the caller's own account: another account's admin key upgrades that account, never this one", async () => {
      const other = await earlyAccount('Other Lending');
      expect((await change(other.apiKey, { version: CURRENT_VERSION })).status).toBe(200);
      expect(await pinned(other.apiKey)).toBe(CURRENT_VERSION);
      await unchanged();
    });

    it.each([
      ['an unknown date', '2026-11-25', 400, 'api_version_invalid'],
      ['a date before the first version', '2025-01-01', 400, 'api_version_invalid'],
      ['a future date', '2099-01-01', 400, 'api_version_invalid'],
      ['an impossible date', '2026-02-30', 400, 'api_version_invalid'],
      ['garbage', 'latest', 400, 'validation_failed'],
      ['a number', 20261207, 400, 'validation_failed'],
      ['a huge string', 'x'.repeat(100_000), 400, 'validation_failed'],
    ])('refuses %s', async (_what, version, status, code) => {
      const response = await change(account.apiKey, { version });
      expect(response.status).toBe(status);
      const problem = (await response.json()) as { code: string; supportedVersions?: string[] };
      expect(problem.code).toBe(code);
      if (code === 'api_version_invalid') expect(problem.supportedVersions).toEqual([...VERSIONS]);
      await unchanged();
    });

    it('refuses a body without a version, with other fields, or not JSON', async () => {
      for (const body of [{}, { version: CURRENT_VERSION, force: true }, 'not json', '{"version":', JSON.stringify([CURRENT_VERSION])]) {
        const response = await change(account.apiKey, body);
        expect(response.status, JSON.stringify(body)).toBe(400);
      }
      await unchanged();
    });
  });
});
