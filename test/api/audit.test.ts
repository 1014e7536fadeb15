/**
 * The audit log (GET /v1/audit-events and its export): each change a key, a dashboard user or the
 * operator makes is exactly one entry, with the right actor, target, outcome and place; the list
 * filters and pages; another account's entries (and the other environment's) are never listed;
 * and no entry holds a secret or a full account number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type ApiClient, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith } from '../dashboard/httpClient.ts';
import type { components } from '../../generated/api.d.ts';

type AuditEvent = components['schemas']['AuditEvent'];

const PASSWORD = 'correct horse battery staple';
const ACCOUNT_NUMBER = '000123456789';
let app: TestApp;
let owner: TestAccount;
let ownerKeyId: string;
let other: TestAccount;
/** Every secret the tests are shown; none may appear in any entry. */
const secrets: string[] = [PASSWORD, ACCOUNT_NUMBER];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
  owner = await app.newAccount('Audit Lending');
  other = await app.newAccount('Other Lending');
  secrets.push(owner.apiKey, owner.memberKey, owner.testKey, other.apiKey, other.memberKey, other.testKey);
  const keys = await owner.client.GET('/v1/api-keys');
  ownerKeyId = keys.data!.data.find((k) => k.name === 'First admin key')!.keyId;
});
afterAll(() => app?.close());

