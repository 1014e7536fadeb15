/**
 * The account's API version in the dashboard: shown on the overview and the settings page with the
 * changes an upgrade brings (from the change modules), upgraded in one action and rolled back
 * within 72 hours, each recorded in the audit log; requests follow at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { setAccountApiVersion } from '../../src/store/accounts.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
const HOUR = 3_600_000;
const clock = manualClock(Date.parse('2026-12-07T09:00:00Z'));
let app: TestApp;
let admin: DashboardClient;
let apiKey: string;
let accountId: string;

const versionOfRequests = async () => (await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${apiKey}` } })).headers.get('mos-version');
const auditActions = async () => {
  const response = await app.fetch('/v1/audit-events', { headers: { Authorization: `Bearer ${apiKey}` } });
  return ((await response.json()) as { data: { action: string; change: unknown }[] }).data;
};

beforeAll(async () => {
  app = await startTestApp({ clock });
  const signedUp = await signUpWith(app.baseUrl, { name: 'Early Lending', email: 'ana@early.test', password: PASSWORD });
  admin = signedUp.client;
  apiKey = signedUp.firstKey;
  // As an account made before versions existed: pinned to the first one.
  ({ accountId } = (await (await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${apiKey}` } })).json()) as { accountId: string });
  await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, accountId, { apiVersion: FIRST_VERSION, previousApiVersion: null, changedAt: null }));
  app.ctx.authenticate.apiKeyRevoked();
});
afterAll(() => app?.close());

describe('the API version in the dashboard', () => {
  it('shows the pinned version on the overview and, on the settings page, the changes an upgrade brings', async () => {
    expect((await admin.get('/dashboard')).body).toContain(`API version <a href="/dashboard/settings#api-version">${FIRST_VERSION}</a>`);
    const settings = await admin.get('/dashboard/settings');
    expect(settings.body).toContain(`answered in <strong>${FIRST_VERSION}</strong>`);
    expect(settings.body).toContain('Applications gained the status <code>clear_to_close</code>'.replace(/<\/?code>/g, '`'));
    expect(settings.body).toContain(`Upgrade to ${CURRENT_VERSION}`);
    expect(settings.body).not.toContain('Roll back');
  });

  it('upgrades in one action, recorded in the audit log; requests are answered in the new version at once', async () => {
    expect(await versionOfRequests()).toBe(FIRST_VERSION);
    const upgraded = await admin.submit('/dashboard/settings', '/dashboard/settings/api-version/upgrade', {});
    expect(upgraded.status).toBe(303);
    expect(await versionOfRequests()).toBe(CURRENT_VERSION);
    const [entry] = await auditActions();
    expect(entry).toMatchObject({ action: 'account.apiVersionUpgraded', change: { before: { apiVersion: FIRST_VERSION }, after: { apiVersion: CURRENT_VERSION } } });
    const settings = await admin.get('/dashboard/settings');
    expect(settings.body).toContain(`Roll back to ${FIRST_VERSION}`);
    expect(settings.body).not.toContain('Upgrade to');
  });

  it('rolls back within 72 hours, recorded in the audit log, and offers no rollback after that', async () => {
    // The upgrade made 71 hours ago (a session would not last that long on the manual clock).
    const upgradedAgo = async (hours: number) => {
      await app.ctx.store.transaction((tx) =>
        setAccountApiVersion(tx, accountId, { apiVersion: CURRENT_VERSION, previousApiVersion: FIRST_VERSION, changedAt: new Date(clock.now().getTime() - hours * HOUR).toISOString() }),
      );
      app.ctx.authenticate.apiKeyRevoked();
    };
    await upgradedAgo(71);
    const rolledBack = await admin.submit('/dashboard/settings', '/dashboard/settings/api-version/rollback', {});
    expect(rolledBack.status).toBe(303);
    expect(await versionOfRequests()).toBe(FIRST_VERSION);
    expect((await auditActions())[0]).toMatchObject({ action: 'account.apiVersionRolledBack', change: { before: { apiVersion: CURRENT_VERSION }, after: { apiVersion: FIRST_VERSION } } });

    await upgradedAgo(73);
    const settings = await admin.get('/dashboard/settings');
    expect(settings.body).not.toContain('Roll back');
    const refused = await admin.submit('/dashboard/settings', '/dashboard/settings/api-version/rollback', {});
    expect(refused.status).toBe(409);
    expect(await versionOfRequests()).toBe(CURRENT_VERSION);
  });
});
