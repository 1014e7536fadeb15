/**
 * The CRM sync recipe (examples/crm-sync/) against the real service in test mode and a fake CRM
 * HTTP API on 127.0.0.1: deliveries keep the CRM's contacts and deals current; while the sync is
 * down, deliveries fail, and on its return the events feed catches it up; handling twice changes nothing.
 * The recipe runs on a restricted key that reads applications and the events feed, made through the API.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrmSync } from '../../examples/crm-sync/sync.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let lender: TestAccount;
let dispatcher: WebhookDispatcher;
let crm: http.Server;
let crmUrl: string;
let stateDir: string;
const contacts = new Map<string, Record<string, unknown>>();
const deals = new Map<string, Record<string, unknown>>();
let crmWrites = 0;
let recipeKey: string;

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
  lender = await app.newAccount('Harbor Lending');
  dispatcher = new WebhookDispatcher(app.ctx).start();
  // The least the recipe needs: it reads applications and the events feed, nothing else.
  const { data: key, response } = await lender.test.POST('/v1/api-keys', { body: { name: 'CRM sync', scopes: { applications: 'read', events: 'read' } } });
  expect(response.status).toBe(201);
  expect(key).toMatchObject({ role: 'restricted', scopes: { applications: 'read', events: 'read' } });
  recipeKey = key!.apiKey;
  stateDir = await mkdtemp(path.join(tmpdir(), 'crm-sync-'));
  // The fake CRM: PUT /contacts/{email} and PUT /deals/{mortgageId} upsert JSON records.
  crm = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const match = /^\/(contacts|deals)\/([^/]+)$/.exec(req.url ?? '');
      if (req.method !== 'PUT' || !match) return void res.writeHead(404).end();
      const store = match[1] === 'contacts' ? contacts : deals;
      store.set(decodeURIComponent(match[2]!), JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      crmWrites++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => crm.listen(0, '127.0.0.1', resolve));
  crmUrl = `http://127.0.0.1:${(crm.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await new Promise((resolve) => crm.close(resolve));
  await app?.close();
  await rm(stateDir, { recursive: true, force: true });
});

const APPLICANT = { amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore: 760 };

async function approvedApplication(name: string, email: string): Promise<string> {
  const { data } = await lender.test.POST('/v1/applications', { body: { applicant: { ...APPLICANT, name, email }, term: 30, propertyValue: 400000 } });
  const { data: submitted } = await lender.test.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
  expect(submitted!.status).toBe('approved');
  return data!.mortgageId;
}

describe('the CRM sync recipe', () => {
  it('runs on a restricted test key that may read applications and events and write nothing', async () => {
    expect(recipeKey.startsWith('mos_test_')).toBe(true);
    const recipe = app.clientFor(recipeKey);
    expect((await recipe.GET('/v1/applications')).response.status).toBe(200);
    expect((await recipe.GET('/v1/events')).response.status).toBe(200);
    const write = await recipe.POST('/v1/applications', { body: { applicant: { name: 'Nobody', amount: 1000 }, term: 30 } });
    expect(write.error).toMatchObject({ code: 'scope_missing', requiredScope: 'applications:write' });
    const hooks = await recipe.GET('/v1/webhooks');
    expect(hooks.error).toMatchObject({ code: 'scope_missing', requiredScope: 'webhooks:read' });
  });

  it('follows deliveries, catches up from the events feed after downtime, and is idempotent', async () => {
    const listening = (server: http.Server, port = 0) => new Promise<number>((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
    const statePath = path.join(stateDir, 'state.json');
    // The sync follows what its endpoint chose (application.approved), from deliveries and from the feed.
    const options = { baseUrl: app.baseUrl, apiKey: recipeKey, crmUrl, statePath, events: ['application.approved'] };

    // The endpoint's secret is shown when it is registered, so the port is taken first.
    const first = createCrmSync({ ...options, webhookSecret: 'whsec_' + Buffer.alloc(32).toString('base64') });
    const port = await listening(first.server);
    await new Promise((resolve) => first.server.close(resolve));
    const { data: hook } = await lender.test.POST('/v1/webhooks', { body: { url: `http://127.0.0.1:${port}/hooks`, events: ['application.approved'] } });
    const running = createCrmSync({ ...options, webhookSecret: hook!.secret });
    expect(await running.catchUp()).toBe(0);
    await listening(running.server, port);

    const a = await approvedApplication('Avery Approved', 'avery@example.test');
    await eventually(() => deals.get(a)?.stage === 'approved', 10_000, 25);
    expect(deals.get(a)).toEqual({ mortgageId: a, contactEmail: 'avery@example.test', amount: 300000, term: 30, stage: 'approved' });
    expect(contacts.get('avery@example.test')).toEqual({ email: 'avery@example.test', name: 'Avery Approved' });

    // Down: the delivery of B's approval fails (the service will retry it later).
    await new Promise((resolve) => running.server.close(resolve));
    const b = await approvedApplication('Blake Borrower', 'blake@example.test');
    await eventually(async () => {
      const row = await app.ctx.store.read((db) => db.get<{ attempts: number }>('SELECT attempts FROM webhook_deliveries WHERE account_id = ? AND state = ? AND attempts > 0', [`${lender.accountId}.test`, 'pending']));
      return row !== undefined;
    }, 10_000, 25);
    expect(deals.has(b)).toBe(false);

    // Back: a fresh process with the same state file reads the feed from its last event.
    // The feed holds every application event (submitted, approved, conditions…); catch-up reads
    // only the kinds the endpoint chose, so what it missed is B's approval.
    const feed = (await lender.test.GET('/v1/events', { params: { query: { limit: 100 } } })).data!.data;
    const of = (mortgageId: string) => feed.filter((e) => (e.payload as { mortgageId?: string }).mortgageId === mortgageId);
    expect(of(b).map((e) => e.event)).toContain('application.approved');
    const back = createCrmSync({ ...options, webhookSecret: hook!.secret });
    expect(await back.catchUp()).toBe(of(b).filter((e) => e.event === 'application.approved').length);
    expect(deals.get(b)).toMatchObject({ stage: 'approved', contactEmail: 'blake@example.test' });
    expect(contacts.get('blake@example.test')).toEqual({ email: 'blake@example.test', name: 'Blake Borrower' });
    expect(await back.catchUp()).toBe(0);

    // From scratch (a lost state file): the whole feed again, and the CRM ends the same.
    const snapshot = [structuredClone([...contacts]), structuredClone([...deals])];
    const writes = crmWrites;
    const fresh = createCrmSync({ ...options, statePath: path.join(stateDir, 'fresh.json'), webhookSecret: hook!.secret });
    expect(await fresh.catchUp()).toBe(feed.filter((e) => e.event === 'application.approved').length);
    expect(crmWrites).toBeGreaterThan(writes);
    expect([[...contacts], [...deals]]).toEqual(snapshot);
  });
});