async function audit(client: ApiClient, query: Record<string, string | number> = {}): Promise<AuditEvent[]> {
  const { data, error, response } = await client.GET('/v1/audit-events', { params: { query: { limit: 100, ...query } as never } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!.data;
}

/** Runs `act` and returns the one entry of `action` it added to the log `client` reads (failing unless exactly one). */
async function exactlyOne(client: ApiClient, action: string, act: () => Promise<unknown>): Promise<AuditEvent> {
  const before = await audit(client, { action });
  await act();
  const after = await audit(client, { action });
  expect(after.length - before.length, `${action} entries added`).toBe(1);
  return after[0]!;
}

const keyActor = () => ({ type: 'apiKey', id: ownerKeyId, name: 'First admin key' });

describe('what a key does', () => {
  it('records API keys created and revoked, with the key as actor and the request it came from', async () => {
    let keyId = '';
    let requestId = '';
    const created = await exactlyOne(owner.client, 'apiKey.created', async () => {
      const { data, response } = await owner.client.POST('/v1/api-keys', { body: { name: 'Reporting job', role: 'member' }, headers: { 'User-Agent': 'audit-test/1.0', 'X-Request-Id': 'req-audit-test-1' } });
      expect(response.status).toBe(201);
      requestId = response.headers.get('x-request-id')!;
      keyId = data!.keyId;
      secrets.push(data!.apiKey);
    });
    expect(created).toMatchObject({
      actor: keyActor(),
      target: { type: 'apiKey', id: keyId },
      outcome: 'success',
      userAgent: 'audit-test/1.0',
      // The service's own id (unique), not the X-Request-Id the caller chose.
      requestId: expect.stringMatching(/^req-[0-9a-z]{26}$/),
      livemode: true,
      change: { before: null, after: { name: 'Reporting job', role: 'member' } },
    });
    expect(created.clientAddress).toMatch(/127\.0\.0\.1/);
    expect(created.requestId).toBe(requestId);
    const revoked = await exactlyOne(owner.client, 'apiKey.revoked', () => owner.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId } } }));
    expect(revoked).toMatchObject({ actor: keyActor(), target: { type: 'apiKey', id: keyId } });
    // Revoking again changes nothing, and records nothing.
    expect((await audit(owner.client, { action: 'apiKey.revoked' })).length).toBe(1);
    await owner.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId } } });
    expect((await audit(owner.client, { action: 'apiKey.revoked' })).length).toBe(1);
  });

  it('records every change of a webhook endpoint, one entry each, with the settings before and after', async () => {
    let webhookId = '';
    const created = await exactlyOne(owner.client, 'webhook.created', async () => {
      const { data } = await owner.client.POST('/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hooks', events: ['application.approved'] } });
      webhookId = data!.webhookId;
      secrets.push(data!.secret);
    });
    expect(created).toMatchObject({ actor: keyActor(), target: { type: 'webhook', id: webhookId }, change: { before: null, after: { url: 'http://127.0.0.1:9/hooks', enabled: true } } });
    const path = { params: { path: { webhookId } } };
    const updated = await exactlyOne(owner.client, 'webhook.updated', () => owner.client.PATCH('/v1/webhooks/{webhookId}', { ...path, body: { description: 'CRM sync' } }));
    expect(updated.change).toMatchObject({ before: { description: '' }, after: { description: 'CRM sync' } });
    await exactlyOne(owner.client, 'webhook.disabled', () => owner.client.PATCH('/v1/webhooks/{webhookId}', { ...path, body: { enabled: false } }));
    await exactlyOne(owner.client, 'webhook.enabled', () => owner.client.PATCH('/v1/webhooks/{webhookId}', { ...path, body: { enabled: true } }));
    await exactlyOne(owner.client, 'webhook.secretRotated', async () => {
      const { data } = await owner.client.POST('/v1/webhooks/{webhookId}/rotate-secret', path);
      secrets.push(data!.secret);
    });
    let eventId = '';
    const test = await exactlyOne(owner.client, 'webhook.testSent', async () => {
      const { data } = await owner.client.POST('/v1/webhooks/{webhookId}/test', { ...path, body: { event: 'application.approved' } });
      eventId = data!.eventId;
    });
    expect(test.target).toEqual({ type: 'webhook', id: webhookId });
    const retried = await exactlyOne(owner.client, 'webhook.deliveryRetried', () =>
      owner.client.POST('/v1/webhooks/{webhookId}/deliveries/{eventId}/retry', { params: { path: { webhookId, eventId } } }),
    );
    expect(retried.change).toEqual({ before: null, after: { eventId } });
    await exactlyOne(owner.client, 'webhook.recovered', () =>
      owner.client.POST('/v1/webhooks/{webhookId}/recover', { ...path, body: { since: new Date(Date.now() - 3_600_000).toISOString() } }),
    );
    const deleted = await exactlyOne(owner.client, 'webhook.deleted', () => owner.client.DELETE('/v1/webhooks/{webhookId}', path));
    expect(deleted.change).toMatchObject({ before: { url: 'http://127.0.0.1:9/hooks', description: 'CRM sync' }, after: null });
    // Everything about the endpoint, by target.
    expect((await audit(owner.client, { targetType: 'webhook', targetId: webhookId })).length).toBe(9);
  });

  it('records pricing and underwriting settings with the old and the new values', async () => {
    const pricing = (await owner.client.GET('/v1/pricing')).data!;
    const higher = { ...pricing.rateSheet, baseRates: pricing.rateSheet.baseRates.map((b) => ({ ...b, rate: b.rate + 1 })) };
    const priced = await exactlyOne(owner.client, 'pricing.updated', () => owner.client.PUT('/v1/pricing', { body: higher }));
    expect(priced).toMatchObject({ actor: keyActor(), target: { type: 'pricing', id: null } });
    expect((priced.change as { before: { baseRates: Array<{ rate: number }> } }).before.baseRates[0]!.rate).toBe(pricing.rateSheet.baseRates[0]!.rate);
    expect((priced.change as { after: { baseRates: Array<{ rate: number }> } }).after.baseRates[0]!.rate).toBe(pricing.rateSheet.baseRates[0]!.rate + 1);

    const { livemode: _l, updatedAt: _u, ...rules } = (await owner.client.GET('/v1/underwriting')).data!;
    const stricter = { ...rules, creditScore: { approveAtLeast: 700, referAtLeast: 650 } };
    const ruled = await exactlyOne(owner.client, 'underwriting.updated', () => owner.client.PUT('/v1/underwriting', { body: stricter }));
    expect(ruled.change).toEqual({ before: rules, after: stricter });
  });

  it('records export formats changed and exports run', async () => {
    const created = await exactlyOne(owner.client, 'exportFormat.created', () =>
      owner.client.POST('/v1/export-formats', { body: { name: 'semicolons', base: 'csv', csv: { delimiter: ';' } } }),
    );
    expect(created).toMatchObject({ target: { type: 'exportFormat', id: 'semicolons' }, change: { before: null, after: { base: 'csv' } } });
    const replaced = await exactlyOne(owner.client, 'exportFormat.replaced', () =>
      owner.client.PUT('/v1/export-formats/{formatName}', { params: { path: { formatName: 'semicolons' } }, body: { base: 'csv', csv: { delimiter: '|' } } }),
    );
    expect(replaced.change).toMatchObject({ before: { csv: { delimiter: ';' } }, after: { csv: { delimiter: '|' } } });
    const run = await exactlyOne(owner.client, 'export.run', async () => {
      const response = await app.fetch('/v1/mortgages/export?format=csv&status=approved', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
      expect(response.status).toBe(200);
      await response.text();
    });
    expect(run).toMatchObject({ actor: keyActor(), target: { type: 'export', id: 'csv' }, change: { after: { format: 'csv', status: 'approved' } } });
    await exactlyOne(owner.client, 'exportFormat.deleted', () => owner.client.DELETE('/v1/export-formats/{formatName}', { params: { path: { formatName: 'semicolons' } } }));
  });

  it('records documents downloaded and manual decisions (approve, decline)', async () => {
    const referred = async () => {
      const { data, error } = await owner.client.POST('/v1/applications', {
        body: { applicant: { name: 'Riley Referred', email: 'riley@example.test', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 660 }, term: 30, propertyValue: 400000 },
      });
      expect(error).toBeUndefined();
      const { data: submitted } = await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
      expect(submitted!.status).toBe('referred');
      return data!.mortgageId;
    };
    const first = await referred();
    const approved = await exactlyOne(owner.client, 'application.approved', () =>
      owner.client.POST('/v1/applications/{mortgageId}/approve', { params: { path: { mortgageId: first } }, body: { note: 'Verified income by phone' } }),
    );
    expect(approved).toMatchObject({ actor: keyActor(), target: { type: 'application', id: first }, change: { before: { status: 'referred' }, after: { status: 'approved', note: 'Verified income by phone' } } });
    const second = await referred();
    await exactlyOne(owner.client, 'application.declined', () => owner.client.POST('/v1/applications/{mortgageId}/decline', { params: { path: { mortgageId: second } }, body: {} }));

    const form = new FormData();
    form.set('documentType', 'bank_statement');
    form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'statement.pdf');
    const { data: draft } = await owner.client.POST('/v1/applications', { body: { applicant: { name: 'Doc Owner', amount: 200000 }, term: 30 } });
    const uploaded = await app.fetch(`/v1/applications/${draft!.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${owner.apiKey}` }, body: form });
    expect(uploaded.status).toBe(201);
    const { documentId } = (await uploaded.json()) as { documentId: string };
    const downloaded = await exactlyOne(owner.client, 'document.downloaded', async () => {
      const response = await app.fetch(`/v1/applications/${draft!.mortgageId}/documents/${documentId}/content`, { headers: { Authorization: `Bearer ${owner.apiKey}` } });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    });
    expect(downloaded).toMatchObject({ actor: keyActor(), target: { type: 'document', id: documentId } });
  });

  it('records conditions an underwriter adds, satisfies and waives (target the application, the condition in the change), and those an approval attached', async () => {
    const { data: draft } = await owner.client.POST('/v1/applications', {
      body: { applicant: { name: 'Casey Conditions', email: 'casey@example.test', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 660 }, term: 30, propertyValue: 400000 },
    });
    const mortgageId = draft!.mortgageId;
    const path = { params: { path: { mortgageId } } };
    expect((await owner.client.POST('/v1/applications/{mortgageId}/submit', path)).data!.status).toBe('referred');
    const approved = await exactlyOne(owner.client, 'application.approved', () =>
      owner.client.POST('/v1/applications/{mortgageId}/approve', { ...path, body: { note: 'Gift letter needed', conditions: [{ type: 'custom', description: 'Signed gift letter', dueBefore: 'closing' }] } }),
    );
    const attached = (approved.change as { after: { conditions: Array<{ conditionId: string; addedBy: string; status: string }> } }).after.conditions;
    expect(attached.at(-1)).toMatchObject({ type: 'custom', dueBefore: 'closing', addedBy: 'underwriter', status: 'open' });
    let conditionId = '';
    const added = await exactlyOne(owner.client, 'condition.added', async () => {
      const { data, response } = await owner.client.POST('/v1/applications/{mortgageId}/conditions', { ...path, body: { type: 'custom', description: 'Letter on the 2025 gap', dueBefore: 'funding' } });
      expect(response.status).toBe(201);
      conditionId = data!.conditions.at(-1)!.conditionId;
    });
    expect(added).toMatchObject({ actor: keyActor(), target: { type: 'application', id: mortgageId }, change: { before: null, after: { conditionId, type: 'custom', dueBefore: 'funding', status: 'open' } } });
    const satisfied = await exactlyOne(owner.client, 'condition.satisfied', () =>
      owner.client.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/satisfy', { params: { path: { mortgageId, conditionId } }, body: { note: 'Letter received' } }),
    );
    expect(satisfied).toMatchObject({ actor: keyActor(), target: { type: 'application', id: mortgageId }, change: { before: { conditionId, status: 'open' }, after: { conditionId, status: 'satisfied', note: 'Letter received' } } });
    const gift = attached.at(-1)!.conditionId;
    const waived = await exactlyOne(owner.client, 'condition.waived', () =>
      owner.client.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/waive', { params: { path: { mortgageId, conditionId: gift } }, body: { note: 'Not a gift after all' } }),
    );
    expect(waived).toMatchObject({ actor: keyActor(), target: { type: 'application', id: mortgageId }, change: { after: { conditionId: gift, status: 'waived' } } });
    // A refused change (the condition is no longer open) records nothing.
    await owner.client.POST('/v1/applications/{mortgageId}/conditions/{conditionId}/waive', { params: { path: { mortgageId, conditionId: gift } }, body: { note: 'Again' } });
    expect((await audit(owner.client, { action: 'condition.waived' })).length).toBe(1);
  });

  it('records rate locks created, extended and cancelled, with the key as actor and the lock as target', async () => {
    const { data: quote } = await owner.client.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
    let lockId = '';
    const created = await exactlyOne(owner.client, 'rateLock.created', async () => {
      const { data, response } = await owner.client.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30 } });
      expect(response.status).toBe(201);
      lockId = data!.lockId;
    });
    expect(created).toMatchObject({ actor: keyActor(), target: { type: 'rateLock', id: lockId }, change: { before: null, after: { quoteId: quote!.quoteId, periodDays: 30 } } });
    const path = { params: { path: { lockId } } };
    const extended = await exactlyOne(owner.client, 'rateLock.extended', () => owner.client.POST('/v1/rate-locks/{lockId}/extend', { ...path, body: { days: 5 } }));
    expect(extended).toMatchObject({ actor: keyActor(), target: { type: 'rateLock', id: lockId }, change: { before: { extendedDays: 0 }, after: { extendedDays: 5, days: 5 } } });
    const cancelled = await exactlyOne(owner.client, 'rateLock.cancelled', () => owner.client.POST('/v1/rate-locks/{lockId}/cancel', path));
    expect(cancelled).toMatchObject({ actor: keyActor(), target: { type: 'rateLock', id: lockId }, change: { before: { status: 'active' }, after: { status: 'cancelled' } } });
    await owner.client.POST('/v1/rate-locks/{lockId}/cancel', path);
    expect((await audit(owner.client, { action: 'rateLock.cancelled' })).length).toBe(1);
  });

  it('records the test clock advanced (with by) and reset, in the test environment', async () => {
    const advanced = await exactlyOne(owner.test, 'testClock.advanced', () => owner.test.POST('/v1/test/clock/advance', { body: { by: 'P2D' } }));
    expect(advanced).toMatchObject({
      actor: { type: 'apiKey', name: 'First test admin key' },
      target: { type: 'testClock', id: `${owner.accountId}.test` },
      livemode: false,
      change: { before: { offsetSeconds: 0 }, after: { offsetSeconds: 172800, by: 'P2D' } },
    });
    const reset = await exactlyOne(owner.test, 'testClock.reset', () => owner.test.POST('/v1/test/clock/reset'));
    expect(reset.change).toEqual({ before: { offsetSeconds: 172800 }, after: { offsetSeconds: 0 } });
    expect(await audit(owner.client, { action: 'testClock.advanced' })).toEqual([]);
  });

  it("records a key's scopes when it is created, and a refused escalation (outcome failure)", async () => {
    let keyId = '';
    let narrow = '';
    const created = await exactlyOne(owner.client, 'apiKey.created', async () => {
      const { data } = await owner.client.POST('/v1/api-keys', { body: { name: 'Key maker', scopes: { apiKeys: 'write', events: 'read' } } });
      keyId = data!.keyId;
      narrow = data!.apiKey;
      secrets.push(narrow);
    });
    expect(created).toMatchObject({ target: { type: 'apiKey', id: keyId }, change: { before: null, after: { name: 'Key maker', role: 'restricted', scopes: { apiKeys: 'write', events: 'read' } } } });
    const refused = await exactlyOne(owner.client, 'apiKey.escalationRefused', async () => {
      const { response } = await app.clientFor(narrow).POST('/v1/api-keys', { body: { name: 'Wider', role: 'admin' } });
      expect(response.status).toBe(403);
    });
    expect(refused).toMatchObject({ outcome: 'failure', actor: { type: 'apiKey', id: keyId, name: 'Key maker' }, target: { type: 'apiKey', id: null }, change: { after: { attempt: 'create', name: 'Wider', role: 'admin' } } });
    const revokeRefused = await exactlyOne(owner.client, 'apiKey.escalationRefused', async () => {
      const { response } = await app.clientFor(narrow).DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: ownerKeyId } } });
      expect(response.status).toBe(403);
    });
    expect(revokeRefused).toMatchObject({ outcome: 'failure', actor: { type: 'apiKey', id: keyId }, target: { type: 'apiKey', id: ownerKeyId }, change: { after: { attempt: 'revoke', role: 'admin' } } });
    expect((await owner.client.GET('/v1/api-keys')).data!.data.find((k) => k.keyId === ownerKeyId)!.revokedAt ?? null).toBeNull();
  });

  it('records test mode in the test environment: bank tokens issued (by mask) and test data deleted', async () => {
    const issued = await exactlyOne(owner.test, 'bankToken.issued', async () => {
      const { data } = await owner.test.POST('/v1/test/bank-tokens', { body: { holderName: 'Jane Doe', accountNumber: ACCOUNT_NUMBER } });
      secrets.push(data!.bankToken);
    });
    expect(issued).toMatchObject({ actor: { type: 'apiKey', name: 'First test admin key' }, target: { type: 'bankToken', id: null }, livemode: false, change: { after: { accountMask: '6789' } } });
    const deleted = await exactlyOne(owner.test, 'testData.deleted', () => owner.test.DELETE('/v1/test/data'));
    expect(deleted.target).toEqual({ type: 'testData', id: `${owner.accountId}.test` });
    // The audit log is no test data: what was recorded before the deletion is still there.
    expect((await audit(owner.test, { action: 'bankToken.issued' })).length).toBe(1);
    // And the live log holds none of it.
    expect(await audit(owner.client, { action: 'bankToken.issued' })).toEqual([]);
  });
});

