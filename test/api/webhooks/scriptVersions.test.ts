/**
 * The partner kit in API versions: webhooks:send renders its sample in --version, webhooks:listen
 * checks each payload against --version's events, webhooks:forward delivers in --version (default
 * the account's pinned one) and skips the kinds that version lacks. The interface document's two
 * events are the same bytes in every version.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, FIRST_VERSION, VERSIONS } from '../../../src/domain/versions/registry.ts';
import { newWebhookSecret } from '../../../src/events/signing.ts';
import { setAccountApiVersion } from '../../../src/store/accounts.ts';
import { PROJECT_ROOT } from '../../helpers/server.ts';
import { startTestApp } from '../../helpers/testApp.ts';
import { specWebhooks, startReceiver } from '../../helpers/webhookReceiver.ts';
import { forwardTool, listen, send, stopChildren, uploadDocument, withdraw } from '../../helpers/webhookScripts.ts';

afterAll(stopChildren);

describe('webhooks:send in a version', () => {
  it("sends application.approved and document.uploaded as the same bytes in every version: the spec's sample", async () => {
    const receiver = await startReceiver();
    try {
      const secret = newWebhookSecret();
      const cases = VERSIONS.flatMap((version) => ['application.approved', 'document.uploaded'].map((event) => ({ version, event })));
      for (const { version, event } of cases) {
        const sent = await send(['--url', receiver.url('/hooks'), '--secret', secret, '--event', event, '--version', version]);
        expect(sent.output, `${event} in ${version}`).toMatchObject({ event, status: 200 });
      }
      const deliveries = await receiver.waitFor(cases.length);
      deliveries.forEach((d, i) => expect(d.body, `${cases[i]!.event} in ${cases[i]!.version}`).toBe(JSON.stringify(specWebhooks[cases[i]!.event]!.example)));
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('refuses a --version that is not one of the versions', async () => {
    const refused = await send(['--url', 'http://127.0.0.1:9/hooks', '--secret', newWebhookSecret(), '--version', '2026-11-25']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--version must be one of ${VERSIONS.join(', ')}`);
  }, 30_000);
});

describe('webhooks:listen in a version', () => {
  it("accepts as its version's an application.approved, and flags a rate lock event the first version does not have", async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret, '--version', FIRST_VERSION]);
    expect(listener.lines[0]).toMatchObject({ apiVersion: FIRST_VERSION });
    const url = `http://127.0.0.1:${listener.port}/hooks`;
    expect((await send(['--url', url, '--secret', secret, '--event', 'application.approved', '--version', FIRST_VERSION])).code).toBe(0);
    expect((await send(['--url', url, '--secret', secret, '--event', 'rate_lock.created'])).code).toBe(0);
    const [, approved, lock] = await listener.waitForLines(3);
    expect(approved).toMatchObject({ verified: true, matchesSpec: true, payload: { event: 'application.approved' } });
    expect(lock).toMatchObject({ verified: true, matchesSpec: false, payload: { event: 'rate_lock.created' } });
    expect(lock!.specProblem).toContain(`API version ${FIRST_VERSION}'s events, application.approved, document.uploaded`);
  }, 60_000);

  it('finds the same rate lock event as the current version has it without --version', async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret]);
    expect(listener.lines[0]).toMatchObject({ apiVersion: CURRENT_VERSION });
    expect((await send(['--url', `http://127.0.0.1:${listener.port}/`, '--secret', secret, '--event', 'rate_lock.created'])).code).toBe(0);
    const [, lock] = await listener.waitForLines(2);
    expect(lock).toMatchObject({ verified: true, matchesSpec: true });
  }, 60_000);

  it('refuses a --version that is not one of the versions', async () => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'webhooks-listen.ts'), '--port', '0', '--secret', newWebhookSecret(), '--version', 'latest'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
    expect(stderr).toContain('--version must be one of');
  }, 30_000);
});

describe('webhooks:forward in a version', () => {
  it("delivers in the account's pinned version by default, skipping the kinds it lacks; --version chooses another", async () => {
    const app = await startTestApp();
    const receiver = await startReceiver();
    try {
      const account = await app.newAccount('Early Forwarding');
      await app.ctx.store.transaction((tx) => setAccountApiVersion(tx, account.accountId, { apiVersion: FIRST_VERSION, previousApiVersion: null, changedAt: null }));
      app.ctx.authenticate.apiKeyRevoked();
      const secret = newWebhookSecret();
      const pinned = forwardTool(['--api-key', account.memberKey, '--to', receiver.url('/pinned'), '--base-url', app.baseUrl, '--secret', secret]);
      const current = forwardTool(['--api-key', account.memberKey, '--to', receiver.url('/current'), '--base-url', app.baseUrl, '--secret', secret, '--version', CURRENT_VERSION]);
      expect((await pinned.waitForLines(1))[0]).toMatchObject({ msg: 'forwarding', apiVersion: FIRST_VERSION });
      expect((await current.waitForLines(1))[0]).toMatchObject({ msg: 'forwarding', apiVersion: CURRENT_VERSION });

      await withdraw(account); // application.withdrawn: not in the first version
      await uploadDocument(app, account); // document.uploaded: in every version, the same bytes
      const [, skipped, uploaded] = await pinned.waitForLines(3);
      expect(skipped).toMatchObject({ event: 'application.withdrawn', skipped: `API version ${FIRST_VERSION} has no application.withdrawn event` });
      expect(uploaded).toMatchObject({ event: 'document.uploaded', status: 200 });
      const [, withdrawn, uploadedToo] = await current.waitForLines(3);
      expect([withdrawn, uploadedToo].map((line) => [line!.event, line!.status])).toEqual([
        ['application.withdrawn', 200],
        ['document.uploaded', 200],
      ]);

      const deliveries = await receiver.waitFor(3);
      expect(deliveries.filter((d) => d.path === '/pinned')).toHaveLength(1);
      const { data: feed } = await account.client.GET('/v1/events', { params: { query: { limit: 1 } }, headers: { 'Mos-Version': CURRENT_VERSION } });
      const bodies = deliveries.filter((d) => (JSON.parse(d.body) as { event: string }).event === 'document.uploaded').map((d) => d.body);
      expect(bodies).toEqual([JSON.stringify(feed!.data[0]!.payload), JSON.stringify(feed!.data[0]!.payload)]);
      for (const d of deliveries) expect(new Webhook(secret).verify(d.body, d.headers as Record<string, string>)).toBeTruthy();
    } finally {
      await receiver.close();
      await app.close();
    }
  }, 90_000);

  it('refuses a --version that is not one of the versions', async () => {
    const refused = forwardTool(['--api-key', 'x', '--to', 'http://127.0.0.1:9/hooks', '--version', '2099-01-01']);
    expect(await refused.exited()).toBe(2);
    expect(refused.stderr()).toContain(`--version must be one of ${VERSIONS.join(', ')}`);
  }, 30_000);
});