describe('what a person does in the dashboard, and the operator', () => {
  let admin: DashboardClient;
  let api: ApiClient;
  let userId: string;

  beforeAll(async () => {
    const signedUp = await signUpWith(app.baseUrl, { name: 'Desk Lending', email: 'ana@desk.test', password: PASSWORD });
    admin = signedUp.client;
    secrets.push(signedUp.firstKey);
    api = app.clientFor(signedUp.firstKey);
  });

  it('records the sign-up, sign-ins (failed ones too) and sign-outs with the user as actor', async () => {
    const [opened] = await audit(api, { action: 'account.created' });
    expect(opened!.actor).toMatchObject({ type: 'user', name: 'ana@desk.test' });
    userId = opened!.actor.id!;
    const failed = await exactlyOne(api, 'user.signInFailed', async () => {
      const page = await new DashboardClient(app.baseUrl).submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': 'ana@desk.test', '/password': 'not the password' });
      expect(page.status).toBe(401);
      // Recorded off the answer's path (its timing must not tell which emails exist).
      await eventually(async () => (await audit(api, { action: 'user.signInFailed' })).length === 1);
    });
    expect(failed).toMatchObject({ outcome: 'failure', actor: { type: 'user', id: userId, name: 'ana@desk.test' }, target: { type: 'user', id: userId } });
    expect(failed.clientAddress).toMatch(/127\.0\.0\.1/);
    // An unknown email has no account to record in.
    await new DashboardClient(app.baseUrl).submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': 'nobody@desk.test', '/password': PASSWORD });
    const browser = new DashboardClient(app.baseUrl);
    const signedIn = await exactlyOne(api, 'user.signedIn', async () => {
      const page = await browser.submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': 'ana@desk.test', '/password': PASSWORD });
      expect(page.status).toBe(303);
    });
    expect(signedIn).toMatchObject({ outcome: 'success', actor: { type: 'user', id: userId } });
    await exactlyOne(api, 'user.signedOut', () => browser.submit('/dashboard', '/dashboard/sign-out', {}));
  });

  it('records what a user changes with the user, not a key, as actor', async () => {
    const created = await exactlyOne(api, 'apiKey.created', async () => {
      const page = await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': 'From the desk', '/role': 'member' });
      expect(page.status).toBe(200);
    });
    expect(created.actor).toEqual({ type: 'user', id: userId, name: 'ana@desk.test' });
    expect(created.userAgent).not.toBeNull();
  });

  it('records the team: invitation, acceptance, role change, removal, withdrawn invitation', async () => {
    let link = '';
    const invited = await exactlyOne(api, 'team.invitationCreated', async () => {
      const page = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'max@desk.test', '/role': 'member' });
      link = new URL(/id="invitation-link">([^<]+)</.exec(page.body)![1]!).pathname;
      secrets.push(link.split('/').at(-1)!);
    });
    expect(invited).toMatchObject({ actor: { type: 'user', id: userId }, target: { type: 'invitation' }, change: { after: { email: 'max@desk.test', role: 'member' } } });
    const max = new DashboardClient(app.baseUrl);
    const accepted = await exactlyOne(api, 'team.invitationAccepted', () => max.submit(link, link, { '/password': PASSWORD }));
    const maxId = accepted.target.id!;
    expect(accepted.actor).toEqual({ type: 'user', id: maxId, name: 'max@desk.test' });
    const role = await exactlyOne(api, 'team.roleChanged', () => admin.submit('/dashboard/team', `/dashboard/team/users/${maxId}/role`, { '/role': 'admin' }));
    expect(role).toMatchObject({ actor: { id: userId }, target: { type: 'user', id: maxId }, change: { before: { role: 'member' }, after: { role: 'admin' } } });
    await exactlyOne(api, 'team.userRemoved', () => admin.submit(`/dashboard/team/users/${maxId}/remove`, `/dashboard/team/users/${maxId}/remove`, {}));
    const again = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'kim@desk.test', '/role': 'member' });
    expect(again.status).toBe(200);
    const [open] = await audit(api, { action: 'team.invitationCreated' });
    await exactlyOne(api, 'team.invitationRevoked', () =>
      admin.submit('/dashboard/team', `/dashboard/team/invitations/${open!.target.id}/withdraw`, {}),
    );
  });

  it("records the operator's commands with the command line as actor", async () => {
    const created = await exactlyOne(owner.client, 'apiKey.created', () => runAdminCommand(app.ctx, 'key create', { account: owner.accountId, role: 'member', name: 'Operator key' }));
    expect(created).toMatchObject({ actor: { type: 'cli', id: null, name: null }, clientAddress: null, requestId: null });
    expect((await audit(owner.client, { actor: 'cli' })).map((e) => e.auditEventId)).toContain(created.auditEventId);
  });
});

describe('listAuditEvents', () => {
  it('filters by actor, action, target and time, and pages newest first', async () => {
    const all = await audit(owner.client);
    expect(all.length).toBeGreaterThan(10);
    expect(all.map((e) => e.sequence)).toEqual([...all.map((e) => e.sequence)].sort((a, b) => b - a));
    expect((await audit(owner.client, { actor: ownerKeyId })).every((e) => e.actor.id === ownerKeyId)).toBe(true);
    expect((await audit(owner.client, { action: 'webhook.deleted' })).every((e) => e.action === 'webhook.deleted')).toBe(true);
    const middle = all[Math.floor(all.length / 2)]!;
    const since = await audit(owner.client, { createdFrom: middle.createdAt });
    expect(since.every((e) => e.createdAt >= middle.createdAt)).toBe(true);
    expect(await audit(owner.client, { createdTo: '2000-01-01' })).toEqual([]);
    const { response } = await owner.client.GET('/v1/audit-events', { params: { query: { createdFrom: '2026-12-01', createdTo: '2026-11-01' } } });
    expect(response.status).toBe(400);

    const pages: AuditEvent[] = [];
    let cursor: string | null | undefined;
    do {
      const { data } = await owner.client.GET('/v1/audit-events', { params: { query: { limit: 7, ...(cursor ? { cursor } : {}) } } });
      pages.push(...data!.data);
      cursor = data!.nextCursor;
    } while (cursor);
    expect(pages.map((e) => e.auditEventId)).toEqual(all.map((e) => e.auditEventId));
  });

});

describe('exportAuditEvents', () => {
  it('streams a range as NDJSON and as CSV', async () => {
    const all = await audit(owner.client);
    const ndjson = await app.fetch('/v1/audit-events/export?format=ndjson', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    expect(ndjson.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    const lines = (await ndjson.text()).trimEnd().split('\n').map((line) => JSON.parse(line) as AuditEvent);
    expect(lines).toEqual(all);
    const csv = await app.fetch('/v1/audit-events/export?format=csv&action=webhook.created', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = (await csv.text()).split('\r\n').filter(Boolean);
    expect(rows[0]).toBe('auditEventId,createdAt,actorType,actorId,actorName,action,targetType,targetId,outcome,clientAddress,userAgent,requestId,change,previousHash,hash');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('webhook.created');
  });

});

describe('the audit log', () => {
  it('is for admin keys only', async () => {
    expect((await owner.member.GET('/v1/audit-events')).response.status).toBe(403);
    expect((await app.fetch('/v1/audit-events/export', { headers: { Authorization: `Bearer ${owner.memberKey}` } })).status).toBe(403);
  });

  it("never lists another account's entries, nor the other environment's", async () => {
    await other.client.POST('/v1/api-keys', { body: { name: 'Theirs', role: 'member' } });
    const mine = await audit(owner.client);
    const theirs = await audit(other.client);
    const ours = new Set(mine.map((e) => e.auditEventId));
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.some((e) => ours.has(e.auditEventId))).toBe(false);
    expect(JSON.stringify(theirs)).not.toContain(ownerKeyId);
    const ownWebhookTargets = mine.filter((e) => e.target.type === 'webhook').map((e) => e.target.id!);
    expect(await audit(other.client, { targetId: ownWebhookTargets[0]! })).toEqual([]);
    expect(await audit(other.client, { actor: ownerKeyId })).toEqual([]);
    const exported = await (await app.fetch(`/v1/audit-events/export?format=ndjson&actor=${ownerKeyId}`, { headers: { Authorization: `Bearer ${other.apiKey}` } })).text();
    expect(exported).toBe('');
    expect((await audit(owner.test)).every((e) => e.livemode === false)).toBe(true);
    expect(mine.every((e) => e.livemode === true)).toBe(true);
  });

  it('holds no secret: API keys, webhook secrets, passwords, bank tokens, invitation links and account numbers never appear', async () => {
    const accounts = [owner, other];
    let text = '';
    for (const account of accounts) {
      for (const key of [account.apiKey, account.testKey]) {
        text += await (await app.fetch('/v1/audit-events/export?format=ndjson', { headers: { Authorization: `Bearer ${key}` } })).text();
        text += await (await app.fetch('/v1/audit-events/export?format=csv', { headers: { Authorization: `Bearer ${key}` } })).text();
      }
    }
    const rows = await app.ctx.store.read((db) => db.all<Record<string, unknown>>('SELECT * FROM audit_events'));
    text += JSON.stringify(rows);
    expect(rows.length).toBeGreaterThan(30);
    for (const secret of secrets) expect(text, `a secret (${secret.slice(0, 12)}…) in the audit log`).not.toContain(secret);
    expect(text).not.toMatch(/mos_(live|test)_[0-9A-Za-z]{20,}/);
    expect(text).not.toMatch(/whsec_[0-9A-Za-z+/=]{10,}/);
    expect(text).not.toMatch(/bnk_tok_/);
    expect(text).not.toMatch(/\$scrypt\$/);
    // Two-step verification: no otpauth URI, nor a member holding a TOTP secret or recovery codes
    // (test/api/auditMfa.test.ts scans for the very secrets and codes an enrolment showed).
    expect(text).not.toMatch(/otpauth:|totp_secret|code_hash/i);
  });
});
